"""A close that never reached the remote (its push failed, exit 6), with other unpublished work on top of it (a
human's commit, a cycle), while another clone's close of the same day reached the remote: the later push replayed
the stale close after the other one, and the day was in two reports. The rebase leaves the stale close out (and every
close made on it) and replays the rest, whichever push carries it (a close's or a cycle's); a close whose push left it
out says so and closes again, naming no other clone's commit as its own. Real clones of a bare origin, the real
`gitmem` CLI on libfaketime's clock."""
from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from gitmem.errors import ExitCode
from gitmem.memory import log
from gitmem.memory_writer import MemoryWriter
from gitmem.workspace import Workspace
from tests.close.test_close_late_runs import closes, gitmem_at, write_cycle
from tests.close.test_close_race import _close_on_first_push
from tests.support.cycle_support import clone, origin_and_clone
from tests.support.gitcli import git
from tests.support.helpers import AGENT, DANA, GitRepo, make_repo
from tests.support.world import Clock

UTC = ZoneInfo("UTC")


def _offline(repo: GitRepo) -> Path:
    """A pre-push hook that fails every push from `repo` (the network is down); unlink it to come back."""
    hook = repo.path / ".git" / "hooks" / "pre-push"
    hook.parent.mkdir(exist_ok=True)
    hook.write_text("#!/bin/sh\necho the network is down >&2\nexit 1\n")
    hook.chmod(0o755)
    return hook


def _local_cycle(repo: GitRepo, when: datetime) -> None:
    """A cycle's LOG entry and NOW block at `when`, committed by the agent identity, not pushed."""
    ws = Workspace.at(repo.path)
    memory = MemoryWriter(ws, clock=Clock(when), author_email=AGENT[1])
    memory.add_log_entry(task=f"task at {when:%H:%M}", outcome="built", result="shipped it")
    memory.add_now_block(did="a cycle", human="nothing", next="carry on")
    repo.stage("LOG.md", "NOW.md")
    repo.commit("gitmem: cycle", author=AGENT)


def stranded_close(tmp_path: Path, on_it: Callable[[GitRepo], None],
                   before_theirs: Callable[[GitRepo], None] = lambda _human: None) -> tuple[GitRepo, GitRepo, Path]:
    """(the runner's clone, the human's clone, origin): the runner's close of 2026-11-14 at 23:47 committed but not
    pushed (exit 6), `on_it(runner)` made on top of it, `before_theirs(human)` in the human's clone, then that clone's
    own close of the day at 23:52 pushed to origin; the runner is online again."""
    runner = make_repo(tmp_path / "runner")
    origin = origin_and_clone(tmp_path, runner)
    write_cycle(runner, datetime(2026, 11, 14, 9, 0, tzinfo=UTC))
    human = clone(origin, tmp_path / "human", DANA)
    offline = _offline(runner)
    failed = gitmem_at(datetime(2026, 11, 14, 23, 47, tzinfo=UTC), runner.path, "close", "--push", "--no-llm")
    assert failed.returncode == ExitCode.LOCAL_ONLY, failed.stdout + failed.stderr
    on_it(runner)
    before_theirs(human)
    theirs = gitmem_at(datetime(2026, 11, 14, 23, 52, tzinfo=UTC), human.path, "close", "--push", "--no-llm")
    assert theirs.returncode == ExitCode.OK, theirs.stdout + theirs.stderr
    offline.unlink()
    return runner, human, origin


def _humans_notes(runner: GitRepo, *, cycle_after: bool = False) -> None:
    runner.commit_files({"notes.txt": "the human's notes\n"}, "notes", author=DANA)
    if cycle_after:
        _local_cycle(runner, datetime(2026, 11, 14, 23, 50, tzinfo=UTC))


def _stranded_close_under(tmp_path: Path, *, cycle_after: bool) -> tuple[GitRepo, Path]:
    """(the runner's clone, origin): `stranded_close` with a human's commit on the close in the runner's clone (and
    with `cycle_after`, a cycle at 23:50 there too)."""
    runner, _, origin = stranded_close(tmp_path, lambda runner: _humans_notes(runner, cycle_after=cycle_after))
    return runner, origin


def test_a_stranded_close_under_a_humans_commit_is_left_out_when_another_close_of_its_day_landed(
        tmp_path: Path, git_env: None) -> None:
    runner, origin = _stranded_close_under(tmp_path, cycle_after=False)
    again = gitmem_at(datetime(2026, 11, 15, 0, 30, tzinfo=UTC), runner.path, "close", "--push", "--no-llm")
    assert again.returncode == ExitCode.OK, again.stdout + again.stderr
    reports = closes(git(origin, "show", "main:LOG.md"))
    assert [(e.get("Day"), str(e.when), e.get("Done")) for e in reports] == [
        ("2026-11-14", "2026-11-14 23:52 UTC", "cycle 1 · built · task at 09:00 — shipped it")]
    # The human's commit reached origin as they made it; NOW holds one plan for the 15th, the remote's close's.
    assert git(origin, "log", "--format=%an|%s", "main").splitlines() == [
        "Dana Human|notes", "gitmem-agent|gitmem: close 2026-11-14", "gitmem-agent|gitmem: cycle",
        "Ada Human|start from the gitmem template"]
    assert git(origin, "show", "main:notes.txt") == "the human's notes\n"
    assert git(origin, "show", "main:NOW.md").count("· plan for 2026-11-15") == 1
    assert git(origin, "rev-parse", "main") == git(runner.path, "rev-parse", "HEAD")
    assert git(runner.path, "status", "--porcelain") == ""
    assert ("gitmem: close: push: left out 1 close commit(s) made here: the remote closed 2026-11-14 first, and a "
            "day is in one report (the next close reports what only they held)") in again.stderr


