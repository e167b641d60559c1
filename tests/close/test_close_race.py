"""Two closes of one day in the same moment, each committed before either pushed: the scheduled close on the
runner and the same close run by hand on the human's clone (or a catch-up). Replayed after the other, the second
one's entry reported the day's cycles again. The one that reaches the remote second steps aside: one close entry
of the day, each cycle in one report, and the loser's branch at the remote's tip. Real clones of a bare origin; the
human's close is the real CLI on libfaketime's clock, run while the runner's close words its report."""
from __future__ import annotations

from datetime import datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from gitmem.close import run_close
from gitmem.errors import ExitCode
from gitmem.workspace import Workspace
from tests.close.test_close_late_runs import _PushingModel, closes, gitmem_at, write_cycle
from tests.support.cycle_support import clone, origin_and_clone
from tests.support.gitcli import git
from tests.support.helpers import DANA, GitRepo, make_repo
from tests.support.world import Clock

UTC = ZoneInfo("UTC")


def _race(tmp_path: Path, *, theirs: datetime, ours: datetime, cycle_between: bool = False):
    runner = make_repo(tmp_path / "runner")
    origin = origin_and_clone(tmp_path, runner)
    write_cycle(runner, datetime(2026, 11, 14, 9, 0, tzinfo=UTC))
    human = clone(origin, tmp_path / "human", DANA)
    done: list[str] = []

    def the_human_closes_first() -> None:
        by_hand = gitmem_at(theirs, human.path, "close", "--push", "--no-llm")
        done.append(by_hand.stdout + by_hand.stderr)
        assert by_hand.returncode == ExitCode.OK, done[-1]

    result = run_close(Workspace.at(runner.path), push=True, use_llm=True, client=_PushingModel(the_human_closes_first),
                       clock=Clock(ours))
    return runner, origin, result, done


def test_the_close_that_pushes_second_steps_aside_and_each_cycle_is_in_one_report(tmp_path: Path,
                                                                                  git_env: None) -> None:
    runner, origin, result, done = _race(tmp_path, theirs=datetime(2026, 11, 14, 23, 48, tzinfo=UTC),
                                         ours=datetime(2026, 11, 14, 23, 47, tzinfo=UTC))
    assert done[0].startswith("closed 2026-11-14: 1 cycle"), done
    reports = closes(git(origin, "show", "main:LOG.md"))
    assert [(e.get("Day"), e.get("Done")) for e in reports] == [("2026-11-14", "cycle 1 · built · task at 09:00 — "
                                                                                "shipped it")]
    assert result.push is None and result.status == "already-closed"
    assert result.message.startswith("2026-11-14 is already closed (LOG.md:")
    assert result.message.endswith("; origin/main got another close first, made at 2026-11-14 23:48 UTC (LOG.md:12): "
                                   "this close stepped aside and closed again on it")
    tip = git(origin, "rev-parse", "main").strip()
    assert tip == git(runner.path, "rev-parse", "HEAD").strip()
    assert git(runner.path, "status", "--porcelain") == ""
    # The next day's close reports the next day only.
    write_cycle(runner, datetime(2026, 11, 15, 9, 0, tzinfo=UTC))
    second = gitmem_at(datetime(2026, 11, 15, 23, 47, tzinfo=UTC), runner.path, "close", "--push", "--no-llm")
    assert second.returncode == ExitCode.OK, second.stdout + second.stderr
    assert [(e.get("Day"), (e.get("Done") or "").split(" · ")[0]) for e in closes(git(origin, "show",
                                                                                       "main:LOG.md"))] == [
        ("2026-11-14", "cycle 1"), ("2026-11-15", "cycle 2")]


def test_a_catch_up_beaten_to_one_of_its_days_closes_again_the_days_left_open(tmp_path: Path,
                                                                             git_env: None) -> None:
    """The runner's close of the 15th catches up the 14th, which had no close when it read LOG; the human's late
    close of the 14th reaches the remote first. The runner closes again on it: the 15th alone."""
    runner, origin, result, done = _race(tmp_path, theirs=datetime(2026, 11, 14, 23, 48, tzinfo=UTC),
                                         ours=datetime(2026, 11, 15, 23, 47, tzinfo=UTC))
    assert result.status == "closed" and result.push is not None and result.push.status.exit_code == ExitCode.OK
    assert [(e.get("Day"), (e.get("Cycles") or "").split(" (")[0]) for e in closes(git(origin, "show",
                                                                                       "main:LOG.md"))] == [
        ("2026-11-14", "1 cycle"), ("2026-11-15", "no cycles ran on 2026-11-15")]
    assert result.days == ["2026-11-15"] and "this close stepped aside and closed again on it" in result.message


