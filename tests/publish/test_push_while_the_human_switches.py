"""A human who runs `git switch feature` and stages a file while a push replays (seconds on a long history) keeps
their checkout: the push moves its own branch only, from the tip it started at, leaves the index and work tree alone
when HEAD is no longer on that branch, and pushes that branch, never the one HEAD switched to. The moment is made
exact by wrapping the real `replay` (every replay runs as it is); real clones of a bare origin, no git call faked.
Before, the rebase's `reset --hard` moved `feature` to the rebased commits and dropped the staged file, and the push
published `feature` to main's upstream."""
from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from gitmem.errors import ExitCode
from gitmem.publish.push import checkout_kept, publish
from gitmem.workspace import Workspace
from tests.close.test_close_late_runs import write_cycle
from tests.support.cycle_support import clone, origin_and_clone
from tests.support.gitcli import git as run_git
from tests.support.helpers import GitRepo, make_repo
from tests.support.world import Clock

UTC = ZoneInfo("UTC")
STAGED = "the human's staged file\n"


def git(path: Path, *args: str) -> str:
    """What `git ARGS` prints in `path`, without the trailing newline."""
    return run_git(path, *args).strip()


def _switches_mid_replay(monkeypatch: pytest.MonkeyPatch, repo: GitRepo) -> list[str]:
    """Wrap the real `replay` so that, once, right after it made the rebased commits (before the branch moves), the
    human switches `repo` to `feature` and stages a new file there. The list holds `feature`'s tip once switched."""
    from gitmem.gitio import rebase

    real = rebase.replay
    switched: list[str] = []

    def and_the_human_switches(*args: object, **kwargs: object) -> object:
        replayed = real(*args, **kwargs)        # type: ignore[arg-type]
        if not switched:
            git(repo.path, "switch", "--quiet", "feature")
            (repo.path / "staged.txt").write_text(STAGED)
            git(repo.path, "add", "staged.txt")
            switched.append(git(repo.path, "rev-parse", "feature"))
        return replayed

    monkeypatch.setattr(rebase, "replay", and_the_human_switches)
    return switched


def _with_a_feature_and_an_upstream_commit(tmp_path: Path, runner: GitRepo,
                                           make_ours: Callable[[], object]) -> tuple[Path, str]:
    """(origin, another clone's pushed commit): origin made of the runner, `feature` made there with a commit of its
    own, the runner back on main, `make_ours()` there, and a commit another clone pushed to origin meanwhile (the
    push must replay)."""
    origin = origin_and_clone(tmp_path, runner)
    git(runner.path, "switch", "--quiet", "-c", "feature")
    runner.commit_files({"feature.txt": "the human's feature\n"}, "feature work")
    git(runner.path, "switch", "--quiet", "main")
    make_ours()
    other = clone(origin, tmp_path / "other")
    other.commit_files({"other.txt": "from another clone\n"}, "another clone's commit")
    git(other.path, "push", "--quiet", "origin", "main")
    return origin, git(other.path, "rev-parse", "HEAD")


def _human_kept_their_checkout(runner: GitRepo, origin: Path, feature: str, theirs: str) -> None:
    """`feature` and the checkout on it as the human left them; main rebased onto `theirs` and pushed, and nothing
    of `feature` on origin."""
    assert git(runner.path, "rev-parse", "feature") == feature
    assert git(runner.path, "symbolic-ref", "HEAD") == "refs/heads/feature"
    assert git(runner.path, "diff", "--cached", "--name-only") == "staged.txt"
    assert (runner.path / "staged.txt").read_text() == STAGED
    assert (runner.path / "feature.txt").read_text() == "the human's feature\n"
    main = git(runner.path, "rev-parse", "main")
    assert git(runner.path, "merge-base", "--is-ancestor", theirs, main) == ""
    assert git(origin, "rev-parse", "main") == main
    assert "feature work" not in git(origin, "log", "--format=%s", "main")
    assert git(origin, "branch", "--list", "feature") == ""


def test_publish_moves_its_branch_and_leaves_the_switched_checkout(
        tmp_path: Path, memrepo: GitRepo, monkeypatch: pytest.MonkeyPatch) -> None:
    origin, theirs = _with_a_feature_and_an_upstream_commit(
        tmp_path, memrepo, lambda: memrepo.commit_files({"mine.txt": "mine\n"}, "mine"))
    switched = _switches_mid_replay(monkeypatch, memrepo)
    result = publish(memrepo.handle, conflict_branch="gitmem/cycle-1", sleep=lambda s: None)
    assert switched and result.status == "pushed", result
    assert result.commit == git(memrepo.path, "rev-parse", "main")
    assert git(origin, "log", "--format=%s", "-2", "main").splitlines() == ["mine", "another clone's commit"]
    _human_kept_their_checkout(memrepo, origin, switched[0], theirs)
    assert checkout_kept("main") in result.messages


