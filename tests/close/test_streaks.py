"""Rule 0 streaks are found by one loop (gitmem.close.day.no_build_runs): the close, `gitmem status` and the
report count the same runs, across a day boundary and a close entry in the middle of a run."""
from __future__ import annotations

from datetime import UTC, datetime, timedelta

from gitmem.close import day
from gitmem.memory import log
from gitmem.memory.timestamps import Timestamp
from gitmem.report.model import CycleRow, WorkspaceReport

START = datetime(2026, 11, 29, 20, 0, tzinfo=UTC)
# Cycle 1 built, 2-5 built nothing (a close at midnight between 3 and 4), 6 built, 7-8 built nothing.
OUTCOMES = {1: "built", 2: "no-build", 3: "no-build", 4: "no-build", 5: "no-build", 6: "built", 7: "no-build",
            8: "no-build"}


def when(number: int) -> datetime:
    return START + timedelta(hours=2 * number)


def log_text() -> str:
    text = "# LOG\n"
    for number, outcome in OUTCOMES.items():
        text = log.append_entry(text, log.make_entry(Timestamp(when(number), "UTC"), cycle=number, outcome=outcome,
                                                     fields={"Task": "t", "Result": "r"}))
        if number == 3:
            text = log.append_entry(text, log.make_entry(Timestamp(when(3) + timedelta(minutes=30), "UTC"),
                                                         cycle=None, outcome=None, fields={"Day": "2026-11-30"}))
    return text


def test_the_close_status_and_report_count_the_same_runs() -> None:
    text = log_text()
    held = [e for e in log.parse(text).entries if e.cycle == 5]       # the report that holds cycle 5
    ending = day.streaks_ending(text, held)
    assert [(s.first, s.last, s.length) for s in ending] == [(2, 5, 4)]
    assert [e.cycle for e in ending[0].cycles] == [2, 3, 4, 5]
    report = WorkspaceReport("", when(9), "UTC", None, when(9).date(),
                             cycles=tuple(CycleRow(n, when(n), o) for n, o in OUTCOMES.items()))
    assert [(s.first, s.last, s.length, s.start, s.end) for s in report.streaks()] == [(2, 5, 4, when(2), when(5))]
    assert report.streaks() == ending        # one Streak type: the entries the close keeps do not compare
    running = day.no_build_streak(text, when(9))
    assert running is not None and (running.first, running.last, running.is_problem) == (7, 8, False)
    assert day.no_build_streak(text, when(6) + timedelta(minutes=1)) is None     # cycle 6 built