def test_a_cycle_made_on_a_stranded_close_is_kept_and_reported_once(tmp_path: Path, git_env: None) -> None:
    """A cycle at 23:50 on top of the stranded close (and the human's commit): the stranded close and the second
    close of the day made on it are left out; the cycle lands below the remote's close, and the close, run again
    on what the remote holds, reports it: each cycle in one report."""
    runner, origin = _stranded_close_under(tmp_path, cycle_after=True)
    again = gitmem_at(datetime(2026, 11, 15, 0, 30, tzinfo=UTC), runner.path, "close", "--push", "--no-llm")
    assert again.returncode == ExitCode.OK, again.stdout + again.stderr
    pushed = log.parse(git(origin, "show", "main:LOG.md")).entries
    assert [(e.cycle, str(e.when), e.get("Day"), (e.get("Done") or "")[:7]) for e in pushed] == [
        (1, "2026-11-14 09:00 UTC", None, ""), (None, "2026-11-14 23:52 UTC", "2026-11-14", "cycle 1"),
        (2, "2026-11-14 23:50 UTC", None, ""), (None, "2026-11-15 00:30 UTC", "2026-11-14", "cycle 2")]
    assert git(origin, "show", "main:notes.txt") == "the human's notes\n"
    assert "left out 2 close commit(s) made here: the remote closed 2026-11-14 first" in again.stderr
    assert again.stdout.splitlines()[0] == (
        "closed 2026-11-14 again: 1 cycle (1 built, 0 published, 0 no-build) since its close at 2026-11-14 23:52 UTC "
        "(LOG.md:12); origin/main held a close of the same day first: the push left out this close and 1 made here "
        "before that never reached it, and the close ran again on what origin/main holds")
    assert git(origin, "rev-parse", "main") == git(runner.path, "rev-parse", "HEAD")
    verified = gitmem_at(datetime(2026, 11, 15, 0, 40, tzinfo=UTC), runner.path, "verify", "--range", "HEAD~5..HEAD")
    assert verified.returncode == ExitCode.OK, verified.stdout + verified.stderr


@pytest.mark.parametrize("theirs", [datetime(2026, 11, 14, 23, 47, 20, tzinfo=UTC),
                                    datetime(2026, 11, 14, 23, 48, 20, tzinfo=UTC)])
def test_a_close_left_out_of_its_push_names_no_commit_of_another_clone(tmp_path: Path, git_env: None,
                                                                       theirs: datetime) -> None:
    """The human's commit waits unpushed under this close; the human's other clone closes the day and lands while
    this close pushes (in the same minute its change is this close's own, else a report of its own). The push
    publishes the human's commit and leaves this close out: the close said `committed <id>` of the human's
    commit as replayed, as if it were the close. It says what happened, and closes again on what the remote holds."""
    runner = make_repo(tmp_path / "runner")
    origin = origin_and_clone(tmp_path, runner)
    write_cycle(runner, datetime(2026, 11, 14, 9, 0, tzinfo=UTC))
    human = clone(origin, tmp_path / "human", DANA)
    runner.commit_files({"notes.txt": "the human's notes\n"}, "notes", author=DANA)
    said = _close_on_first_push(runner.path, human.path, theirs)
    ours = gitmem_at(datetime(2026, 11, 14, 23, 47, 5, tzinfo=UTC), runner.path, "close", "--push", "--no-llm")
    assert ours.returncode == ExitCode.OK, ours.stdout + ours.stderr
    assert said.read_text().endswith("exit 0\n"), said.read_text()
    assert [e.get("Day") for e in closes(git(origin, "show", "main:LOG.md"))] == ["2026-11-14"]
    assert git(origin, "log", "--format=%an|%s", "main").splitlines()[:2] == [
        "Dana Human|notes", "gitmem-agent|gitmem: close 2026-11-14"]
    assert not [line for line in ours.stdout.splitlines() if line.startswith("committed ")], ours.stdout
    assert ours.stdout.splitlines()[0] == (
        "2026-11-14 is already closed (LOG.md:12); nothing changed; origin/main held a close of the same day first: "
        "the push left out this close, and the close ran again on what origin/main holds")
    assert git(origin, "rev-parse", "main") == git(runner.path, "rev-parse", "HEAD")


