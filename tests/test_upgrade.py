"""Repositories written by gitmem 0.1.0 keep working: new rules judge new bytes, never old history.

tests/fixtures/upgrade/memory-0.1.0.bundle holds six days of memory written by 0.1.0's own runner, writers and
close (tests/fixtures/upgrade/make_fixture.py says how), including bytes that later releases refuse in new
changes: a fenced heading, an unclosed fence, a 40 KB entry, a key-shaped string in a doc, a symlink, CRLF.
"""
from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path

import pygit2
import pytest

from gitmem.cycle.runner import Settings, run_cycle
from gitmem.errors import ExitCode
from gitmem.memory import log
from gitmem.workspace import Workspace
from tests.support.cycle_support import WritingBackend, built
from tests.support.gitcli import git
from tests.support.helpers import GitRepo
from tests.support.world import Clock

BUNDLE = Path(__file__).parent / "fixtures" / "upgrade" / "memory-0.1.0.bundle"


@pytest.fixture
def old(tmp_path: Path, git_env: None) -> GitRepo:
    git(tmp_path, "clone", "-q", "--branch", "main", str(BUNDLE), "old")
    path = tmp_path / "old"
    return GitRepo(path, pygit2.Repository(str(path)))


def root_commit(repo: GitRepo) -> str:
    return git(repo.path, "rev-list", "--max-parents=0", "HEAD").strip()


def test_history_written_by_0_1_0_still_checks_and_verifies_clean(old: GitRepo, cli) -> None:
    assert cli(["check", "--worktree"], cwd=old.path).code == ExitCode.OK
    verified = cli(["verify", "--range", f"{root_commit(old)}..HEAD", "--format", "json"], cwd=old.path)
    assert verified.code == ExitCode.OK, verified.out + verified.err
    for argv in (["status", "--json"], ["pending", "--json"], ["context", "--json", "--offline"],
                 ["recall", "notes", "--json"]):
        done = cli(argv, cwd=old.path)
        assert done.code == ExitCode.OK and "Traceback" not in done.err, (argv, done.err)
        json.loads(done.out)
    cycles = [e.cycle for e in log.parse(old.read("LOG.md")).entries if e.cycle is not None]
    assert cycles == list(range(1, 37))                      # an old unclosed fence hides no heading


def test_the_next_cycle_and_close_after_the_upgrade_work_and_verify(old: GitRepo, cli) -> None:
    start = old.head()
    clock = Clock(datetime(2026, 10, 8, 9, 0, tzinfo=timezone.utc))
    report = run_cycle(Workspace.at(old.path), WritingBackend(built("after the upgrade")),
                       settings=Settings(clock=clock))
    assert report.exit_code == ExitCode.OK and report.cycle == 37
    assert cli(["check", "--worktree"], cwd=old.path).code == ExitCode.OK
    assert cli(["verify", "--range", f"{start}..HEAD"], cwd=old.path).code == ExitCode.OK
    assert cli(["verify", "--range", f"{root_commit(old)}..HEAD"], cwd=old.path).code == ExitCode.OK
