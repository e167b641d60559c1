"""`close --push` reads and publishes the branch it began on, by name, whatever branch HEAD is on by then. The human
may `git switch` at any moment (git takes no gitmem lock): the moment is made exact by wrapping a real function
(`overtaken.overtaken`, `push.publish`), which then runs as it is. Real clones of a bare origin, no git call faked.

Before, the look for another close read HEAD's branch (the human's, which the close never read), and the push stopped
(exit 6, nothing pushed) whenever HEAD left the close's branch, though it publishes that branch by name and moves it
by compare-and-swap. It still stops when the branch holds what the close did not leave there."""
from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from gitmem import codes, gitio
from gitmem.close import CloseResult, overtaken, run_close
from gitmem.errors import ExitCode
from gitmem.workspace import Workspace
from tests.close.test_close_late_runs import write_cycle
from tests.close.test_close_race import _stranded_close_beaten_by_the_humans
from tests.support.cycle_support import origin_and_clone
from tests.support.gitcli import git as run_git
from tests.support.helpers import DANA, GitRepo, make_repo
from tests.support.world import Clock

UTC = ZoneInfo("UTC")


def git(path: Path, *args: str) -> str:
    """What `git ARGS` prints in `path`, without the trailing newline."""
    return run_git(path, *args).strip()


def test_the_look_for_another_close_reads_the_closes_branch_after_a_switch(
        tmp_path: Path, git_env: None, monkeypatch: pytest.MonkeyPatch) -> None:
    """The close left here by a failed push, and the human's close of its day on origin. The human switches to
    `feature` (main's tip before that close) just before the close looks at the remote: the look read HEAD's branch,
    found nothing to step aside for, and the push then stopped (exit 6) with main still holding the stranded close.
    It reads main: main steps aside to origin's tip (feature, the checkout and its files are untouched), and the
    close does not close again on a branch it never read."""
    runner, origin = _stranded_close_beaten_by_the_humans(tmp_path)
    git(runner.path, "branch", "feature", "HEAD~1")
    feature = git(runner.path, "rev-parse", "feature")
    real = overtaken.overtaken
    switched: list[str] = []

    def after_a_switch(ws: Workspace, *branch: str) -> overtaken.Overtaken | None:
        if not switched:
            switched.append(git(runner.path, "switch", "--quiet", "feature"))
        return real(ws, *branch)

    monkeypatch.setattr(overtaken, "overtaken", after_a_switch)
    result = run_close(Workspace.at(runner.path), push=True, clock=Clock(datetime(2026, 11, 15, 0, 30, tzinfo=UTC)))
    assert switched
    assert git(runner.path, "rev-parse", "main") == git(origin, "rev-parse", "main")
    assert git(runner.path, "rev-parse", "feature") == feature
    assert git(runner.path, "symbolic-ref", "HEAD") == "refs/heads/feature"
    assert git(runner.path, "status", "--porcelain") == ""
    assert result.violations == [] and result.push is None and result.commit is None
    assert result.message.endswith(
        "origin/main got another close first, made at 2026-11-14 23:52 UTC (LOG.md:12): the 1 close(s) made here that "
        "never reached it stepped aside; it did not close again, as HEAD is on feature now, not main: back on main, "
        "run `gitmem close --push` again to report what only the close(s) left out held"), result.message


def _close_to_push(tmp_path: Path) -> tuple[GitRepo, Path, str]:
    """(the runner's clone, origin, feature's tip): cycle 1 of 2026-11-14 committed in the runner's clone, not pushed,
    and the human's branch `feature` there, one commit of theirs on main's tip; main checked out."""
    runner = make_repo(tmp_path / "runner")
    origin = origin_and_clone(tmp_path, runner)
    write_cycle(runner, datetime(2026, 11, 14, 9, 0, tzinfo=UTC))
    git(runner.path, "switch", "--quiet", "-c", "feature")
    runner.commit_files({"feature.txt": "the human's feature\n"}, "feature work", author=DANA)
    git(runner.path, "switch", "--quiet", "main")
    return runner, origin, git(runner.path, "rev-parse", "feature")


def _close_with(monkeypatch: pytest.MonkeyPatch, runner: GitRepo, human: Callable[[], object]) -> CloseResult:
    """The runner's close of 2026-11-14 at 23:47, pushing, with `human()` done once just as the push begins (after
    the close checked HEAD): the real publish runs right after it."""
    from gitmem.publish import push

    real = push.publish
    done: list[object] = []

    def after_the_human(repo: gitio.Repo, **kwargs: Any) -> push.SyncResult:
        if not done:
            done.append(human())
        return real(repo, **kwargs)

    monkeypatch.setattr(push, "publish", after_the_human)
    result = run_close(Workspace.at(runner.path), push=True, clock=Clock(datetime(2026, 11, 14, 23, 47, tzinfo=UTC)))
    assert done
    return result