def _the_humans_close_lands_on_the_first_push(tmp_path: Path) -> tuple[GitRepo, Path, Path]:
    """The runner's checkout holding cycle 1 (2026-11-14 09:00), its origin, and what the human's close says (of
    23:48, from a clone that holds cycle 1 too), which the runner's first push lands on the remote right before it."""
    runner = make_repo(tmp_path / "runner")
    origin = origin_and_clone(tmp_path, runner)
    write_cycle(runner, datetime(2026, 11, 14, 9, 0, tzinfo=UTC))
    human = clone(origin, tmp_path / "human", DANA)
    return runner, origin, _close_on_first_push(runner.path, human.path, datetime(2026, 11, 14, 23, 48, 20, tzinfo=UTC))


def test_a_close_whose_branch_changed_while_another_close_landed_runs_again_and_pushes(
        tmp_path: Path, git_env: None, monkeypatch: pytest.MonkeyPatch) -> None:
    """The push finds another close of the day on the remote before it rebases (it landed while this close pushed:
    the runner's pre-push hook lands the human's close once), and the human commits in the runner's checkout right
    then, between that look and the close taking its lock again to step aside. The branch is no longer the close's
    alone, so it does not step aside, which would drop the human's commit. It gave up (exit 6: nothing was pushed,
    run it again); now it runs again at once: the push publishes the human's commit and leaves the close out (the
    remote closed its day first), and the close, run on what the remote holds, finds nothing more to report.

    The moment is made deterministic by wrapping the real `overtaken_by`: right after the push's look finds the other
    close, the human's commit is made (a real commit in the real checkout); every look runs as it is."""
    from gitmem.close import run_close

    runner, origin, said = _the_humans_close_lands_on_the_first_push(tmp_path)
    made = _commits_right_after_the_push_looked(monkeypatch, lambda: runner.commit_files(
        {"notes.txt": "the human's notes\n"}, "notes", author=DANA))
    result = run_close(Workspace.at(runner.path), push=True, clock=Clock(datetime(2026, 11, 14, 23, 47, tzinfo=UTC)))
    assert said.read_text().endswith("exit 0\n"), said.read_text()
    assert made and result.push is not None and result.push.status.exit_code == ExitCode.OK, result.push
    assert result.violations == [] and result.commit is None
    assert result.message == (
        "2026-11-14 is already closed (LOG.md:12); nothing changed; origin/main held a close of the same day first: "
        "the push left out the 1 close(s) made here that never reached it, and the close ran again on what "
        "origin/main holds; origin/main got another close while this one pushed, and this branch changed since: "
        "the close ran again on it")
    assert ("left out 1 close commit(s) made here: the remote closed 2026-11-14 first, and a day is in one report "
            "(the next close reports what only they held)") in result.push.messages
    assert [(e.get("Day"), str(e.when), e.get("Done")) for e in closes(git(origin, "show", "main:LOG.md"))] == [
        ("2026-11-14", "2026-11-14 23:48 UTC", "cycle 1 · built · task at 09:00 — shipped it")]
    assert git(origin, "log", "--format=%an|%s", "main").splitlines() == [
        "Dana Human|notes", "gitmem-agent|gitmem: close 2026-11-14", "gitmem-agent|gitmem: cycle",
        "Ada Human|start from the gitmem template"]
    assert git(origin, "show", "main:notes.txt") == "the human's notes\n"
    assert git(origin, "rev-parse", "main") == git(runner.path, "rev-parse", "HEAD")
    assert git(runner.path, "status", "--porcelain") == ""


def _commits_right_after_the_push_looked(monkeypatch: pytest.MonkeyPatch, commit: Callable[[], object]) -> list[str]:
    """Wrap the real `overtaken_by` so that `commit` (a real commit in the runner's checkout) is made once, right
    after a look that finds another close: after the push's look, before the close takes its lock again to judge
    the branch. Every look runs as it is. The list holds the commit once made."""
    from gitmem.close import overtaken

    looked = overtaken.overtaken_by
    made: list[str] = []

    def and_then_a_commit(*args: object) -> overtaken.Overtaken | None:
        found = looked(*args)       # type: ignore[arg-type]
        if found is not None and not made:
            made.append(str(commit()))
        return found

    monkeypatch.setattr(overtaken, "overtaken_by", and_then_a_commit)
    return made


def test_a_cycles_push_leaves_out_a_stranded_close_of_a_day_the_remote_closed(tmp_path: Path, git_env: None) -> None:
    """Whichever push carries the stranded close to the remote: here the runner's next cycle's. It publishes the
    human's commit and its own cycle, and leaves the close out; the next close reports nothing twice."""
    from gitmem.cycle.runner import Settings, run_cycle
    from tests.support.cycle_support import WritingBackend, built

    runner, origin = _stranded_close_under(tmp_path, cycle_after=False)
    report = run_cycle(Workspace.at(runner.path), WritingBackend(built("write hello.txt")),
                       settings=Settings(push=True, sleep=lambda s: None))
    assert report.exit_code == ExitCode.OK, report
    pushed = log.parse(git(origin, "show", "main:LOG.md")).entries
    assert [(e.cycle, e.get("Day")) for e in pushed] == [(1, None), (None, "2026-11-14"), (2, None)]
    assert git(origin, "show", "main:notes.txt") == "the human's notes\n"
    assert git(origin, "log", "--format=%an|%s", "-2", "main").splitlines()[1] == "Dana Human|notes"
    assert git(origin, "rev-parse", "main") == git(runner.path, "rev-parse", "HEAD")


