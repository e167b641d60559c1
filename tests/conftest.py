"""Fixtures shared by every test module. Keep this small: the helpers live in tests/support/."""
from __future__ import annotations

import os
import sys
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import pytest

from tests.support.helpers import (
    CliResult,
    GitRepo,
    isolate_git_env,
    make_repo,
    run_cli,
)
from tests.support.world import World

# Some machines set PYTHONDONTWRITEBYTECODE: then every test module is assertion-rewritten again, and every
# `gitmem` subprocess (hundreds of them) compiles the package again, about 3x the suite's time. The suite
# writes its caches (git ignores __pycache__/) here and in the subprocesses it starts.
sys.dont_write_bytecode = False
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """`-n auto` (pyproject's addopts): one worker more than the machine has cores. Many tests wait on what they
    start (git, the agent CLIs, bwrap, a browser, loopback servers); with one worker a core, both cores were
    busy 85% of a CI run, and the third worker fills those waits."""
    return (os.cpu_count() or 1) + 1


# The tests' layout (issue 35): tests/<package>/ for each package, tests/hostile/ and tests/e2e/ apart. A test's
# folder gives its marker, so `pytest -m "not e2e"` is the quick loop and `pytest tests/close` the close's.
FOLDER_MARKERS = {"e2e": pytest.mark.e2e, "hostile": pytest.mark.hostile}
TESTS = Path(__file__).resolve().parent


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        where = Path(str(item.path)).resolve()
        if where.is_relative_to(TESTS) and len(where.relative_to(TESTS).parts) > 1:
            marker = FOLDER_MARKERS.get(where.relative_to(TESTS).parts[0])
            if marker is not None:
                item.add_marker(marker)
    slow_first(items)


def slow_first(items: list[pytest.Item]) -> None:
    """The files that hold a `slow` test run first, in collection order; then the rest, the files with the most
    tests first.

    pytest-xdist's `loadfile` hands out whole files in this order (pyproject's addopts turn off its own reorder,
    `--no-loadscope-reorder`), one to each worker as it comes free. A long file handed out last kept one worker
    busy for minutes while the others sat idle: xdist's reorder, by number of tests alone, handed out the
    benchmarks smoke (3 tests, the suite's longest) 155th of 201 files and mypy's 188th. Started first, the long
    files overlap each other, and the files of one or two short tests fill in at the end."""
    slow = {item.path for item in items if item.get_closest_marker("slow") is not None}
    tests_in = Counter(item.path for item in items)
    # A stable sort: the slow files keep their collection order, and so do the tests inside each file.
    items.sort(key=lambda item: (item.path not in slow, 0 if item.path in slow else -tests_in[item.path]))


@pytest.fixture(autouse=True, scope="session")
def private_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """gitmem's own cache (`$XDG_CACHE_HOME/gitmem`: the close's verdict memos, status memos, fleet copies, recall
    proofs) in a folder of this session (of this worker), for every test and every process it starts, never the
    user's: a test that forgot to isolate it wrote there, keyed by its temp path, and a memo left by one run could
    meet a later run at the same temp path. The other tools' caches in the user's folder (pip, pre-commit, the agent
    CLIs') are linked in, so their installs stay as quick as they were."""
    user = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    private = tmp_path_factory.mktemp("cache")
    for entry in sorted(user.iterdir()) if user.is_dir() else ():
        if entry.name != "gitmem":
            (private / entry.name).symlink_to(entry, target_is_directory=entry.is_dir())
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("XDG_CACHE_HOME", str(private))
        yield private


@pytest.fixture
def git_env(monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory) -> None:
    """No GIT_INDEX_FILE, GIT_AUTHOR_*, PRE_COMMIT_* or GITMEM_CYCLE leaking in from outside, and the cycle's
    backup bundles (gitmem.cycle.refs_backup) under a temp dir, not the user's state directory."""
    isolate_git_env(monkeypatch)
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path_factory.mktemp("state")))


@pytest.fixture
def memrepo(tmp_path: Path, git_env: None) -> GitRepo:
    """A git repo holding the template, committed by a human."""
    return make_repo(tmp_path / "repo")


@pytest.fixture
def cli(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> Callable[..., CliResult]:
    """cli(argv, cwd=path, stdin=None) -> CliResult: the CLI in-process, output captured."""

    def run(argv: Sequence[str], *, cwd: Path, stdin: str | None = None) -> CliResult:
        return run_cli(argv, cwd=cwd, monkeypatch=monkeypatch, capsys=capsys, stdin=stdin)

    return run


@pytest.fixture
def world(memrepo: GitRepo) -> World:
    """`memrepo` driven through time with an injected clock (see tests/support/world.py)."""
    return World(memrepo)
