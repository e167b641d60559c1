"""LOG's sealed volumes (rules 6): what a seal moves, and the proof `check` draws from the change alone."""
from __future__ import annotations

from gitmem.memory import log, volumes

HEAD = b"# LOG\n<!--\nAppend-only.\n-->\n"


def _entry(cycle: int, extra: str = "") -> bytes:
    return (f"\n## 2026-11-{1 + cycle % 28:02d} 09:00 UTC · cycle {cycle} · built\n- Task: t{cycle}\n"
            f"- Result: r{cycle}{extra}\n").encode()


def _log(count: int) -> bytes:
    return HEAD + b"".join(_entry(n) for n in range(1, count + 1))


def test_nothing_is_sealed_before_the_log_holds_seal_at_entries() -> None:
    assert volumes.plan(_log(5), "LOG.md", 1, per_volume=2, seal_at=6) is None


def test_a_seal_moves_the_oldest_entries_byte_for_byte_and_history_reads_the_same() -> None:
    data = _log(7)
    seal = volumes.plan(data, "LOG.md", 1, per_volume=2, seal_at=4)
    assert seal is not None
    assert [n for n, _ in seal.volumes] == [1, 2]
    bodies = b"".join(content[len(volumes.title("LOG.md", n)):] for n, content in seal.volumes)
    first = data.index(b"## ")
    assert data[:first] + bodies + seal.live[first:] == data
    assert seal.live.startswith(data[:first]) and seal.live.count(b"\n## ") == 3
    assert [e.cycle for e in log.parse(seal.live.decode()).entries] == [5, 6, 7]
    assert volumes.sealed_from(data, "LOG.md", seal.volumes) == seal.live


def test_an_amendment_that_stays_keeps_its_entry_and_names_the_line_it_moved_to() -> None:
    data = _log(5)
    line = data.decode().splitlines().index("## 2026-11-04 09:00 UTC · cycle 3 · built") + 1
    data += f"\n## 2026-11-07 09:00 UTC · amends line {line} · cycle 3 · built\n- Task: again\n".encode()
    seal = volumes.plan(data, "LOG.md", 1, per_volume=4, seal_at=4)
    assert seal is not None
    live = seal.live.decode()
    assert "cycle 3 · built\n- Task: t3" in live         # the amended entry stayed with its amendment
    new_line = live.splitlines().index("## 2026-11-04 09:00 UTC · cycle 3 · built") + 1
    assert f"amends line {new_line} · cycle 3" in live
    assert volumes.sealed_from(data, "LOG.md", seal.volumes) == seal.live


def test_the_proof_refuses_volumes_that_do_not_hold_exactly_the_entries_that_left() -> None:
    data = _log(5)
    seal = volumes.plan(data, "LOG.md", 1, per_volume=2, seal_at=4)
    assert seal is not None
    (number, content), = seal.volumes
    assert volumes.sealed_from(data, "LOG.md", [(number, content.replace(b"r1", b"R1"))]) is None
    assert volumes.sealed_from(data, "LOG.md", [(2, content)]) is None                # another number's title
    half = content[:content.index(b"\n## ", len(volumes.title("LOG.md", 1)) + 1) + 1] + b"## x"
    assert volumes.sealed_from(data, "LOG.md", [(number, half)]) is None             # not whole entries
    every = volumes.title("LOG.md", 1) + data[data.index(b"## "):]
    assert volumes.sealed_from(data, "LOG.md", [(1, every)]) is None                 # LOG.md keeps one entry


def test_volume_paths_have_one_spelling_per_number() -> None:
    assert volumes.volume_path("LOG.md", 3) == "history/LOG-0003.md"
    assert volumes.volume_path("memory/LOG.md", 12345) == "memory/history/LOG-12345.md"
    assert volumes.volume_number("LOG.md", "history/LOG-0003.md") == 3
    for other in ("history/LOG-3.md", "history/LOG-00003.md", "history/LOG-0000.md", "LOG-0003.md",
                  "x/history/LOG-0003.md", "history/NOW-0003.md"):
        assert volumes.volume_number("LOG.md", other) is None
    assert volumes.numbered("LOG.md", ["history/LOG-0002.md", "README.md", "history/LOG-0001.md"]) == [
        (1, "history/LOG-0001.md"), (2, "history/LOG-0002.md")]


def test_now_keeps_its_newest_blocks() -> None:
    data = b"# NOW\n" + b"".join(f"\n## 2026-11-0{9 - n} 09:00 UTC · cycle {9 - n}\n- Did: d\n".encode()
                                 for n in range(5))
    kept = volumes.keep_newest_blocks(data, 2)
    assert kept == data[:data.index(b"\n## 2026-11-07")]
    assert volumes.keep_newest_blocks(data, 5) == data


def _amended(count: int, *cycles: int) -> bytes:
    """A LOG of `count` entries and, after them, an amendment of each of `cycles` naming its heading's line."""
    data = _log(count)
    lines = data.decode().splitlines()
    for n, cycle in enumerate(cycles):
        line = next(i for i, text in enumerate(lines, 1) if text.endswith(f"· cycle {cycle} · built"))
        data += (f"\n## 2026-11-28 1{n}:00 UTC · amends line {line} · cycle {count + n + 1} · built\n"
                 f"- Task: again\n- Result: fixed\n").encode()
    return data


def test_unsealing_a_seal_gives_back_the_log_it_was_cut_from_amendments_and_all() -> None:
    cases = [(_log(9), 2, 4), (_amended(9, 7), 2, 4), (_amended(9, 2, 8), 3, 4), (_amended(12, 6, 11), 2, 5)]
    for data, per_volume, seal_at in cases:
        seal = volumes.plan(data, "LOG.md", 3, per_volume=per_volume, seal_at=seal_at)
        assert seal is not None and seal.live != data
        assert volumes.unseal(seal.live, "LOG.md", seal.volumes) == data
        # One volume back: what the LOG read between two seals, its amendments naming the lines of that time.
        between = volumes.sealed_from(data, "LOG.md", seal.volumes[:1])
        assert between is not None
        assert volumes.unseal(seal.live, "LOG.md", seal.volumes[1:]) == between
        assert volumes.unseal(between, "LOG.md", seal.volumes[:1]) == data


def test_unsealing_refuses_a_file_that_is_no_volume_of_its_number() -> None:
    seal = volumes.plan(_log(6), "LOG.md", 1, per_volume=2, seal_at=4)
    assert seal is not None
    assert volumes.unseal(seal.live, "LOG.md", [(2, seal.volumes[0][1])]) is None
    assert volumes.unseal(seal.live, "LOG.md", []) == seal.live


def test_a_sealed_sides_new_cycles_are_found_from_log_md_alone() -> None:
    """The merge driver and the renumbering see LOG.md alone: a side that sealed is no append of the base, and its
    new cycles still move after the other side's (gitmem.memory.positions)."""
    from gitmem.memory import positions

    base = _amended(9, 7)
    side = base + _entry(11) + _entry(12)
    seal = volumes.plan(side, "LOG.md", 1, per_volume=4, seal_at=9)
    assert seal is not None and not seal.live.startswith(base)
    assert positions.new_log_cycles(base, seal.live) == [11, 12]
    shown = volumes.seal_shown(base, seal.live)
    assert shown is not None and seal.live.startswith(shown[1])
    assert volumes.seal_shown(base, base.replace(b"- Task: t2", b"- Task: T2") + _entry(11)) is None   # an edit