def test_a_left_out_close_whose_cycle_another_writer_numbered_first_keeps_the_cycle_renumbered(
        tmp_path: Path, git_env: None) -> None:
    """The human's clone ran its own cycle 2 (23:49) before its close; the runner's cycle 2 (23:50, on the stranded
    close) becomes cycle 3 as it is replayed without the closes, and the close run again reports it alone."""
    runner, _, origin = stranded_close(tmp_path, lambda runner: _humans_notes(runner, cycle_after=True),
                                       lambda human: write_cycle(human, datetime(2026, 11, 14, 23, 49, tzinfo=UTC)))
    again = gitmem_at(datetime(2026, 11, 15, 0, 30, tzinfo=UTC), runner.path, "close", "--push", "--no-llm")
    assert again.returncode == ExitCode.OK, again.stdout + again.stderr
    pushed = log.parse(git(origin, "show", "main:LOG.md")).entries
    assert [(e.cycle, str(e.when), (e.get("Done") or "").replace("\n", " | ")) for e in pushed] == [
        (1, "2026-11-14 09:00 UTC", ""), (2, "2026-11-14 23:49 UTC", ""),
        (None, "2026-11-14 23:52 UTC", "cycle 1 · built · task at 09:00 — shipped it | cycle 2 · built · task at "
                                       "23:49 — shipped it"),
        (3, "2026-11-14 23:50 UTC", ""), (None, "2026-11-15 00:30 UTC", "cycle 3 · built · task at 23:50 — shipped it")]
    assert git(origin, "show", "main:notes.txt") == "the human's notes\n"


def test_a_replay_that_fails_verify_says_nothing_of_the_closes_it_would_have_left_out(
        tmp_path: Path, git_env: None) -> None:
    """The human's commit on the stranded close rewrote an old LOG line (made without the hooks). The push leaves the
    close out and replays the human's commit, which fails `gitmem verify`: the branch goes back, every commit on it,
    and the work goes to a side branch. The push's output said the close was left out and the commits rebased,
    though neither stands; it says only what does."""
    stranded: list[str] = []

    def reword(runner: GitRepo) -> None:
        stranded.append(git(runner.path, "rev-parse", "HEAD"))
        rewritten = runner.read("LOG.md").replace("- Task: task at 09:00", "- Task: task at 09:00, rewritten")
        assert rewritten != runner.read("LOG.md")
        runner.commit_files({"LOG.md": rewritten}, "reword cycle 1", author=DANA)

    runner, _, origin = stranded_close(tmp_path, reword)
    tip = git(runner.path, "rev-parse", "HEAD")
    again = gitmem_at(datetime(2026, 11, 15, 0, 30, tzinfo=UTC), runner.path, "close", "--push", "--no-llm")
    assert again.returncode == ExitCode.SALVAGED, again.stdout + again.stderr
    told = [line.removeprefix("gitmem: close: push: ") for line in again.stderr.splitlines()
            if line.startswith("gitmem: close: push: ")]
    assert told[0].startswith("the rebased commits fail `gitmem verify`: LOG.md:"), told
    assert not [line for line in told if "left out" in line or line.startswith("rebased ")], told
    # Nothing is lost: the side branch holds the stranded close and the human's commit as they were made.
    assert git(origin, "rev-parse", "gitmem/close-2026-11-14") == tip
    assert git(runner.path, "rev-parse", "gitmem/close-2026-11-14~1") == stranded[0]
    assert [e.get("Day") for e in closes(git(origin, "show", "main:LOG.md"))] == ["2026-11-14"]