def _close_on_first_push(runner: Path, human: Path, when: datetime, *, then: str = "") -> Path:
    """The runner's pre-push hook runs the human's `close --push` (at `when`) once: the other close lands on the
    remote after the runner's close checked the remote and before its push, the narrowest window of the race.
    `then`: shell lines the hook runs right after it, once too."""
    from tests.close.test_close_late_runs import FAKETIME
    from tests.support.hostile import GITMEM

    said = runner.parent / "human-close.out"
    hook = runner / ".git" / "hooks" / "pre-push"
    hook.parent.mkdir(exist_ok=True)
    hook.write_text(f"""#!/bin/sh
[ -e '{said}' ] && exit 0
cd '{human}' && env -u LD_PRELOAD -u FAKETIME -u GIT_DIR -u GIT_WORK_TREE -u GIT_INDEX_FILE \\
    '{FAKETIME}' -f '@{when:%Y-%m-%d %H:%M:%S}' '{GITMEM}' close --push --no-llm >'{said}' 2>&1
status=$?
{then}
echo "exit $status" >>'{said}'
""")
    hook.chmod(0o755)
    return said


@pytest.mark.parametrize("theirs", [datetime(2026, 11, 14, 23, 47, 20, tzinfo=UTC),
                                    datetime(2026, 11, 14, 23, 48, 20, tzinfo=UTC)])
def test_a_close_whose_twin_landed_just_before_its_push_steps_aside(tmp_path: Path, git_env: None,
                                                                    theirs: datetime) -> None:
    """Two closes of one day, seconds apart, on two clones: the other lands after this close looked at the remote
    and before it pushed. Rebased onto it, this close made an empty commit (the same minute) or a second report of
    the day (the next minute). It steps aside when its push finds the other close, before it rebases."""
    runner = make_repo(tmp_path / "runner")
    origin = origin_and_clone(tmp_path, runner)
    write_cycle(runner, datetime(2026, 11, 14, 9, 0, tzinfo=UTC))
    human = clone(origin, tmp_path / "human", DANA)
    said = _close_on_first_push(runner.path, human.path, theirs)
    ours = gitmem_at(datetime(2026, 11, 14, 23, 47, 5, tzinfo=UTC), runner.path, "close", "--push", "--no-llm")
    assert ours.returncode == ExitCode.OK, ours.stdout + ours.stderr
    assert said.read_text().endswith("exit 0\n"), said.read_text()
    assert ours.stdout.splitlines()[0].endswith(f"origin/main got another close first, made at {theirs:%Y-%m-%d %H:%M} "
                                                "UTC (LOG.md:12): this close stepped aside and closed again on it")
    subjects = git(origin, "log", "--format=%s", "main").splitlines()
    assert subjects == ["gitmem: close 2026-11-14", "gitmem: cycle", "start from the gitmem template"]
    assert git(origin, "rev-parse", "main") == git(runner.path, "rev-parse", "HEAD")
    assert [e.get("Day") for e in closes(git(origin, "show", "main:LOG.md"))] == ["2026-11-14"]
    assert git(runner.path, "status", "--porcelain") == ""


