"""`gitmem close --push` as the scheduler runs it, on the clock libfaketime sets: a runner's clone of a bare origin.

The close reads the real clock (`Workspace.clock`); libfaketime moves that clock for the one process, so these
runs see exactly what a late GitHub run sees. The cycles before them are written with an injected clock, as the
runner writes them, and pushed.
"""
from __future__ import annotations

import shutil
import subprocess
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from types import SimpleNamespace
from zoneinfo import ZoneInfo

import pytest

from gitmem.close import run_close
from gitmem.errors import ExitCode
from gitmem.memory import log
from gitmem.memory_writer import MemoryWriter
from gitmem.workspace import Workspace
from tests.support.cycle_support import clone, origin_and_clone
from tests.support.gitcli import git, isolated_env
from tests.support.helpers import AGENT, DANA, GitRepo, fill_in_rules, make_repo
from tests.support.hostile import GITMEM
from tests.support.world import Clock

FAKETIME = shutil.which("faketime")
pytestmark = pytest.mark.skipif(FAKETIME is None, reason="libfaketime's `faketime` is not installed")


def gitmem_at(when: datetime, cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """`gitmem ARGS` in `cwd` with the clock at `when` (and running on from there)."""
    utc = when.astimezone(ZoneInfo("UTC"))
    env = isolated_env(who=AGENT) | {"TZ": "UTC"}
    env.pop("ANTHROPIC_API_KEY", None)
    assert FAKETIME is not None
    return subprocess.run([FAKETIME, "-f", f"@{utc:%Y-%m-%d %H:%M:%S}", str(GITMEM), *args], cwd=cwd, env=env,
                          capture_output=True, text=True, check=False)


def write_cycle(repo: GitRepo, when: datetime, *, workspace: str | None = None) -> None:
    """A cycle's LOG entry and NOW block at `when`, committed by the agent identity and pushed."""
    ws = Workspace.at(repo.path, workspace=workspace)
    memory = MemoryWriter(ws, clock=Clock(when), author_email=AGENT[1])
    memory.add_log_entry(task=f"task at {when:%H:%M}", outcome="built", result="shipped it")
    memory.add_now_block(did="a cycle", human="nothing", next="carry on")
    repo.stage(ws.config.path("log"), ws.config.path("now"))
    repo.commit("gitmem: cycle", author=AGENT)
    git(repo.path, "push", "--quiet", "origin", "main")


def closes(text: str) -> list[log.LogEntry]:
    return [e for e in log.parse(text).entries if e.cycle is None]


def test_the_2347_close_run_at_0031_closes_the_day_before(tmp_path: Path, git_env: None) -> None:
    runner = make_repo(tmp_path / "runner")
    origin = origin_and_clone(tmp_path, runner)
    utc = ZoneInfo("UTC")
    write_cycle(runner, datetime(2026, 11, 14, 9, 0, tzinfo=utc))
    write_cycle(runner, datetime(2026, 11, 14, 15, 0, tzinfo=utc))
    late = gitmem_at(datetime(2026, 11, 15, 0, 31, tzinfo=utc), runner.path, "close", "--push", "--no-llm")
    assert late.returncode == ExitCode.OK, late.stdout + late.stderr
    assert late.stdout.splitlines()[0] == "closed 2026-11-14: 2 cycles (2 built, 0 published, 0 no-build)"
    assert git(origin, "log", "-1", "--format=%s", "main").strip() == "gitmem: close 2026-11-14"
    # The next evening's close, on time, closes its own day.
    write_cycle(runner, datetime(2026, 11, 15, 10, 0, tzinfo=utc))
    on_time = gitmem_at(datetime(2026, 11, 15, 23, 47, tzinfo=utc), runner.path, "close", "--push", "--no-llm")
    assert on_time.returncode == ExitCode.OK, on_time.stdout + on_time.stderr
    assert on_time.stdout.splitlines()[0] == "closed 2026-11-15: 1 cycle (1 built, 0 published, 0 no-build)"
    assert [e.get("Day") for e in closes(runner.read("LOG.md"))] == ["2026-11-14", "2026-11-15"]


@pytest.mark.parametrize(("day", "local_close"), [("2026-07-15", "00:47 on the 16th"), ("2026-01-15", "23:47")])
def test_madrid_with_the_suggested_cron_closes_the_right_day_summer_and_winter(tmp_path: Path, git_env: None,
                                                                               day: str, local_close: str) -> None:
    """The workflow's cron `47 22 * * *` is 23:47 in Madrid in winter and 00:47 the next day in summer."""
    runner = make_repo(tmp_path / "runner")
    runner.write("gitmem.yaml", runner.read("gitmem.yaml").replace("timezone: UTC", "timezone: Europe/Madrid"))
    runner.stage("gitmem.yaml")
    runner.commit("Madrid")
    origin_and_clone(tmp_path, runner)
    madrid = ZoneInfo("Europe/Madrid")
    when = datetime.fromisoformat(day)
    write_cycle(runner, when.replace(hour=0, minute=20, tzinfo=madrid))
    write_cycle(runner, when.replace(hour=22, minute=30, tzinfo=madrid))
    cron = when.replace(hour=22, minute=47, tzinfo=ZoneInfo("UTC"))
    assert cron.astimezone(madrid).strftime("%H:%M") == local_close[:5]
    ran = gitmem_at(cron, runner.path, "close", "--push", "--no-llm")
    assert ran.returncode == ExitCode.OK, ran.stdout + ran.stderr
    assert ran.stdout.splitlines()[0] == f"closed {day}: 2 cycles (2 built, 0 published, 0 no-build)"
    again = gitmem_at(cron.replace(minute=50), runner.path, "close", "--date", day, "--no-llm")
    assert again.returncode == ExitCode.OK and "is already closed" in again.stdout


@pytest.mark.parametrize("workspace", [None, "ops"])
def test_close_push_merges_a_concurrent_log_append_in_every_workspace(tmp_path: Path, git_env: None, cli,
                                                                      workspace: str | None) -> None:
    """While the close runs, a human's clone appends to the same LOG and pushes: the close merges it by memory
    rules and pushes, in a named workspace as in the default one."""
    runner = make_repo(tmp_path / "runner")
    if workspace is not None:
        runner.write("gitmem.yaml", runner.read("gitmem.yaml") + f"\nworkspaces:\n  {workspace}:\n"
                     f"    memory_dir: {workspace}\n")
        assert cli(["init", "."], cwd=runner.path).code == ExitCode.OK
        fill_in_rules(runner.path)
        git(runner.path, "add", "-A")
        git(runner.path, "commit", "-q", "-m", "a workspace")
    origin = origin_and_clone(tmp_path, runner)
    utc = ZoneInfo("UTC")
    write_cycle(runner, datetime(2026, 11, 14, 9, 0, tzinfo=utc), workspace=workspace)
    human = clone(origin, tmp_path / "human", DANA)
    write_cycle(human, datetime(2026, 11, 14, 12, 0, tzinfo=utc), workspace=workspace)
    args = ["close", "--push", "--no-llm", *(["--workspace", workspace] if workspace else [])]
    ran = gitmem_at(datetime(2026, 11, 14, 23, 47, tzinfo=utc), runner.path, *args)
    assert ran.returncode == ExitCode.OK, ran.stdout + ran.stderr
    rel = Workspace.at(runner.path, workspace=workspace).config.path("log")
    merged = git(origin, "show", f"main:{rel}")
    assert [e.cycle for e in log.parse(merged).entries] == [1, 2, None]
    assert "gitmem/close-" not in git(origin, "branch", "--list")


class _PushingModel:
    """The close's model client: while the close words its report (it has read LOG), `act` runs, as a writer that
    pushes then would; the answer is no JSON, so the offline text stands."""

    def __init__(self, act: Callable[[], None]) -> None:
        self.act = act
        self.messages = self

    def create(self, **_: object) -> SimpleNamespace:
        self.act()
        return SimpleNamespace(usage=SimpleNamespace(input_tokens=1, output_tokens=1), content=[])


def test_a_cycle_pushed_while_the_close_ran_is_in_the_next_closes_report(tmp_path: Path, git_env: None) -> None:
    """A human's cycle reaches the origin after the close read LOG, and the close's push replays it after that
    cycle: the close entry names the cycle as arrived (its report does not hold it), and the next close reports
    it, so the cycle is in exactly one report."""
    runner = make_repo(tmp_path / "runner")
    origin = origin_and_clone(tmp_path, runner)
    utc = ZoneInfo("UTC")
    write_cycle(runner, datetime(2026, 11, 14, 9, 0, tzinfo=utc))
    human = clone(origin, tmp_path / "human", DANA)
    model = _PushingModel(lambda: write_cycle(human, datetime(2026, 11, 14, 23, 40, tzinfo=utc)))
    first = run_close(Workspace.at(runner.path), push=True, use_llm=True, client=model,
                      clock=Clock(datetime(2026, 11, 14, 23, 47, tzinfo=utc)))
    assert first.push is not None and first.push.status.exit_code == ExitCode.OK, first.push
    assert first.message == "closed 2026-11-14: 1 cycle (1 built, 0 published, 0 no-build)"
    pushed = closes(git(origin, "show", "main:LOG.md"))
    assert pushed[-1].get("Arrived") == "cycle 2"
    second = gitmem_at(datetime(2026, 11, 15, 23, 47, tzinfo=utc), runner.path, "close", "--push", "--no-llm")
    assert second.returncode == ExitCode.OK, second.stdout + second.stderr
    assert second.stdout.splitlines()[0] == "closed 2026-11-15: 1 cycle (1 built, 0 published, 0 no-build)"
    reports = closes(git(origin, "show", "main:LOG.md"))
    assert [(e.get("Day"), (e.get("Done") or "").split(" · ")[0]) for e in reports] == [
        ("2026-11-14", "cycle 1"), ("2026-11-15", "cycle 2")]
    verified = gitmem_at(datetime(2026, 11, 15, 23, 50, tzinfo=utc), runner.path, "verify", "--range",
                         "HEAD~3..HEAD")
    assert verified.returncode == ExitCode.OK, verified.stdout + verified.stderr


def test_a_close_run_by_hand_from_a_clone_that_missed_the_scheduled_close_reports_nothing_twice(
        tmp_path: Path, git_env: None) -> None:
    """The human pulled in the morning; the scheduled close closed the day at 23:47 and pushed; at 23:55 the human
    runs `gitmem close --push` in that clone. It closes on what the remote holds: the day is closed already, and a
    cycle run after the scheduled close is the only one its report holds."""
    runner = make_repo(tmp_path / "runner")
    origin = origin_and_clone(tmp_path, runner)
    utc = ZoneInfo("UTC")
    write_cycle(runner, datetime(2026, 11, 14, 9, 0, tzinfo=utc))
    human = clone(origin, tmp_path / "human", DANA)                      # this morning's pull
    scheduled = gitmem_at(datetime(2026, 11, 14, 23, 47, tzinfo=utc), runner.path, "close", "--push", "--no-llm")
    assert scheduled.returncode == ExitCode.OK, scheduled.stdout + scheduled.stderr
    by_hand = gitmem_at(datetime(2026, 11, 14, 23, 55, tzinfo=utc), human.path, "close", "--push", "--no-llm")
    assert by_hand.returncode == ExitCode.OK, by_hand.stdout + by_hand.stderr
    assert by_hand.stdout.startswith("2026-11-14 is already closed (LOG.md:"), by_hand.stdout
    write_cycle(runner, datetime(2026, 11, 14, 23, 58, tzinfo=utc))     # after both, before midnight
    again = gitmem_at(datetime(2026, 11, 14, 23, 59, tzinfo=utc), human.path, "close", "--push", "--no-llm")
    assert again.returncode == ExitCode.OK, again.stdout + again.stderr
    reports = closes(git(origin, "show", "main:LOG.md"))
    assert [(e.get("Day"), (e.get("Done") or "").split(" · ")[0]) for e in reports] == [
        ("2026-11-14", "cycle 1"), ("2026-11-14", "cycle 2")]


def test_a_close_waits_for_a_running_cycle_before_it_moves_head(tmp_path: Path, git_env: None) -> None:
    """The catch-up moves HEAD and the work tree: while a cycle holds the checkout's lock (its agent may be
    working there), a `close --push` is refused before it fetches or moves anything."""
    from gitmem.workspace import cyclelock

    runner = make_repo(tmp_path / "runner")
    origin = origin_and_clone(tmp_path, runner)
    utc = ZoneInfo("UTC")
    human = clone(origin, tmp_path / "human", DANA)
    write_cycle(runner, datetime(2026, 11, 14, 9, 0, tzinfo=utc))         # the remote is ahead of the human
    before = git(human.path, "rev-parse", "HEAD").strip()
    with cyclelock.acquire(human.path / ".git" / "gitmem"):                # a cycle runs in the human's clone
        refused = gitmem_at(datetime(2026, 11, 14, 23, 55, tzinfo=utc), human.path, "close", "--push", "--no-llm")
    assert refused.returncode != ExitCode.OK, refused.stdout + refused.stderr
    assert git(human.path, "rev-parse", "HEAD").strip() == before