def test_a_close_left_out_of_its_push_does_not_close_again_while_a_cycle_started_here_holds_the_lock(
        tmp_path: Path, git_env: None) -> None:
    """The push publishes the human's commit and leaves the stranded close out; a cycle started in the runner's
    checkout while it pushed (a real process holding the real lock). The close, about to run again on what the
    remote holds, stopped on the lock (exit 3), the push's report unshown though it landed. Now it says the push left
    the close out and that it did not close again, names no commit, and exits 0: the remote holds the day's close and
    everything else; the next close, once the cycle ends, finds nothing more to report."""
    from tests.close.test_close_race import CycleStarts

    runner, origin = _stranded_close_under(tmp_path, cycle_after=False)
    cycle = CycleStarts(runner.path, tmp_path)
    cycle.on_first_push(runner.path)
    try:
        again = gitmem_at(datetime(2026, 11, 15, 0, 30, tzinfo=UTC), runner.path, "close", "--push", "--no-llm")
        assert again.returncode == ExitCode.OK, again.stdout + again.stderr
        first = again.stdout.splitlines()[0]
        assert first.startswith(
            "2026-11-14 is already closed (LOG.md:12); nothing changed; origin/main held a close of the same day "
            "first: the push left out the 1 close(s) made here that never reached it; it did not close again, as the "
            f"cycle pid {cycle.pid} on "), first
        assert first.endswith(" runs in this checkout now: once it ends, run `gitmem close --push` again to report "
                              "what only the close(s) left out held"), first
        assert not [line for line in again.stdout.splitlines() if line.startswith("committed ")], again.stdout
        assert "push: left out 1 close commit(s) made here: the remote closed 2026-11-14 first" in again.stderr
    finally:
        cycle.end()
    assert git(origin, "show", "main:notes.txt") == "the human's notes\n"
    assert git(origin, "rev-parse", "main") == git(runner.path, "rev-parse", "HEAD")
    assert [e.get("Day") for e in closes(git(origin, "show", "main:LOG.md"))] == ["2026-11-14"]
    later = gitmem_at(datetime(2026, 11, 15, 0, 40, tzinfo=UTC), runner.path, "close", "--push", "--no-llm")
    assert later.returncode == ExitCode.OK, later.stdout + later.stderr
    assert [e.get("Day") for e in closes(git(origin, "show", "main:LOG.md"))] == ["2026-11-14"]


def test_a_close_run_again_after_its_branch_changed_reports_what_only_it_held_and_the_cycle_made_meanwhile(
        tmp_path: Path, git_env: None, monkeypatch: pytest.MonkeyPatch) -> None:
    """Cycle 2 (23:40) reached the remote after the human's clone last pulled, and that clone holds a commit of its
    own, so the human's close reports cycle 1 alone (and names cycle 2 as arrived); this close reported both. A
    cycle (23:50) commits in the runner's checkout right after the push's look found the human's close. The close
    runs again: the push replays that cycle and leaves out the closes made here (the one of 23:47, and the second
    close of the day the run again made on the cycle), and the close run on what the remote holds reports cycles 2
    and 3. Every cycle is in exactly one report on the remote, and no commit is lost."""
    from gitmem.close import run_close

    runner = make_repo(tmp_path / "runner")
    origin = origin_and_clone(tmp_path, runner)
    write_cycle(runner, datetime(2026, 11, 14, 9, 0, tzinfo=UTC))
    human = clone(origin, tmp_path / "human", DANA)
    human.commit_files({"notes.txt": "the human's notes\n"}, "notes", author=DANA)
    write_cycle(runner, datetime(2026, 11, 14, 23, 40, tzinfo=UTC))
    said = _close_on_first_push(runner.path, human.path, datetime(2026, 11, 14, 23, 48, 20, tzinfo=UTC))

    clock = Clock(datetime(2026, 11, 14, 23, 47, tzinfo=UTC))

    def a_cycle_here() -> str:
        _local_cycle(runner, datetime(2026, 11, 14, 23, 50, tzinfo=UTC))
        clock.moment = datetime(2026, 11, 14, 23, 51, tzinfo=UTC)        # the close runs on after it
        return git(runner.path, "rev-parse", "HEAD")

    made = _commits_right_after_the_push_looked(monkeypatch, a_cycle_here)
    result = run_close(Workspace.at(runner.path), push=True, clock=clock)
    assert said.read_text().endswith("exit 0\n"), said.read_text()
    assert made and result.push is not None and result.push.status.exit_code == ExitCode.OK, result.push
    assert result.violations == []
    pushed = log.parse(git(origin, "show", "main:LOG.md")).entries
    assert [(e.cycle, str(e.when), e.get("Done"), e.get("Arrived")) for e in pushed] == [
        (1, "2026-11-14 09:00 UTC", None, None), (2, "2026-11-14 23:40 UTC", None, None),
        (None, "2026-11-14 23:48 UTC", "cycle 1 · built · task at 09:00 — shipped it", "cycle 2"),
        (3, "2026-11-14 23:50 UTC", None, None),
        (None, "2026-11-14 23:51 UTC", "cycle 2 · built · task at 23:40 — shipped it\n"
                                       "cycle 3 · built · task at 23:50 — shipped it", None)]
    # No commit is lost: the human's, their close, both cycles of the runner; the closes made here were left out.
    assert git(origin, "log", "--format=%an|%s", "main").splitlines() == [
        "gitmem-agent|gitmem: close 2026-11-14", "gitmem-agent|gitmem: cycle", "gitmem-agent|gitmem: close 2026-11-14",
        "Dana Human|notes", "gitmem-agent|gitmem: cycle", "gitmem-agent|gitmem: cycle",
        "Ada Human|start from the gitmem template"]
    assert git(origin, "rev-parse", "main") == git(runner.path, "rev-parse", "HEAD")
    assert result.commit == git(runner.path, "rev-parse", "HEAD").strip()
    assert result.message.endswith("; origin/main got another close while this one pushed, and this branch changed "
                                   "since: the close ran again on it"), result.message
    verified = gitmem_at(datetime(2026, 11, 15, 0, 40, tzinfo=UTC), runner.path, "verify", "--range", "HEAD~4..HEAD")
    assert verified.returncode == ExitCode.OK, verified.stdout + verified.stderr