def test_a_close_whose_push_failed_steps_aside_when_pushed_after_another_close_of_its_day(tmp_path: Path,
                                                                                         git_env: None) -> None:
    """The runner's close is committed but its push fails (exit 6); the human's close of the same day reaches the
    remote; the runner's next `close --push` would push its stranded close after it, and cycle 1 would be in two
    reports. It steps aside instead, and a later day's close made on it steps aside with it."""
    runner, origin = _stranded_close_beaten_by_the_humans(tmp_path)
    again = gitmem_at(datetime(2026, 11, 15, 0, 30, tzinfo=UTC), runner.path, "close", "--push", "--no-llm")
    assert again.returncode == ExitCode.OK, again.stdout + again.stderr
    assert again.stdout.splitlines()[0] == (
        "2026-11-14 is already closed (LOG.md:12); nothing changed; origin/main got another close first, made at "
        "2026-11-14 23:52 UTC (LOG.md:12): the 1 close(s) made here that never reached it stepped aside and closed "
        "again on it")
    assert [(e.get("Day"), e.get("Done")) for e in closes(git(origin, "show", "main:LOG.md"))] == [
        ("2026-11-14", "cycle 1 · built · task at 09:00 — shipped it")]
    assert git(origin, "rev-parse", "main") == git(runner.path, "rev-parse", "HEAD")


def _stranded_close_beaten_by_the_humans(tmp_path: Path) -> tuple[GitRepo, Path]:
    """(the runner's clone, origin): the runner's close of 2026-11-14 committed but not pushed (exit 6: its pre-push
    hook failed), then the human's close of that day pushed to origin; the runner's hook is gone again."""
    runner = make_repo(tmp_path / "runner")
    origin = origin_and_clone(tmp_path, runner)
    write_cycle(runner, datetime(2026, 11, 14, 9, 0, tzinfo=UTC))
    human = clone(origin, tmp_path / "human", DANA)
    offline = runner.path / ".git" / "hooks" / "pre-push"
    offline.parent.mkdir(exist_ok=True)
    offline.write_text("#!/bin/sh\necho the network is down >&2\nexit 1\n")
    offline.chmod(0o755)
    failed = gitmem_at(datetime(2026, 11, 14, 23, 47, tzinfo=UTC), runner.path, "close", "--push", "--no-llm")
    assert failed.returncode == ExitCode.LOCAL_ONLY, failed.stdout + failed.stderr
    theirs = gitmem_at(datetime(2026, 11, 14, 23, 52, tzinfo=UTC), human.path, "close", "--push", "--no-llm")
    assert theirs.returncode == ExitCode.OK, theirs.stdout + theirs.stderr
    offline.unlink()
    return runner, origin


def test_a_stranded_close_and_the_next_days_close_on_it_both_step_aside(tmp_path: Path, git_env: None) -> None:
    runner, origin = _stranded_close_beaten_by_the_humans(tmp_path)
    next_day = gitmem_at(datetime(2026, 11, 15, 23, 47, tzinfo=UTC), runner.path, "close", "--push", "--no-llm")
    assert next_day.returncode == ExitCode.OK, next_day.stdout + next_day.stderr
    assert next_day.stdout.splitlines()[0].startswith("closed 2026-11-15: no cycles ran on 2026-11-15")
    assert ("this close and 1 made here before that never reached it stepped aside and closed again on it"
            in next_day.stdout)
    assert [(e.get("Day"), (e.get("Done") or "")[:7]) for e in closes(git(origin, "show", "main:LOG.md"))] == [
        ("2026-11-14", "cycle 1"), ("2026-11-15", "")]


# A cycle that starts in the runner's checkout and holds its lock (a real process taking the real lock) until
# `release` exists; it writes its pid to `ready` once it holds it.
_HOLDER = """
import os, sys, time
from pathlib import Path
from gitmem import gitio
from gitmem.workspace import cyclelock

runner, ready, release = sys.argv[1:4]
with cyclelock.acquire(gitio.state_dir(gitio.open_repo(Path(runner))), what="cycle"):
    Path(ready).write_text(str(os.getpid()))
    deadline = time.monotonic() + 120
    while not Path(release).exists() and time.monotonic() < deadline:
        time.sleep(0.05)
"""


