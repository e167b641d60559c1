"""A cycle and a close parse each memory file whole at most once per process, whatever history holds
(issue 31): the steps share one parse of a text, and what a cycle or close checked before committing is not
parsed again."""
from __future__ import annotations

import sys
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from types import FrameType
from typing import Any

import pytest

from gitmem.agents.command import CommandBackend
from gitmem.close.run import run_close
from gitmem.cycle.runner import run_cycle
from gitmem.memory import decisions, lessons, now, rules
from gitmem.workspace import Workspace
from tests.support.helpers import GitRepo
from tests.support.synth import cached_repo
from tests.support.synth_copy import noop_agent_copy

PARSERS = {"now": now.parse, "decisions": decisions.parse, "lessons": lessons.parse, "rules": rules.parse}


@contextmanager
def whole_parses(root: Path) -> Iterator[Counter[str]]:
    """Counts, per file, the parser runs (not the shared answers) over the file's whole text, watched with
    the interpreter's own profiler hook while the block runs."""
    codes = {getattr(parse, "__wrapped__", parse).__code__: role for role, parse in PARSERS.items()}
    sizes = {role: len((root / f"{role.upper()}.md").read_text(encoding="utf-8")) for role in PARSERS}
    counts: Counter[str] = Counter()

    def watch(frame: FrameType, event: str, arg: Any) -> None:
        role = codes.get(frame.f_code) if event == "call" else None
        if role is not None and frame.f_locals.get("max_blocks") is None and \
                len(frame.f_locals.get("text", "")) >= sizes[role]:
            counts[role] += 1

    previous: Callable[..., Any] | None = sys.getprofile()
    sys.setprofile(watch)
    try:
        yield counts
    finally:
        sys.setprofile(previous)


@pytest.fixture
def synthetic(tmp_path: Path, git_env: None) -> Path:
    """The 1x synthetic repository (a real agent's size), with a no-op command agent and one cycle run."""
    root = noop_agent_copy(cached_repo(1.0), tmp_path / "repo")      # the one 1x build the suite shares
    ws = Workspace.open(root)
    assert run_cycle(ws, CommandBackend(ws.config)).commit
    return root


def test_a_scheduled_cycle_parses_each_memory_file_whole_at_most_once(synthetic: Path) -> None:
    ws = Workspace.open(synthetic)
    with whole_parses(synthetic) as counts:
        report = run_cycle(ws, CommandBackend(ws.config))
    assert report.commit and report.exit_code == 0
    assert all(n <= 1 for n in counts.values()), counts
    # NOW grows every cycle; a cycle reads its top block and what it wrote above it, never the whole file.
    assert counts["now"] == 0, counts


def test_a_close_parses_each_memory_file_whole_at_most_once(synthetic: Path) -> None:
    ws = Workspace.open(synthetic)
    with whole_parses(synthetic) as counts:
        result = run_close(ws)
    assert result.status == "closed" and result.commit
    assert all(n <= 1 for n in counts.values()), counts
    # The close writes NOW's plan block on top, or nothing: its checks parse no old block (judged unchanged
    # by its bytes where no blob id is known), and its day is read from the top.
    assert counts["now"] == 0, counts


def test_memory_broken_by_hand_after_a_cycle_still_stops_the_next_one(memrepo: GitRepo) -> None:
    """The preflight verifies the commits since the last cycle instead of parsing every file whole: a human
    commit that skipped the hooks and broke an old NOW block is found there, as it was by the whole check."""
    from gitmem.cycle.runner import CycleRefused
    from tests.support.cycle_support import WritingBackend, built

    assert run_cycle(memrepo.ws(), WritingBackend(built("first"))).commit
    memrepo.commit_files({"NOW.md": memrepo.read("NOW.md") + "\n## yesterday-ish · cycle 1\n- Did: x\n"})
    with pytest.raises(CycleRefused, match=r"NOW.md:\d+: GM102"):
        run_cycle(memrepo.ws(), WritingBackend(built("second")))