def test_a_close_run_again_after_its_branch_changed_whose_push_fails_keeps_the_work_here_and_exits_6(
        tmp_path: Path, git_env: None, monkeypatch: pytest.MonkeyPatch) -> None:
    """As above with the human's commit, but the remote refuses every push from then on (main and the close's
    fallback branches alike): the close ran again, its push failed for real, and the work is on the local fallback
    branch and this branch, exit 6, the message saying nothing reached the remote."""
    from gitmem.close import run_close
    from tests.support.gitcli import protect_branches

    runner, origin, said = _the_humans_close_lands_on_the_first_push(tmp_path)

    def the_humans_commit_and_a_closed_remote() -> str:
        protect_branches(origin, "main", "gitmem/*")
        return str(runner.commit_files({"notes.txt": "the human's notes\n"}, "notes", author=DANA))

    made = _commits_right_after_the_push_looked(monkeypatch, the_humans_commit_and_a_closed_remote)
    result = run_close(Workspace.at(runner.path), push=True, clock=Clock(datetime(2026, 11, 14, 23, 47, tzinfo=UTC)))
    assert said.read_text().endswith("exit 0\n"), said.read_text()
    assert made and result.push is not None and result.push.status.exit_code == ExitCode.LOCAL_ONLY, result.push
    assert result.push.side_branch == "gitmem/close-2026-11-14"
    assert result.push.messages[-1].startswith("NOTHING REACHED ORIGIN: "), result.push.messages
    assert [v.code for v in result.violations] == ["GM803"]
    # The human's commit, replayed on the remote's close (the one close of the day), is on both local branches.
    for branch in ("HEAD", "gitmem/close-2026-11-14"):
        assert git(runner.path, "log", "--format=%an|%s", branch).splitlines() == [
            "Dana Human|notes", "gitmem-agent|gitmem: close 2026-11-14", "gitmem-agent|gitmem: cycle",
            "Ada Human|start from the gitmem template"]
    assert git(runner.path, "show", "gitmem/close-2026-11-14:notes.txt") == "the human's notes\n"
    assert [str(e.when) for e in closes(git(origin, "show", "main:LOG.md"))] == ["2026-11-14 23:48 UTC"]


def test_a_close_that_cannot_run_again_after_its_branch_changed_keeps_the_work_here_and_exits_6(
        tmp_path: Path, git_env: None, monkeypatch: pytest.MonkeyPatch) -> None:
    """The human commits in the runner's checkout right after the push's look and leaves a draft uncommitted: the
    close, run again, would rebase over the draft, and refuses to. Nothing moves and nothing is pushed (exit 6); the
    message says why, and the draft, the human's commit and the close stay as they were."""
    from gitmem.close import run_close

    runner, origin, said = _the_humans_close_lands_on_the_first_push(tmp_path)

    def the_humans_commit_and_a_draft() -> str:
        made = str(runner.commit_files({"notes.txt": "the human's notes\n"}, "notes", author=DANA))
        (runner.path / "draft.txt").write_text("half a thought\n")
        return made

    made = _commits_right_after_the_push_looked(monkeypatch, the_humans_commit_and_a_draft)
    result = run_close(Workspace.at(runner.path), push=True, clock=Clock(datetime(2026, 11, 14, 23, 47, tzinfo=UTC)))
    assert said.read_text().endswith("exit 0\n"), said.read_text()
    assert made and result.push is not None and result.push.status.exit_code == ExitCode.LOCAL_ONLY, result.push
    told = result.push.messages[0]
    assert told.startswith("origin/main got another close while this one pushed, and this branch changed since, "
                           "and the close could not run again: the work tree has uncommitted changes: draft.txt; "
                           ), told
    assert told.endswith("; what this branch holds that origin/main lacks is only on this disk until `gitmem close "
                         "--push` runs again"), told
    # The refusal keeps its own code and place (GM801 at the draft), and GM803 quotes it on one line.
    assert [(v.path, v.line, v.code) for v in result.violations] == [
        ("draft.txt", 1, "GM801"), (".git/refs/heads/main", 1, "GM803")]
    assert result.violations[1].message == told
    assert (runner.path / "draft.txt").read_text() == "half a thought\n"
    assert git(runner.path, "log", "--format=%an|%s", "-3").splitlines() == [
        "Dana Human|notes", "gitmem-agent|gitmem: close 2026-11-14", "gitmem-agent|gitmem: cycle"]
    assert [str(e.when) for e in closes(git(origin, "show", "main:LOG.md"))] == ["2026-11-14 23:48 UTC"]


