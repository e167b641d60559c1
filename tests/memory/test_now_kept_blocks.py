"""NOW grown on top while the runner keeps its newest blocks (rules 6): the new text is found without reading
the blocks kept, and anything else that changed below the top is not taken for a trim."""
from __future__ import annotations

from gitmem.memory import now, volumes

HEAD = b"# NOW\n<!--\nnewest on top\n-->\n"


def _block(cycle: int, did: str = "d") -> bytes:
    return f"\n## 2026-11-{cycle:02d} 09:00 UTC · cycle {cycle}\n- Did: {did}\n- Human: nothing\n- Next: n\n".encode()


def _now(*cycles: int) -> bytes:
    return HEAD + b"".join(_block(n) for n in cycles)


def test_a_block_on_top_with_the_oldest_blocks_gone_is_found_without_reading_them() -> None:
    before = _now(5, 4, 3, 2, 1)
    after = volumes.keep_newest_blocks(now.prepend_block(before.decode(), now.parse(_now(6).decode()).blocks[0])
                                       .encode(), 3)
    at = now.old_blocks_at(before, after)
    assert at is not None and after[at:].startswith(b"## 2026-11-05") and after[at:].count(b"## ") == 2
    assert now.grown_on_top(before.decode(), after.decode()) == after[:at].decode()
    grown = HEAD + _block(6) + before[len(HEAD):]
    assert now.old_blocks_at(before, grown) == len(HEAD + _block(6)) + 1             # grew only


def test_an_old_block_changed_or_cut_in_its_middle_is_no_trim() -> None:
    before = _now(3, 2, 1)
    edited = HEAD + _block(4) + _block(3) + _block(2, did="rewritten")
    assert now.old_blocks_at(before, edited) is None
    mid_block = HEAD + _block(4) + _block(3)[:-len(b"- Next: n\n")]
    assert now.old_blocks_at(before, mid_block) is None
    assert now.old_blocks_at(HEAD, HEAD + _block(1)) is None              # no old block to keep
