"""Reading sealed history (rules 6): a volume's entries taken as readers take them, amendments included, so that
the volumes by number and then LOG.md read as the unsealed LOG did, however the seals cut it."""
from __future__ import annotations

import pytest

from gitmem.memory import log, volumes
from gitmem.memory.lines import strip_trailing_blank

HEAD = b"# LOG\n<!--\nAppend-only: one entry per cycle.\nNever edit old entries.\nMore words.\n-->\n"


def _entry(cycle: int, outcome: str = "built", amends: int | None = None) -> bytes:
    marker = f"amends line {amends} · " if amends is not None else ""
    return (f"\n## 2026-11-{1 + cycle // 4:02d} {cycle % 4 + 9:02d}:00 UTC · {marker}cycle {cycle} · {outcome}\n"
            f"- Task: t{cycle}\n- Result: r{cycle}\n").encode()


def _amended_log(count: int, amended: tuple[int, ...]) -> bytes:
    """`count` cycles; after each cycle in `amended`, the next cycle is an amendment of it (as no-build)."""
    data, cycle = HEAD, 1
    while cycle <= count:
        data += _entry(cycle)
        if cycle in amended:
            line = data.decode().splitlines().index(_entry(cycle).decode().splitlines()[1]) + 1
            cycle += 1
            data += _entry(cycle, "no-build", amends=line)
        cycle += 1
    return data


def _read(entries: tuple[log.LogEntry, ...]) -> list[tuple[int | None, str | None, tuple[str, ...]]]:
    return [(e.cycle, e.outcome, strip_trailing_blank(e.body)) for e in entries]     # a volume ends at a blank


def _history(data: bytes, per_volume: int, seal_at: int, rounds: int) -> tuple[list[bytes], bytes]:
    """The volumes and LOG.md after `rounds` seals, one more cycle appended before each later seal."""
    sealed: list[bytes] = []
    for _ in range(rounds):
        seal = volumes.plan(data, "LOG.md", len(sealed) + 1, per_volume=per_volume, seal_at=seal_at)
        if seal is not None:
            sealed += [content for _, content in seal.volumes]
            data = seal.live
    return sealed, data


@pytest.mark.parametrize(("per_volume", "seal_at", "rounds"), [(3, 4, 1), (3, 6, 1), (2, 3, 1), (4, 5, 3)])
@pytest.mark.parametrize("amended", [(2,), (5,), (9,), (2, 6, 12)])
def test_volumes_then_log_read_as_the_unsealed_log(per_volume: int, seal_at: int, rounds: int,
                                                   amended: tuple[int, ...]) -> None:
    data = _amended_log(16, amended)
    sealed, live = _history(data, per_volume, seal_at, rounds)
    assert sealed
    read: list[log.LogEntry] = []
    for content in sealed:
        read += volumes.volume_entries(content)        # a volume reads on its own
    read += log.live(log.parse(live.decode()).entries)
    assert _read(tuple(read)) == _read(log.live(log.parse(data.decode()).entries))
    assert volumes.unseal(live, "LOG.md", list(enumerate(sealed, 1))) == data


def test_a_volume_body_is_what_left_log_md() -> None:
    data = _amended_log(6, ())
    seal = volumes.plan(data, "LOG.md", 1, per_volume=2, seal_at=4)
    assert seal is not None
    first = data.index(b"\n## ") + 1
    assert data[:first] + b"".join(volumes.body(c) for _, c in seal.volumes) + seal.live[first:] == data