def test_a_switch_as_the_push_begins_still_publishes_the_closes_branch(
        tmp_path: Path, git_env: None, monkeypatch: pytest.MonkeyPatch) -> None:
    """The human switches to `feature` as the close's push begins. The push stopped there (exit 6, the close only on
    this disk), though it publishes main by name and main holds just what the close left. It pushes main; feature,
    HEAD and the work tree stay as the human left them, and feature is not pushed."""
    runner, origin, feature = _close_to_push(tmp_path)
    result = _close_with(monkeypatch, runner, lambda: git(runner.path, "switch", "--quiet", "feature"))
    assert result.push is not None and result.push.status.exit_code == ExitCode.OK, result.push
    assert result.violations == []
    close = git(runner.path, "rev-parse", "main")
    assert result.commit == close == git(origin, "rev-parse", "main")
    assert git(origin, "log", "--format=%s", "-2", "main").splitlines() == ["gitmem: close 2026-11-14", "gitmem: cycle"]
    assert git(runner.path, "symbolic-ref", "HEAD") == "refs/heads/feature"
    assert git(runner.path, "rev-parse", "feature") == feature
    assert (runner.path / "feature.txt").read_text() == "the human's feature\n"
    assert git(runner.path, "status", "--porcelain") == ""
    assert git(origin, "branch", "--list", "feature") == ""


def test_a_push_whose_branch_was_moved_while_head_was_elsewhere_stops_and_keeps_the_work(
        tmp_path: Path, git_env: None, monkeypatch: pytest.MonkeyPatch) -> None:
    """As the push begins, the human switches to `feature` and puts main at feature's tip (`git branch -f`): main now
    holds work the close never read, which the push would publish as main. It stops (exit 6): nothing is pushed,
    the close stays in the reflog and is named, and the one line says why."""
    runner, origin, feature = _close_to_push(tmp_path)
    before = git(origin, "rev-parse", "main")
    closed: list[str] = []

    def switch_and_move_main() -> None:
        closed.append(git(runner.path, "rev-parse", "main"))
        git(runner.path, "switch", "--quiet", "feature")
        git(runner.path, "branch", "--quiet", "-f", "main", "feature")

    result = _close_with(monkeypatch, runner, switch_and_move_main)
    assert git(origin, "rev-parse", "main") == before
    assert git(runner.path, "rev-parse", "main") == feature == git(runner.path, "rev-parse", "feature")
    assert result.push is not None and result.push.status.exit_code == ExitCode.LOCAL_ONLY, result.push
    assert result.commit == closed[0]
    [diagnostic] = result.violations
    assert (diagnostic.code, diagnostic.path, diagnostic.line) == (codes.CLOSE_PUSH_FAILED.code,
                                                                   ".git/refs/heads/main", 1)
    assert diagnostic.message == (
        f"HEAD is on feature now, not main, and main was moved from {closed[0][:10]} to {feature[:10]} since this "
        "close's push began: nothing was pushed, and what main holds that origin/main lacks is only on this disk "
        "until `gitmem close --push` runs again on main")


def test_a_switch_while_the_push_races_still_publishes_the_branch_its_own_rebase_left(
        tmp_path: Path, git_env: None) -> None:
    """A cycle only in the runner's clone, and notes the human pushed from theirs, so the close's push rebases main
    onto them; as it pushes (its pre-push hook), the human pushes more notes and switches the runner's checkout to
    `feature`, once. The push is refused (the remote moved) and tries again: main holds the push's own rebase of the
    close, not the close's first tip, and that is what it goes on publishing, onto the new notes. Before, the switch
    stopped the push (exit 6)."""
    from tests.close.test_close_left_out import _local_cycle
    from tests.support.cycle_support import clone

    runner, origin, feature = _close_to_push(tmp_path)
    human = clone(origin, tmp_path / "human", DANA)
    _local_cycle(runner, datetime(2026, 11, 14, 12, 0, tzinfo=UTC))
    human.commit_files({"notes.txt": "the human's notes\n"}, "notes", author=DANA)
    git(human.path, "push", "--quiet", "origin", "main")
    once = tmp_path / "raced"
    hook = runner.path / ".git" / "hooks" / "pre-push"
    hook.parent.mkdir(exist_ok=True)
    hook.write_text(f"""#!/bin/sh
[ -e '{once}' ] && exit 0
touch '{once}'
unset GIT_DIR GIT_WORK_TREE GIT_INDEX_FILE
cd '{human.path}' && echo more >more.txt && git add more.txt && git commit --quiet -m 'more notes' \\
    && git push --quiet origin main || exit 1
cd '{runner.path}' && git switch --quiet feature
""")
    hook.chmod(0o755)
    result = run_close(Workspace.at(runner.path), push=True, clock=Clock(datetime(2026, 11, 14, 23, 47, tzinfo=UTC)))
    assert once.exists()
    assert result.push is not None and result.push.status.exit_code == ExitCode.OK, result.push
    assert result.violations == []
    assert git(origin, "log", "--format=%s", "main").splitlines() == [
        "gitmem: close 2026-11-14", "gitmem: cycle", "more notes", "notes", "gitmem: cycle",
        "start from the gitmem template"]
    assert result.commit == git(origin, "rev-parse", "main") == git(runner.path, "rev-parse", "main")
    assert git(runner.path, "symbolic-ref", "HEAD") == "refs/heads/feature"
    assert git(runner.path, "rev-parse", "feature") == feature
    assert git(runner.path, "status", "--porcelain") == ""
    assert git(origin, "branch", "--list", "feature") == ""
