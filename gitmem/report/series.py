"""The numbers behind each chart, computed once from a `WorkspaceReport` for both renderers: per day (outcomes,
reverts, salvage, the lesson funnel, proven rules) and per cycle (tokens, cost, cache hit rate, context)."""
from __future__ import annotations

from bisect import bisect_right
from collections import Counter
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta

from gitmem.memory.log import OUTCOMES
from gitmem.report.model import CycleRow, WorkspaceReport

FUNNEL = ("opened", "confirmed", "promoted", "retired")


@dataclass(frozen=True)
class Daily:
    days: tuple[date, ...]
    outcomes: dict[str, list[int]]        # built | published | no-build -> cycles per day
    streak: list[int]                     # no-build cycles per day that belong to a Rule 0 streak
    reverts: list[int]                    # forbidden edits reverted per day
    salvaged: list[int]                   # cycles per day whose entry names a salvage branch
    funnel: dict[str, list[int]]          # cumulative lessons opened, confirmed, promoted, retired
    proven: list[int]                     # proven rules at the end of each day


def plural(count: int, word: str, many: str | None = None) -> str:
    """`1 decision`, `2 decisions`: every count the page and the summary put before a noun."""
    return f"{count} {word if count == 1 else many or word + 's'}"


def local_day(report: WorkspaceReport, moment: datetime) -> date:
    return moment.astimezone(report.moment.tzinfo).date()


def epoch(report: WorkspaceReport, day: date) -> int:
    """The start of `day` in the report's zone, in seconds: the x value of a daily point."""
    return int(datetime.combine(day, time(0), report.moment.tzinfo).timestamp())


def day_range(first: date, last: date) -> tuple[date, ...]:
    return tuple(first + timedelta(days=n) for n in range((last - first).days + 1)) if last >= first else ()


def daily(report: WorkspaceReport, first: date | None = None) -> Daily:
    """Per-day numbers from `first` (default: the report's first day) to its last day."""
    # A chart needs two days at least: a one-day window also shows the day before.
    days = day_range(min(first or report.first_day, report.until - timedelta(days=1)), report.until)
    index = {day: n for n, day in enumerate(days)}
    outcomes = {outcome: [0] * len(days) for outcome in OUTCOMES}
    streak, reverts, salvaged = [0] * len(days), [0] * len(days), [0] * len(days)
    in_streak = {n for s in report.streaks() for n in range(s.first, s.last + 1)}
    for cycle in report.cycles:
        at = index.get(local_day(report, cycle.when))
        if at is None:
            continue
        outcomes[cycle.outcome][at] += 1
        streak[at] += cycle.number in in_streak
        reverts[at] += cycle.reverts
        salvaged[at] += bool(cycle.salvage)
    return Daily(days, outcomes, streak, reverts, salvaged, funnel(report, days), proven(report, days))


def _cumulative(dated: list[date], days: tuple[date, ...]) -> list[int]:
    ordered = sorted(dated)
    return [bisect_right(ordered, day) for day in days]


def funnel(report: WorkspaceReport, days: tuple[date, ...]) -> dict[str, list[int]]:
    """Lessons opened, confirmed at least once, promoted and retired, counted up to the end of each day."""
    picks = ("opened", "confirmed", "promoted", "retired")
    return {name: _cumulative([d for lesson in report.lessons if (d := getattr(lesson, name)) is not None], days)
            for name in picks}


def funnel_now(report: WorkspaceReport) -> dict[str, int]:
    """The funnel's totals at the end of the window."""
    ends = funnel(report, (report.until,))
    return {name: values[0] for name, values in ends.items()}


def proven(report: WorkspaceReport, days: tuple[date, ...]) -> list[int]:
    """Proven rules at the end of each day: promoted by then, and not yet retired."""
    added = sorted(local_day(report, r.added) if r.added is not None else date.min for r in report.rules)
    retired = sorted(r.retired for r in report.rules if r.retired is not None)
    return [bisect_right(added, day) - bisect_right(retired, day) for day in days]


def distinct_times(cycles: tuple[CycleRow, ...]) -> list[int]:
    """Cycle times in seconds, nudged so that no two are equal (a chart's x values must increase)."""
    found: list[int] = []
    for cycle in cycles:
        value = int(cycle.when.timestamp())
        found.append(value if not found or value > found[-1] else found[-1] + 1)
    return found


def share_known(values: list[object]) -> tuple[int, int]:
    """(known, all): how many of the values are not None."""
    return sum(v is not None for v in values), len(values)


def outcome_counts(report: WorkspaceReport) -> Counter[str]:
    return Counter(c.outcome for c in report.cycles)
