"""The runner's one walk of the work tree after every agent (gitmem.agents.bytecode `fresh`): the bytecode caches
it removes, and the files pytest runs by name that it holds (GM776).

Over a Python project's tree of FOLDERS folders with FILES `.py` files each (one `test_*.py` among them, so every
file's name is looked at and one in FILES is stat'ed for its ctime), nothing changed since the snapshot: what a
cycle whose agent planted nothing pays. CPU time per walk, so other work on the machine does not count.

Run:  .venv/bin/pytest benchmarks/bench_sweep.py --benchmark-only -s
"""
from __future__ import annotations

import time
from pathlib import Path

import pytest

from gitmem.agents import bytecode
from gitmem.agents.pytest_settings import PytestSettings

FOLDERS = 3_000
FILES = 20


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    top = tmp_path_factory.mktemp("sweep")
    for number in range(FOLDERS):
        folder = top / f"pkg{number % 30}" / f"mod{number}"
        folder.mkdir(parents=True)
        for file in range(FILES):
            (folder / (f"test_{file}.py" if file == 0 else f"part_{file}.py")).write_text("x = 1\n")
    return top


@pytest.mark.benchmark(group="cycle: the sweep after the agent, 63k entries, nothing planted", timer=time.process_time)
def test_sweep_of_an_untouched_tree(benchmark, tree: Path) -> None:
    since = time.time_ns()
    found = benchmark(bytecode.fresh, tree, since)
    if benchmark.stats is not None:          # None when the smoke test runs it with --benchmark-disable
        print(f"\n{FOLDERS * (FILES + 1) + 30:,} entries: {benchmark.stats.stats.median * 1000:.1f} ms CPU (median)")
    assert found.paths == [] and found.runnable == [] and not found.cut_short


# A project's own pytest settings: a norecursedirs of its own, a python_files with a path pattern, and testpaths.
SETTINGS = PytestSettings(norecursedirs=("docs",), python_files=("check_*.py", "lib/*.py"),
                          testpaths=("pkg1", "pkg2/**"))


@pytest.mark.benchmark(group="cycle: the sweep after the agent, 63k entries, nothing planted, the project's pytest "
                             "settings", timer=time.process_time)
def test_sweep_under_a_projects_pytest_settings(benchmark, tree: Path) -> None:
    since = time.time_ns()
    found = benchmark(bytecode.fresh, tree, since, [SETTINGS, SETTINGS])       # the start commit's and the tree's
    if benchmark.stats is not None:
        print(f"\nunder the project's settings: {benchmark.stats.stats.median * 1000:.1f} ms CPU (median)")
    assert found.paths == [] and found.runnable == [] and not found.cut_short
