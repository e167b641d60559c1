"""History-backed memory at 1x, 10x and 100x: which confirmations count, and which answers are new.

Two questions the close and every cycle ask of git history (issue 10):
- `Backing`: for each Confirmed line of the lessons, the commit that added it, and whether that commit also
  logged the cycle it cites. Measured for every line of every lesson (the worst case), and for what the close
  asks: the open lessons with enough lines. One walk over the commits that changed LESSONS (blob ids only), stopping
  when every line is found; LOG blobs are never read while LOG stays append-only (a prefix hash proves it). Measured
  cold (no cache) and warm (verdicts cached in .git/gitmem by commit).
- `resolved_before`: the decisions resolved in the tree the previous cycle started from.

The naive baseline answers the same confirmation question by reading LESSONS and LOG whole at every commit of
history, as a straightforward implementation would; it runs at 1x only (at 100x it would read 100,000 commits'
75 MB LOG).

Run:  GITMEM_BENCH_SCALES=1,10,100 .venv/bin/pytest benchmarks/bench_history.py --benchmark-only -s
"""
from __future__ import annotations

import shutil
import time
from pathlib import Path

import pygit2
import pytest

from benchmarks.conftest import SCALES, scale_id, working_copy
from gitmem.close import gates
from gitmem.close.backing import Backing
from gitmem.close.day import cycle_numbers
from gitmem.cycle.baseline import resolved_before
from gitmem.memory import lessons
from gitmem.memory.decoding import decode
from gitmem.workspace import Workspace
from gitmem.workspace.statedir import CONFIRMATIONS_CACHE
from tests.support.synth import cached_repo


@pytest.fixture(scope="module")
def copies(tmp_path_factory: pytest.TempPathFactory) -> dict[float, Path]:
    return {scale: working_copy(cached_repo(scale), tmp_path_factory.mktemp(scale_id(scale)) / "repo")
            for scale in SCALES}


def every_confirmation(ws: Workspace) -> list[tuple[lessons.Lesson, object]]:
    doc = lessons.parse(ws.read("lessons"))
    return [(lesson, line) for lesson in doc.lessons for line, _ in lesson.confirmations]


def backing_cold(root: Path) -> int:
    ws = Workspace.at(root)
    if ws.state_dir is not None:
        shutil.rmtree(ws.state_dir / CONFIRMATIONS_CACHE, ignore_errors=True)
        (ws.state_dir / CONFIRMATIONS_CACHE).unlink(missing_ok=True)
    return backing_warm(root)


def backing_warm(root: Path) -> int:
    ws = Workspace.at(root)
    backing = Backing(ws)
    asked = every_confirmation(ws)
    backing.resolve(asked)                                            # type: ignore[arg-type]
    return sum(backing(lesson, line).ok for lesson, line in asked)     # type: ignore[arg-type]


def close_question(root: Path) -> int:
    """What the close asks: the open lessons with enough Confirmed lines, judged in one walk (cache kept)."""
    ws = Workspace.at(root)
    found = gates.eligible(lessons.parse(ws.read("lessons")), Backing(ws), 2)
    return len(found.candidates)


def naive_backing(root: Path) -> int:
    """Every commit, oldest first: parse LESSONS and LOG whole; a line counts when it first appears in a
    commit whose LOG gained the cited cycle."""
    repo = pygit2.Repository(str(root))
    commits = list(repo.walk(repo.head.target, pygit2.enums.SortMode.TOPOLOGICAL | pygit2.enums.SortMode.REVERSE))
    seen: set[tuple[str, str]] = set()
    counted = 0
    previous_cycles: set[int] = set()

    def text_at(commit: pygit2.Commit, name: str) -> str:
        try:
            return decode(commit.tree[name].data).text
        except KeyError:
            return ""

    for commit in commits:
        logged = cycle_numbers(text_at(commit, "LOG.md"))
        for lesson in lessons.parse(text_at(commit, "LESSONS.md")).lessons:
            for line, event in lesson.confirmations:
                key = (lesson.id, line.value)
                if key in seen:
                    continue
                seen.add(key)
                counted += bool(event is not None and event.cycle in logged - previous_cycles)
        previous_cycles = logged
    return counted


@pytest.mark.parametrize("scale", SCALES, ids=scale_id)
def test_backing_cold(benchmark, copies: dict[float, Path], scale: float) -> None:
    benchmark.pedantic(backing_cold, args=(copies[scale],), rounds=3, iterations=1)


@pytest.mark.parametrize("scale", SCALES, ids=scale_id)
def test_backing_warm(benchmark, copies: dict[float, Path], scale: float) -> None:
    backing_cold(copies[scale])
    benchmark(backing_warm, copies[scale])


@pytest.mark.parametrize("scale", SCALES, ids=scale_id)
def test_close_eligibility(benchmark, copies: dict[float, Path], scale: float) -> None:
    benchmark(close_question, copies[scale])


@pytest.mark.parametrize("scale", SCALES, ids=scale_id)
def test_newly_resolved_baseline(benchmark, copies: dict[float, Path], scale: float) -> None:
    benchmark(lambda: resolved_before(Workspace.at(copies[scale])))


def test_naive_backing_at_1x(benchmark, copies: dict[float, Path]) -> None:
    if 1.0 not in copies:
        pytest.skip("the naive baseline runs at 1x only")
    benchmark.pedantic(naive_backing, args=(copies[1.0],), rounds=1, iterations=1)


def test_history_scaling(copies: dict[float, Path]) -> None:
    """One-shot figures: cold and warm backing, and the baseline, per scale; the naive walk at 1x."""
    print()
    for scale, root in copies.items():
        started = time.perf_counter()
        backing_cold(root)
        cold = time.perf_counter() - started
        started = time.perf_counter()
        backing_warm(root)
        warm = time.perf_counter() - started
        started = time.perf_counter()
        close_question(root)
        close = time.perf_counter() - started
        started = time.perf_counter()
        resolved_before(Workspace.at(root))
        base = time.perf_counter() - started
        print(f"{scale:>5g}x  every line: cold {cold * 1000:8.1f} ms, warm {warm * 1000:7.1f} ms "
              f"({len(every_confirmation(Workspace.at(root)))} lines); the close's question {close * 1000:6.1f} ms; "
              f"newly-resolved baseline {base * 1000:6.1f} ms")
    if 1.0 in copies:
        started = time.perf_counter()
        naive_backing(copies[1.0])
        print(f"    1x  naive walk {(time.perf_counter() - started) * 1000:8.1f} ms")
