"""LOG writes append bytes and read only LOG's end, so their cost does not grow with the history."""
from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from gitmem.config import Config
from gitmem.memory import log
from gitmem.memory_writer import TAIL_BYTES, MemoryWriter, WriteRefused
from gitmem.workspace import Workspace

START = datetime(2026, 1, 1, tzinfo=UTC)


def entry_text(cycle: int) -> str:
    when = (START + timedelta(hours=3 * cycle)).strftime("%Y-%m-%d %H:%M")
    return (f"\n## {when} UTC · cycle {cycle} · built\n- Task: task {cycle}\n- Tried: " + "x" * 80
            + f"\n- Result: result {cycle}\n")


def big_log(tmp_path, cycles: int, closes_after: int = 0) -> MemoryWriter:
    text = "# LOG\n" + "".join(entry_text(n) for n in range(1, cycles + 1))
    last = START + timedelta(hours=3 * cycles)
    for n in range(closes_after):
        when = (last + timedelta(minutes=n + 1)).strftime("%Y-%m-%d %H:%M")
        text += f"\n## {when} UTC · close\n- Day: {n}\n- Cycles: " + "y" * 200 + "\n"
    (tmp_path / "LOG.md").write_text(text, encoding="utf-8")
    return MemoryWriter(Workspace.at(tmp_path, Config()), clock=lambda: last + timedelta(days=1))


def test_a_large_log_grows_by_exactly_the_new_entry(tmp_path):
    memory = big_log(tmp_path, 2000)
    before = (tmp_path / "LOG.md").read_bytes()
    assert len(before) > 4 * TAIL_BYTES
    entry = memory.add_log_entry(task="next", outcome="built", result="done")
    after = (tmp_path / "LOG.md").read_bytes()
    assert entry.cycle == 2001
    assert after.startswith(before)
    assert after[len(before):].decode() == f"\n{entry.render()}\n"


def test_a_refused_append_names_the_real_line_and_leaves_the_file_as_it_was(tmp_path):
    memory = big_log(tmp_path, 2000)
    before = (tmp_path / "LOG.md").read_bytes()
    with pytest.raises(WriteRefused) as refused:       # a cycle number already used: GM303
        memory.add_log_entry(task="late", outcome="built", result="done", cycle=1)
    assert (tmp_path / "LOG.md").read_bytes() == before
    [violation] = refused.value.violations
    assert violation.code == "GM303"
    assert violation.line == before.count(b"\n") + 2  # the new heading, after the blank separator line


def test_numbering_reads_further_back_when_the_end_holds_only_closes(tmp_path):
    memory = big_log(tmp_path, 50, closes_after=400)
    tail = (tmp_path / "LOG.md").read_bytes()[-TAIL_BYTES:]
    assert b"cycle 50" not in tail                    # the last cycle lies beyond the first read
    assert memory.workspace.last_log_cycle() == 50
    assert memory.add_log_entry(task="t", outcome="no-build", result="blocked").cycle == 51
    assert log.parse((tmp_path / "LOG.md").read_text()).entries[-1].cycle == 51
