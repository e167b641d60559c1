"""A cycle that starts late knows it: the schedule is in the repository's workflow (gitmem.cycle.schedule), the
last cycle is in LOG, the time is the real clock's. The note reaches the LOG entry's Evidence and the output."""
from __future__ import annotations

from datetime import UTC, datetime, timedelta

from gitmem.cycle import schedule
from gitmem.cycle.runner import Settings, late_note, run_cycle
from gitmem.errors import ExitCode
from gitmem.memory import log
from gitmem.memory_writer import MemoryWriter
from gitmem.views.actions import cycle_summary
from tests.support.cycle_support import WritingBackend, built
from tests.support.helpers import GitRepo

EVERY_3_HOURS = ("on:\n  schedule:\n    - cron: \"17 */3 * * *\"   # cycles\n"
                 "    - cron: \"47 23 * * *\"   # the close\n  workflow_dispatch:\n")


def _last_cycle(repo: GitRepo, ago: timedelta) -> None:
    moment = datetime.now(repo.ws().config.tzinfo()) - ago
    MemoryWriter(repo.ws(), clock=lambda: moment).add_log_entry(task="before", outcome="built", result="done",
                                                                  cycle=1)
    repo.commit_files({"LOG.md": repo.read("LOG.md"), ".github/workflows/gitmem.yml": EVERY_3_HOURS}, "cycle 1")


def test_a_cycle_eleven_hours_after_the_last_on_a_3_hour_schedule_says_it_started_late(memrepo: GitRepo) -> None:
    _last_cycle(memrepo, timedelta(hours=11))
    report = run_cycle(memrepo.ws(), WritingBackend(built()), settings=Settings())
    assert report.exit_code == ExitCode.OK
    said = [m for m in report.messages if "started late" in m]
    assert len(said) == 1 and "`17 */3 * * *`" in said[0], report.messages
    evidence = log.parse(memrepo.read("LOG.md")).entries[-1].get("Evidence") or ""
    assert "runner: started late: the schedule `17 */3 * * *` (UTC)" in evidence
    assert "scheduled run(s) passed without a cycle" in evidence      # 11 h on a 3 h schedule: 3 or 4 firings
    assert report.late.startswith("started late") and f"- Schedule: {report.late}" in cycle_summary(report)
    assert report.as_dict()["late"] == report.late


def test_a_cycle_on_time_says_nothing_of_the_schedule(memrepo: GitRepo) -> None:
    _last_cycle(memrepo, timedelta(minutes=20))   # a firing in 20 min is under 30 min ago
    report = run_cycle(memrepo.ws(), WritingBackend(built()), settings=Settings())
    assert report.exit_code == ExitCode.OK and not [m for m in report.messages if "late" in m]
    assert report.late == "" and "Schedule" not in cycle_summary(report)
    assert "started late" not in memrepo.read("LOG.md")


def test_without_a_workflow_or_a_last_cycle_nothing_is_judged(memrepo: GitRepo) -> None:
    moment = datetime.now(UTC)
    assert late_note(memrepo.ws(), moment) is None                    # no cycle in LOG yet
    MemoryWriter(memrepo.ws(), clock=lambda: moment - timedelta(days=3)).add_log_entry(
        task="before", outcome="built", result="done", cycle=1)
    memrepo.commit_files({"LOG.md": memrepo.read("LOG.md"), ".github/workflows/gitmem.yml": None}, "cycle 1")
    assert late_note(memrepo.ws(), moment) is None                    # no schedule to be late for


def test_lateness_counts_the_firings_since_the_last_cycle() -> None:
    last = datetime(2026, 12, 6, 0, 5, tzinfo=UTC)
    now = last + timedelta(hours=11)                                   # 11:05; firings at 00:17, 03:17, 06:17, 09:17
    found = schedule.lateness(["47 23 * * *", "17 */3 * * *"], last, now)
    assert found is not None and found.cron == "17 */3 * * *"
    assert (found.due, found.missed) == (datetime(2026, 12, 6, 0, 17, tzinfo=UTC), 3)
    assert "started 10 h 48 min later" in found.note()
    assert schedule.lateness(["17 */3 * * *"], last, last + timedelta(minutes=40)) is None    # 23 min past 00:17
    assert schedule.lateness(["17 */3 * * *"], last, last + timedelta(minutes=50)) is not None
    assert schedule.lateness(["not a cron"], last, now) is None
    year_late = schedule.firings("*/5 * * * *", last, last + timedelta(days=5000), most=50)
    assert len(year_late) == 50
    month_late = schedule.lateness(["* * * * *"], last, last + timedelta(days=30))      # 43,200 firings: bounded
    assert month_late is not None and "at least 9999 scheduled run(s)" in month_late.note()