class CycleStarts:
    """A cycle that starts in `runner`'s checkout while its push runs: `lines` are the shell lines a pre-push hook
    runs to start it (they return once it holds the lock); `end()` lets it finish and waits until its lock is gone."""

    def __init__(self, runner: Path, folder: Path) -> None:
        import sys

        script, self.ready, self.release = folder / "holder.py", folder / "holder.pid", folder / "holder.release"
        script.write_text(_HOLDER)
        self.lock = runner / ".git" / "gitmem" / "cycle.lock"
        self.lines = f"""
env -u LD_PRELOAD -u FAKETIME -u GIT_DIR -u GIT_WORK_TREE -u GIT_INDEX_FILE \\
    setsid '{sys.executable}' '{script}' '{runner}' '{self.ready}' '{self.release}' </dev/null >/dev/null 2>&1 &
while [ ! -s '{self.ready}' ]; do sleep 0.05; done"""

    @property
    def pid(self) -> int:
        return int(self.ready.read_text())

    def on_first_push(self, runner: Path) -> None:
        """The runner's pre-push hook starts the cycle, on the first push only."""
        hook = runner / ".git" / "hooks" / "pre-push"
        hook.parent.mkdir(exist_ok=True)
        hook.write_text(f"#!/bin/sh\n[ -e '{self.ready}' ] && exit 0\n{self.lines}\nexit 0\n")
        hook.chmod(0o755)

    def end(self) -> None:
        import time

        self.release.touch()
        deadline = time.monotonic() + 30
        while self.lock.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not self.lock.exists()


def test_a_close_that_finds_a_cycle_started_while_it_pushed_leaves_the_branch_to_it(
        tmp_path: Path, git_env: None) -> None:
    """The other close lands while this close pushes (the runner's pre-push hook lands it once), and a cycle starts in
    the runner's checkout right then: the close, finding the other close, would retake its lock to step aside, but
    the cycle holds it and HEAD is the cycle's to move. The close said only what the lock said, exit 3 as if it had
    refused to start, its report unshown though it committed. Now: nothing moves and nothing is pushed (exit 6, the
    close's commit only on this disk), the message says what happened and what to run once the cycle ends, and that
    run leaves the close out: one report of the day."""
    runner = make_repo(tmp_path / "runner")
    origin = origin_and_clone(tmp_path, runner)
    write_cycle(runner, datetime(2026, 11, 14, 9, 0, tzinfo=UTC))
    human = clone(origin, tmp_path / "human", DANA)
    cycle = CycleStarts(runner.path, tmp_path)
    said = _close_on_first_push(runner.path, human.path, datetime(2026, 11, 14, 23, 48, 20, tzinfo=UTC),
                                then=cycle.lines)
    try:
        ours = gitmem_at(datetime(2026, 11, 14, 23, 47, 5, tzinfo=UTC), runner.path, "close", "--push", "--no-llm")
        assert said.read_text().endswith("exit 0\n"), said.read_text()
        assert ours.returncode == ExitCode.LOCAL_ONLY, ours.stdout + ours.stderr
        assert ours.stdout.splitlines()[0] == "closed 2026-11-14: 1 cycle (1 built, 0 published, 0 no-build)"
        made = git(runner.path, "rev-parse", "HEAD")
        assert f"committed {made[:10]} gitmem: close 2026-11-14" in ours.stdout
        assert ours.stderr.splitlines()[-1].startswith(
            "gitmem: close: push: origin/main got another close while this one pushed, and the cycle pid "
            f"{cycle.pid} on "), ours.stderr
        assert ours.stderr.splitlines()[-1].endswith(
            "runs in this checkout now, so the branch was left to it: nothing was pushed, and what this "
            "branch holds that origin/main lacks is only on this disk; once it ends, run `gitmem close --push` "
            "again (a close of a day origin/main closed first is left out)"), ours.stderr
        assert [str(e.when) for e in closes(git(origin, "show", "main:LOG.md"))] == ["2026-11-14 23:48 UTC"]
        assert git(runner.path, "log", "--format=%s", "-1").strip() == "gitmem: close 2026-11-14"
        assert git(runner.path, "status", "--porcelain") == ""
    finally:
        cycle.end()
    again = gitmem_at(datetime(2026, 11, 14, 23, 55, tzinfo=UTC), runner.path, "close", "--push", "--no-llm")
    assert again.returncode == ExitCode.OK, again.stdout + again.stderr
    assert [str(e.when) for e in closes(git(origin, "show", "main:LOG.md"))] == ["2026-11-14 23:48 UTC"]
    assert git(origin, "rev-parse", "main") == git(runner.path, "rev-parse", "HEAD")