def test_a_close_pushing_while_the_human_switches_moves_main_only(
        tmp_path: Path, git_env: None, monkeypatch: pytest.MonkeyPatch) -> None:
    """The close builds on the upstream it fetched first, so another clone pushes during its first push (a real
    pre-push hook in the runner): the retry replays the close, and the human switches then."""
    from gitmem.close import run_close

    runner = make_repo(tmp_path / "runner")
    origin, _ = _with_a_feature_and_an_upstream_commit(
        tmp_path, runner, lambda: write_cycle(runner, datetime(2026, 11, 14, 9, 0, tzinfo=UTC)))
    other = tmp_path / "other"
    run_git(other, "commit", "--quiet", "--allow-empty", "-m", "pushed during the close's push")
    hook = runner.path / ".git" / "hooks" / "pre-push"
    hook.parent.mkdir(exist_ok=True)
    hook.write_text(f"#!/bin/sh\n[ -e '{tmp_path}/raced' ] && exit 0\ntouch '{tmp_path}/raced'\n"
                    f"cd '{other}' && unset GIT_DIR GIT_WORK_TREE GIT_INDEX_FILE && git push --quiet origin main\n")
    hook.chmod(0o755)
    switched = _switches_mid_replay(monkeypatch, runner)
    result = run_close(Workspace.at(runner.path), push=True, clock=Clock(datetime(2026, 11, 14, 23, 47, tzinfo=UTC)))
    assert switched and result.push is not None and result.push.status.exit_code == ExitCode.OK, result.push
    assert git(origin, "log", "--format=%s", "-2", "main").splitlines()[1] == "pushed during the close's push"
    assert "close" in git(origin, "log", "--format=%s", "-1", "main")
    _human_kept_their_checkout(runner, origin, switched[0], git(other, "rev-parse", "HEAD"))
    assert checkout_kept("main") in result.push.messages


def test_a_cycles_push_while_the_human_switches_moves_main_only(
        tmp_path: Path, git_env: None, monkeypatch: pytest.MonkeyPatch) -> None:
    from gitmem.cycle.runner import Settings, run_cycle
    from tests.support.cycle_support import WritingBackend, built

    runner = make_repo(tmp_path / "runner")
    origin, theirs = _with_a_feature_and_an_upstream_commit(tmp_path, runner, lambda: None)
    switched = _switches_mid_replay(monkeypatch, runner)
    report = run_cycle(Workspace.at(runner.path), WritingBackend(built("write hello.txt")),
                       settings=Settings(push=True, sleep=lambda s: None))
    assert switched and report.exit_code == ExitCode.OK, report
    assert git(origin, "show", "main:hello.txt") != ""
    _human_kept_their_checkout(runner, origin, switched[0], theirs)


def test_publish_pushes_the_branch_it_is_given_when_head_moved_before_the_call(
        tmp_path: Path, memrepo: GitRepo) -> None:
    """The caller checked HEAD on main; the human switched to `feature` before publish began: main is published."""
    origin, theirs = _with_a_feature_and_an_upstream_commit(
        tmp_path, memrepo, lambda: memrepo.commit_files({"mine.txt": "mine\n"}, "mine"))
    feature = git(memrepo.path, "rev-parse", "feature")
    git(memrepo.path, "switch", "--quiet", "feature")
    result = publish(memrepo.handle, conflict_branch="gitmem/cycle-1", sleep=lambda s: None, local="main")
    assert result.status == "pushed", result
    assert result.commit == git(memrepo.path, "rev-parse", "main") == git(origin, "rev-parse", "main")
    assert git(origin, "log", "--format=%s", "-2", "main").splitlines() == ["mine", "another clone's commit"]
    assert git(memrepo.path, "rev-parse", "feature") == feature
    assert git(memrepo.path, "symbolic-ref", "HEAD") == "refs/heads/feature"
    assert "feature work" not in git(origin, "log", "--format=%s", "main")


def test_a_cycle_publishes_its_branch_when_the_human_switched_before_the_push(
        tmp_path: Path, git_env: None, monkeypatch: pytest.MonkeyPatch) -> None:
    """The switch lands between the cycle's last look at HEAD and publish (wrapping the real publish)."""
    from gitmem.cycle.runner import Settings, run_cycle
    from gitmem.publish import push
    from tests.support.cycle_support import WritingBackend, built

    runner = make_repo(tmp_path / "runner")
    origin, theirs = _with_a_feature_and_an_upstream_commit(tmp_path, runner, lambda: None)
    feature = git(runner.path, "rev-parse", "feature")
    real = push.publish
    switched: list[str] = []

    def after_a_switch(repo: object, **kwargs: object) -> object:
        if not switched:
            git(runner.path, "switch", "--quiet", "feature")
            switched.append(feature)
        return real(repo, **kwargs)     # type: ignore[arg-type]

    monkeypatch.setattr(push, "publish", after_a_switch)
    report = run_cycle(Workspace.at(runner.path), WritingBackend(built("write hello.txt")),
                       settings=Settings(push=True, sleep=lambda s: None))
    assert switched and report.exit_code == ExitCode.OK, report
    assert git(origin, "show", "main:hello.txt") != ""
    assert git(origin, "rev-parse", "main") == git(runner.path, "rev-parse", "main")
    assert git(origin, "merge-base", "--is-ancestor", theirs, "main") == ""
    assert "feature work" not in git(origin, "log", "--format=%s", "main")
    assert git(runner.path, "rev-parse", "feature") == feature
    assert git(runner.path, "symbolic-ref", "HEAD") == "refs/heads/feature"
