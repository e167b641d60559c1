"""A stale close (its push failed, exit 6) that reaches the target another way than a push's replay: `gitmem merge`
of the branch that holds it (a close's side branch, another writer's branch), or pull-request mode's catch-up, which
merges the base into the memory branch by the same rules. The target closed the day first; the merge put the stale
close after it, and the day was in two reports. The merge leaves the stale close out, with every close made on it,
as the push's replay does (gitmem.publish.closed_first), and keeps the rest: the next close reports what only the
stale close held. Real clones of a bare origin, the real `gitmem` CLI on libfaketime's clock."""
from __future__ import annotations

from datetime import datetime
from pathlib import Path
from zoneinfo import ZoneInfo

from gitmem import gitio
from gitmem.errors import ExitCode
from gitmem.memory import log
from tests.close.test_close_late_runs import closes, gitmem_at, write_cycle
from tests.close.test_close_left_out import _local_cycle, stranded_close
from tests.support.cycle_support import clone, origin_and_clone
from tests.support.gitcli import git
from tests.support.helpers import DANA, GitRepo, make_repo

UTC = ZoneInfo("UTC")


def _stale_close_on_a_side_branch(tmp_path: Path) -> tuple[GitRepo, GitRepo, Path]:
    """(the runner's clone, the human's clone, origin): the runner's close of 2026-11-14 at 23:47 never reached origin
    (exit 6), a cycle at 23:50 ran on it, and the runner's branch went to origin as `gitmem/close-2026-11-14`; the
    human's clone closed the 14th at 23:52 on main first."""
    runner, human, origin = stranded_close(
        tmp_path, lambda runner: _local_cycle(runner, datetime(2026, 11, 14, 23, 50, tzinfo=UTC)))
    git(runner.path, "push", "--quiet", "origin", "HEAD:refs/heads/gitmem/close-2026-11-14")
    git(human.path, "pull", "--quiet", "--ff-only")
    git(human.path, "fetch", "--quiet", "origin")
    return runner, human, origin


def _reports(text: str) -> list[tuple[str | None, list[str]]]:
    """Each close entry's day and the cycles its report holds."""
    return [(e.get("Day"), [line.split(" · ")[0] for line in (e.get("Done") or "").split("\n") if line])
            for e in closes(text)]


def test_gitmem_merge_of_a_branch_holding_a_stale_close_leaves_it_out(tmp_path: Path, git_env: None) -> None:
    runner, human, origin = _stale_close_on_a_side_branch(tmp_path)
    stale = git(runner.path, "rev-parse", "HEAD~1").strip()
    merged = gitmem_at(datetime(2026, 11, 15, 0, 20, tzinfo=UTC), human.path, "merge",
                       "origin/gitmem/close-2026-11-14")
    assert merged.returncode == ExitCode.OK, merged.stdout + merged.stderr
    text = human.read("LOG.md")
    assert _reports(text) == [("2026-11-14", ["cycle 1"])]
    assert ("left out 1 close commit(s) of origin/gitmem/close-2026-11-14: main closed 2026-11-14 first, and a day is "
            "in one report (the next close reports what only they held)") in merged.stdout
    assert [e.cycle for e in log.parse(text).entries if e.cycle is not None] == [1, 2]
    # Nothing is lost: the branch's commits, the stale close among them, are in history under the merge.
    assert git(human.path, "rev-parse", "HEAD^2") == git(runner.path, "rev-parse", "HEAD")
    assert git(human.path, "merge-base", "--is-ancestor", stale, "HEAD") == ""
    root = git(human.path, "rev-list", "--max-parents=0", "HEAD").strip()
    verified = gitmem_at(datetime(2026, 11, 15, 0, 25, tzinfo=UTC), human.path, "verify", "--range", f"{root}..HEAD")
    assert verified.returncode == ExitCode.OK, verified.stdout + verified.stderr
    again = gitmem_at(datetime(2026, 11, 15, 0, 30, tzinfo=UTC), human.path, "close", "--push", "--no-llm")
    assert again.returncode == ExitCode.OK, again.stdout + again.stderr
    assert _reports(git(origin, "show", "main:LOG.md")) == [("2026-11-14", ["cycle 1"]), ("2026-11-14", ["cycle 2"])]
    # Merged a second time, the branch is in main already.
    twice = gitmem_at(datetime(2026, 11, 15, 0, 40, tzinfo=UTC), human.path, "merge", "origin/gitmem/close-2026-11-14")
    assert twice.returncode == ExitCode.OK and "is already in main; nothing to merge" in twice.stdout, twice.stdout


def test_pull_request_modes_catch_up_leaves_out_the_memory_branchs_close_of_a_day_the_base_closed(
        tmp_path: Path, git_env: None) -> None:
    """The memory branch (its PR open) holds the runner's close of the 14th and a cycle after it; the human closed the
    14th on main meanwhile. The next run's catch-up merges main into the memory branch by memory rules: it leaves the
    branch's close out, keeps its cycle, and the branch moves on by a fast-forward (never a force-push)."""
    from gitmem.publish import pullrequest
    from gitmem.publish.pr_workflow import base_catch_up
    from gitmem.workspace import Workspace

    runner = make_repo(tmp_path / "runner")
    origin = origin_and_clone(tmp_path, runner)
    write_cycle(runner, datetime(2026, 11, 14, 9, 0, tzinfo=UTC))
    human = clone(origin, tmp_path / "human", DANA)
    pullrequest.prepare_branch(gitio.open_repo(runner.path))
    made = gitmem_at(datetime(2026, 11, 14, 23, 47, tzinfo=UTC), runner.path, "close", "--no-llm")
    assert made.returncode == ExitCode.OK, made.stdout + made.stderr
    _local_cycle(runner, datetime(2026, 11, 14, 23, 50, tzinfo=UTC))
    git(runner.path, "push", "--quiet", "origin", "gitmem/memory")
    proposed = git(runner.path, "rev-parse", "HEAD").strip()
    theirs = gitmem_at(datetime(2026, 11, 14, 23, 52, tzinfo=UTC), human.path, "close", "--push", "--no-llm")
    assert theirs.returncode == ExitCode.OK, theirs.stdout + theirs.stderr
    git(runner.path, "switch", "--quiet", "main")
    git(runner.path, "pull", "--quiet", "--ff-only")
    said: list[str] = []
    prepared = pullrequest.prepare_branch(gitio.open_repo(runner.path), is_open=lambda _: True,
                                          catch_up=base_catch_up(Workspace.at(runner.path), say=said.append))
    assert prepared.continued and prepared.branch == "gitmem/memory"
    assert _reports(runner.read("LOG.md")) == [("2026-11-14", ["cycle 1"])]
    assert ("left out 1 close commit(s) of gitmem/memory: main closed 2026-11-14 first, and a day is in one report "
            "(the next close reports what only they held)") in said, said
    assert git(runner.path, "merge-base", "--is-ancestor", proposed, "HEAD") == ""
    git(runner.path, "push", "--quiet", "origin", "gitmem/memory")       # a fast-forward of the PR's branch
    again = gitmem_at(datetime(2026, 11, 15, 0, 30, tzinfo=UTC), runner.path, "close", "--no-llm")
    assert again.returncode == ExitCode.OK, again.stdout + again.stderr
    assert _reports(runner.read("LOG.md")) == [("2026-11-14", ["cycle 1"]), ("2026-11-14", ["cycle 2"])]
