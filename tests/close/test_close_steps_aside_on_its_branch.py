"""A close steps aside and names its branch on the branch it began on, whatever branch HEAD is on by then. The human
may `git switch` or commit at any moment (git takes no gitmem lock): the moment is made exact by wrapping a real
function (`overtaken.overtaken`, `gitio.push`), which then runs as it is. Real clones of a bare origin, no git call
faked. Before, stepping aside ran `reset --hard` on whatever branch HEAD was on (the human's `feature` moved to the
remote's tip; a commit the human made on main meanwhile dropped), and a failed push named `feature`'s ref."""
from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from gitmem import codes, gitio
from gitmem.close import overtaken, run_close
from gitmem.errors import ExitCode
from gitmem.workspace import Workspace
from tests.close.test_close_late_runs import write_cycle
from tests.close.test_close_race import _stranded_close_beaten_by_the_humans
from tests.support.cycle_support import origin_and_clone
from tests.support.gitcli import git as run_git
from tests.support.helpers import make_repo
from tests.support.world import Clock

UTC = ZoneInfo("UTC")


def git(path: Path, *args: str) -> str:
    """What `git ARGS` prints in `path`, without the trailing newline."""
    return run_git(path, *args).strip()


def _after_the_look(monkeypatch: pytest.MonkeyPatch, then: Callable[[], None]) -> list[str]:
    """Wrap the real `overtaken.overtaken` so that, once it found the other close (before the close steps aside),
    `then()` runs: what the human does at that moment. The list holds the other close's upstream once done."""
    real = overtaken.overtaken
    done: list[str] = []

    def and_then(ws: Workspace, branch: str) -> overtaken.Overtaken | None:
        found = real(ws, branch)
        if found is not None and not done:
            then()
            done.append(found.upstream)
        return found

    monkeypatch.setattr(overtaken, "overtaken", and_then)
    return done


def test_a_human_switch_before_the_close_steps_aside_keeps_their_branch(
        tmp_path: Path, git_env: None, monkeypatch: pytest.MonkeyPatch) -> None:
    runner, origin = _stranded_close_beaten_by_the_humans(tmp_path)
    git(runner.path, "branch", "feature", "HEAD~1")
    feature = git(runner.path, "rev-parse", "feature")
    done = _after_the_look(monkeypatch, lambda: git(runner.path, "switch", "--quiet", "feature"))
    result = run_close(Workspace.at(runner.path), push=True, clock=Clock(datetime(2026, 11, 15, 0, 30, tzinfo=UTC)))
    assert done, "the close never found the other close"
    assert git(runner.path, "rev-parse", "feature") == feature
    assert git(runner.path, "symbolic-ref", "HEAD") == "refs/heads/feature"
    assert git(runner.path, "status", "--porcelain") == ""
    # The close's own branch stepped aside to the remote's tip; it did not close again on a branch it never read.
    assert git(runner.path, "rev-parse", "main") == done[0] == git(origin, "rev-parse", "main")
    assert result.commit is None
    assert result.message.endswith("it did not close again, as HEAD is on feature now, not main: back on main, run "
                                   "`gitmem close --push` again to report what only the close(s) left out held")


def test_a_commit_on_main_before_the_close_steps_aside_is_kept(
        tmp_path: Path, git_env: None, monkeypatch: pytest.MonkeyPatch) -> None:
    runner, origin = _stranded_close_beaten_by_the_humans(tmp_path)
    theirs = git(origin, "rev-parse", "main")
    done = _after_the_look(monkeypatch, lambda: runner.commit_files({"notes.txt": "the human's notes\n"},
                                                                    "the human's notes"))
    result = run_close(Workspace.at(runner.path), push=True, clock=Clock(datetime(2026, 11, 15, 0, 30, tzinfo=UTC)))
    assert done, "the close never found the other close"
    assert git(runner.path, "log", "--format=%s", "-2", "main").splitlines() == ["the human's notes",
                                                                                "gitmem: close 2026-11-14"]
    assert (runner.path / "notes.txt").read_text() == "the human's notes\n"
    assert git(runner.path, "status", "--porcelain") == ""
    assert git(origin, "rev-parse", "main") == theirs          # nothing was pushed
    assert result.push is not None and result.push.status.exit_code == ExitCode.LOCAL_ONLY
    [diagnostic] = result.violations
    assert (diagnostic.code, diagnostic.path, diagnostic.line) == (codes.CLOSE_PUSH_FAILED.code,
                                                                   ".git/refs/heads/main", 1)
    assert "\n" not in diagnostic.message
    assert diagnostic.message.startswith("origin/main got another close first, made at 2026-11-14 23:52 UTC "
                                         "(LOG.md:12), and main moved while gitmem worked on it (")
    assert diagnostic.message.endswith("it was left as it is: nothing was pushed, and what main holds that origin/main "
                                       "lacks is only on this disk until `gitmem close --push` runs again on main")


def test_a_failed_push_names_the_closes_branch_after_a_switch(
        tmp_path: Path, git_env: None, monkeypatch: pytest.MonkeyPatch) -> None:
    """The remote is gone (removed after the day's cycle was pushed): no side branch holds the close, and the human
    switched to `feature` just as the push began (after the close checked HEAD)."""
    from gitmem.publish import push

    runner = make_repo(tmp_path / "runner")
    origin_and_clone(tmp_path, runner)
    git(runner.path, "branch", "feature")
    write_cycle(runner, datetime(2026, 11, 14, 9, 0, tzinfo=UTC))
    git(runner.path, "remote", "remove", "origin")
    real = push.publish
    switched: list[str] = []

    def after_a_switch(repo: gitio.Repo, **kwargs: Any) -> push.SyncResult:
        if not switched:
            git(runner.path, "switch", "--quiet", "feature")
            switched.append(git(runner.path, "rev-parse", "feature"))
        return real(repo, **kwargs)

    monkeypatch.setattr(push, "publish", after_a_switch)
    result = run_close(Workspace.at(runner.path), push=True, clock=Clock(datetime(2026, 11, 14, 23, 47, tzinfo=UTC)))
    assert switched and result.push is not None and result.push.side_branch is None, result.push
    assert result.push.status.exit_code == ExitCode.SALVAGED      # no remote: the commit stays local
    assert [(v.code, v.path, v.line) for v in result.violations] == [(codes.CLOSE_PUSH_FAILED.code,
                                                                      ".git/refs/heads/main", 1)]
    assert git(runner.path, "log", "--format=%s", "-1", "main") == "gitmem: close 2026-11-14"
    assert git(runner.path, "rev-parse", "feature") == switched[0]
