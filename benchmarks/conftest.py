"""Shared benchmark fixtures: synthetic repos per scale (cached), and private working copies of them.

Run benchmarks explicitly: `.venv/bin/pytest benchmarks/bench_check.py --benchmark-only`. The default test
run (`testpaths = tests`) never collects this directory. Choose scales with GITMEM_BENCH_SCALES=1,10
(default 1,10,100); repos are cached under GITMEM_BENCH_CACHE (default `.bench-cache/` at the project root).
"""
from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pygit2
import pytest

from gitmem.workspace import Workspace
from tests.support.synth import SynthInfo, cached_repo, default_cache_dir
from tests.support.synth_copy import working_copy

SCALES = tuple(float(s) for s in os.environ.get("GITMEM_BENCH_SCALES", "1,10,100").split(",") if s.strip())


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Module | None:
    """Collect `bench_*.py` here when the directory is given; an explicit file is collected by pytest itself."""
    if file_path.suffix == ".py" and file_path.name.startswith("bench_") and \
            not parent.session.isinitpath(file_path):
        return pytest.Module.from_parent(parent, path=file_path)
    return None


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """No workers for `-n auto` (the suite's default, in pyproject.toml) when benchmarks are run: a benchmark times
    one process on a quiet machine, and pytest-benchmark switches itself off under pytest-xdist."""
    return 0


def runner_seconds(root: Path) -> float:
    """The runner's own time for one cycle of the repository at `root` with its configured (no-op) command
    agent: what the sandbox and the trust-anchor benchmarks compare, each against its own baseline."""
    import time

    from gitmem.agents.command import CommandBackend
    from gitmem.cycle.runner import run_cycle

    ws = Workspace.open(root)
    began = time.perf_counter()
    report = run_cycle(ws, CommandBackend(ws.config))
    spent = time.perf_counter() - began
    assert report.exit_code == 0 and report.commit, report.messages
    return spent


def scale_id(scale: float) -> str:
    return f"{scale:g}x"


def stage_one_cycle(root: Path) -> None:
    """What a cycle does before `git commit`: append one LOG entry and one NOW block, then `git add` both."""
    from gitmem.config import load_config
    from gitmem.memory import log
    from gitmem.memory_writer import MemoryWriter

    config = load_config(root)
    tail = log.tail(MemoryWriter(Workspace.at(root, config)).read("log"), 1).entries[-1]
    moment = tail.when.moment + timedelta(hours=3)
    memory = MemoryWriter(Workspace.at(root, config), clock=lambda: moment, author_email=config.agent.email)
    memory.add_log_entry(task="measure the check hook on a grown history", outcome="built",
                         result="benchmark entry staged", tried="appended one entry", evidence="timings below")
    memory.add_now_block(did="staged one benchmark cycle", human="nothing new", next="commit it")
    repo = pygit2.Repository(str(root))
    index = repo.index
    index.add("LOG.md")
    index.add("NOW.md")
    index.write()


@pytest.fixture(scope="session", params=SCALES, ids=scale_id)
def synth(request: pytest.FixtureRequest) -> SynthInfo:
    return cached_repo(request.param)


@pytest.fixture(scope="session")
def staged_copy(synth: SynthInfo) -> Iterator[Path]:
    """A working copy of the synthetic repo with one cycle's LOG entry and NOW block staged.

    It lives beside the cache, not in pytest's numbered temp dirs: other sessions' pytest runs prune those,
    which once deleted a 100x copy in the middle of a benchmark.
    """
    home = Path(tempfile.mkdtemp(prefix=f"copy-{scale_id(synth.scale)}-", dir=default_cache_dir()))
    try:
        root = working_copy(synth, home / "repo")
        stage_one_cycle(root)
        yield root
    finally:
        shutil.rmtree(home, ignore_errors=True)


@pytest.fixture(scope="session")
def new_branch_copy(synth: SynthInfo) -> Iterator[tuple[Path, str]]:
    """A working copy whose whole history is on `origin/main`, with a branch `feature` one commit ahead:
    what a plain pre-push hook sees when that branch is pushed for the first time (remote sha all zeros)."""
    home = Path(tempfile.mkdtemp(prefix=f"branch-{scale_id(synth.scale)}-", dir=default_cache_dir()))
    try:
        root = working_copy(synth, home / "repo")
        repo = pygit2.Repository(str(root))
        repo.references.create("refs/remotes/origin/main", repo.head.target)
        builder = repo.TreeBuilder(repo.head.peel(pygit2.Commit).tree)
        builder.insert("notes.txt", repo.create_blob(b"a new branch\n"), pygit2.enums.FileMode.BLOB)
        signature = pygit2.Signature("Dana Human", "dana@example.com")
        tip = repo.create_commit("refs/heads/feature", signature, signature, "a new branch", builder.write(),
                                 [repo.head.target])
        yield root, f"refs/heads/feature {tip} refs/heads/feature {'0' * 40}\n"
    finally:
        shutil.rmtree(home, ignore_errors=True)