def test_a_close_refused_to_run_again_keeps_the_refusal_as_its_own_diagnostic_and_gm803_on_one_line(
        tmp_path: Path, git_env: None, monkeypatch: pytest.MonkeyPatch) -> None:
    """The human commits right after the push's look, and a git killed in the runner's checkout left its index lock:
    the close, run again, refuses with git's lock files listed on lines of their own (GM801 at the lock). That
    refusal was folded into the GM803 line, its code and place lost and its line breaks splitting the line. It stays
    a diagnostic of its own, and GM803 (and the push's message) say it on one line."""
    from gitmem.checks.render import render_text
    from gitmem.close import run_close

    runner = make_repo(tmp_path / "runner")
    origin = origin_and_clone(tmp_path, runner)
    write_cycle(runner, datetime(2026, 11, 14, 9, 0, tzinfo=UTC))
    human = clone(origin, tmp_path / "human", DANA)
    said = _close_on_first_push(runner.path, human.path, datetime(2026, 11, 14, 23, 48, 20, tzinfo=UTC))

    def the_humans_commit_and_a_killed_git() -> str:
        made = str(runner.commit_files({"notes.txt": "the human's notes\n"}, "notes", author=DANA))
        (runner.path / ".git" / "index.lock").write_text("")
        return made

    made = _commits_right_after_the_push_looked(monkeypatch, the_humans_commit_and_a_killed_git)
    result = run_close(Workspace.at(runner.path), push=True, clock=Clock(datetime(2026, 11, 14, 23, 47, tzinfo=UTC)))
    assert said.read_text().endswith("exit 0\n"), said.read_text()
    assert made and result.push is not None and result.push.status.exit_code == ExitCode.LOCAL_ONLY, result.push
    assert [(v.path, v.line, v.code) for v in result.violations] == [
        (".git/index.lock", 1, "GM801"), (".git/refs/heads/main", 1, "GM803")]
    assert [line for line in result.push.messages if "\n" in line] == [], result.push.messages
    gm803 = result.violations[1].message
    assert "\n" not in gm803 and gm803 == result.push.messages[0]
    assert ("and the close could not run again: git lock files are there: a git command is running in this checkout, "
            "or one was killed and left them: .git/index.lock when no git runs here, remove them") in gm803, gm803
    lines = render_text(result.violations).splitlines()
    assert [line.split(" ", 2)[:2] for line in lines] == [[".git/index.lock:1:", "GM801"],
                                                          [".git/refs/heads/main:1:", "GM803"]], lines
    assert git(runner.path, "log", "--format=%an|%s", "-2").splitlines() == [
        "Dana Human|notes", "gitmem-agent|gitmem: close 2026-11-14"]
    assert [str(e.when) for e in closes(git(origin, "show", "main:LOG.md"))] == ["2026-11-14 23:48 UTC"]


def _feature_branch(runner: GitRepo) -> str:
    """The human's branch `feature` in the runner's clone, one commit of theirs on main's tip; main checked out
    again. Its tip."""
    git(runner.path, "switch", "--quiet", "-c", "feature")
    runner.commit_files({"feature.txt": "the human's feature\n"}, "feature work", author=DANA)
    git(runner.path, "switch", "--quiet", "main")
    return git(runner.path, "rev-parse", "feature").strip()


def test_a_human_switching_branches_while_the_close_pushes_leaves_their_branch_untouched(
        tmp_path: Path, git_env: None) -> None:
    """While the close's push fetched, the human's close landed on origin and the human ran `git switch feature` in
    the runner's checkout (its pre-push hook does both, once). The push's next try rebased feature onto origin/main
    and published it there: the human's branch, never read by the close, pushed as main. The push goes on with main,
    by name (it still holds the close), and its look at what it fetched finds the human's close there: stepping aside
    and closing again would act on HEAD, which left main, so it stops: nothing is pushed, feature is as the human left
    it, main keeps the close (exit 6), and the one line says why."""
    runner = make_repo(tmp_path / "runner")
    origin = origin_and_clone(tmp_path, runner)
    write_cycle(runner, datetime(2026, 11, 14, 9, 0, tzinfo=UTC))
    feature = _feature_branch(runner)
    human = clone(origin, tmp_path / "human", DANA)
    said = _close_on_first_push(runner.path, human.path, datetime(2026, 11, 14, 23, 48, 20, tzinfo=UTC),
                                then=f"cd '{runner.path}' && env -u GIT_DIR -u GIT_WORK_TREE -u GIT_INDEX_FILE "
                                     "git switch --quiet feature")
    ours = gitmem_at(datetime(2026, 11, 14, 23, 47, tzinfo=UTC), runner.path, "close", "--push", "--no-llm")
    assert said.read_text().endswith("exit 0\n"), said.read_text()
    assert ours.returncode == ExitCode.LOCAL_ONLY, ours.stdout + ours.stderr
    assert git(runner.path, "branch", "--show-current").strip() == "feature"
    assert git(runner.path, "rev-parse", "feature").strip() == feature
    assert git(origin, "branch", "--list", "feature") == ""
    assert git(origin, "log", "--format=%an|%s", "main").splitlines() == [
        "gitmem-agent|gitmem: close 2026-11-14", "gitmem-agent|gitmem: cycle",
        "Ada Human|start from the gitmem template"]
    assert [str(e.when) for e in closes(git(origin, "show", "main:LOG.md"))] == ["2026-11-14 23:48 UTC"]
    # The close made here stays on main, only on this disk, for the next `close --push` there.
    assert git(runner.path, "log", "--format=%an|%s", "-2", "main").splitlines() == [
        "gitmem-agent|gitmem: close 2026-11-14", "gitmem-agent|gitmem: cycle"]
    assert [str(e.when) for e in closes(git(runner.path, "show", "main:LOG.md"))] == ["2026-11-14 23:47 UTC"]
    told = [line for line in ours.stderr.splitlines() if line.startswith("gitmem: close: push: ")]
    assert told == ["gitmem: close: push: origin/main got another close while this one pushed, and HEAD is on "
                    "feature now, not main: nothing was pushed, and what main holds that origin/main lacks is only on "
                    "this disk until `gitmem close --push` runs again on main"], ours.stderr


def test_a_human_switching_branches_before_the_close_steps_aside_leaves_their_branch_untouched(
        tmp_path: Path, git_env: None, monkeypatch: pytest.MonkeyPatch) -> None:
    """Right after the push's look found the human's close, the human made a branch at main's tip and switched to it.
    The close, holding its lock again, found only closes on HEAD's branch and stepped aside there, resetting the
    human's branch to origin/main, then closed again on it and pushed it. It keeps the work here instead (exit 6):
    the human's branch is as they made it and never pushed, and main keeps the close."""
    from gitmem.close import run_close

    runner = make_repo(tmp_path / "runner")
    origin = origin_and_clone(tmp_path, runner)
    write_cycle(runner, datetime(2026, 11, 14, 9, 0, tzinfo=UTC))
    human = clone(origin, tmp_path / "human", DANA)
    said = _close_on_first_push(runner.path, human.path, datetime(2026, 11, 14, 23, 48, 20, tzinfo=UTC))
    made = _commits_right_after_the_push_looked(monkeypatch, lambda: git(runner.path, "switch", "--quiet", "-c",
                                                                         "feature"))
    result = run_close(Workspace.at(runner.path), push=True, clock=Clock(datetime(2026, 11, 14, 23, 47, tzinfo=UTC)))
    assert said.read_text().endswith("exit 0\n"), said.read_text()
    assert made and result.push is not None and result.push.status.exit_code == ExitCode.LOCAL_ONLY, result.push
    close = git(runner.path, "rev-parse", "main").strip()
    assert result.commit == close and git(runner.path, "rev-parse", "feature").strip() == close
    assert git(runner.path, "branch", "--show-current").strip() == "feature"
    assert git(origin, "branch", "--list", "feature") == ""
    assert [str(e.when) for e in closes(git(runner.path, "show", "main:LOG.md"))] == ["2026-11-14 23:47 UTC"]
    assert [str(e.when) for e in closes(git(origin, "show", "main:LOG.md"))] == ["2026-11-14 23:48 UTC"]
    assert result.push.messages == [
        "origin/main got another close while this one pushed, and HEAD is on feature now, not main: nothing was "
        "pushed, and what main holds that origin/main lacks is only on this disk until `gitmem close --push` runs "
        "again on main"]
    assert [(v.path, v.code) for v in result.violations] == [(".git/refs/heads/main", "GM803")]


def test_a_human_switching_branches_after_a_stranded_close_stepped_aside_gets_no_close_on_their_branch(
        tmp_path: Path, git_env: None, monkeypatch: pytest.MonkeyPatch) -> None:
    """The close left here by a failed push steps aside for the human's close of its day, and the human switches to
    a new branch right then (`git switch -c feature` just after the real step aside). The close ran again on
    `feature` and pushed it to origin. It does not close again there: it says why and what to run, names no commit
    (the remote holds the day's close; exit 0), and `feature` stays the human's, unpushed."""
    from gitmem.close import overtaken, run_close

    runner, _, origin = stranded_close(tmp_path, lambda _runner: None)
    stepped = overtaken.step_aside
    switched: list[str] = []

    def and_then_a_switch(ws: Workspace, found: overtaken.Overtaken, branch: str) -> bool:
        followed = stepped(ws, found, branch)
        switched.append(git(runner.path, "switch", "--quiet", "-c", "feature"))
        return followed

    monkeypatch.setattr(overtaken, "step_aside", and_then_a_switch)
    result = run_close(Workspace.at(runner.path), push=True, clock=Clock(datetime(2026, 11, 15, 0, 30, tzinfo=UTC)))
    assert switched and result.commit is None and result.push is None, result
    assert result.message.endswith(
        "stepped aside; it did not close again, as HEAD is on feature now, not main: back on main, run `gitmem close "
        "--push` again to report what only the close(s) left out held"), result.message
    tip = git(origin, "rev-parse", "main").strip()
    assert git(runner.path, "rev-parse", "feature").strip() == tip == git(runner.path, "rev-parse", "main").strip()
    assert git(origin, "branch", "--list", "feature") == ""
    assert [str(e.when) for e in closes(git(origin, "show", "main:LOG.md"))] == ["2026-11-14 23:52 UTC"]
