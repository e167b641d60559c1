"""The report's data: what happened in one workspace's memory over a window of days, as plain frozen values.

`gitmem.report.collect` fills it from the memory files and git; the renderers (`html`, `summary`) only read it.
Every text in it has already been through `gitmem.secrets.redact`.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date, datetime

from gitmem.close.day import STREAK_MIN, Streak, no_build_runs


@dataclass(frozen=True)
class CycleRow:
    number: int
    when: datetime
    outcome: str                          # built | published | no-build
    tokens: int | None = None             # total tokens the backend reported; None: not in the Evidence
    cost: float | None = None             # in USD, where the Evidence has one
    cache_rate: float | None = None       # cache reads / whole prompt, where the usage has cache keys
    context: int | None = None            # tokens of the context the cycle read; None for older cycles
    budget: int | None = None             # the budget that context was held against
    reverts: int = 0                      # forbidden memory edits the runner reverted
    salvage: tuple[str, ...] = ()         # salvage branches the entry names


@dataclass(frozen=True)
class CloseRow:
    when: datetime
    day: str                              # the Day it closed (YYYY-MM-DD)
    fields: tuple[tuple[str, str], ...] = ()   # the report's fields, only for the latest close
    promoted: tuple[str, ...] = ()        # the rules its Promotions field lists as promoted


@dataclass(frozen=True)
class DecisionRow:
    id: str
    title: str
    asked: datetime
    answered: datetime | None             # None while pending
    waited_days: float                    # until answered, or until the report's moment while pending
    recommendation: str = ""

    @property
    def pending(self) -> bool:
        return self.answered is None


@dataclass(frozen=True)
class LessonRow:
    id: str
    opened: date | None
    confirmed: date | None                # the first Confirmed line
    promoted: date | None
    retired: date | None                  # LESSONS records no retirement date: the lesson's last dated line


@dataclass(frozen=True)
class RuleRow:
    id: str
    added: datetime | None                # None: before the window (or written by the human)
    retired: date | None = None


@dataclass(frozen=True)
class WorkspaceReport:
    name: str                             # "" for the top-level memory
    moment: datetime                      # "now" for ages: the clock, in the configured zone
    timezone: str                         # IANA name, for the page's time axes
    since: date | None                    # first day shown (None: the first cycle's day)
    until: date                           # last day shown
    cycles: tuple[CycleRow, ...] = ()
    closes: tuple[CloseRow, ...] = ()
    latest_close: CloseRow | None = None
    decisions: tuple[DecisionRow, ...] = ()
    lessons: tuple[LessonRow, ...] = ()
    rules: tuple[RuleRow, ...] = ()
    proven: int = 0                       # proven rules now
    proven_cap: int = 30
    budget: int = 0                       # cycle.max_context_tokens now
    stale_days: int = 3                   # close.stale_decision_days: a pending decision older is a problem
    waiting_branches: tuple[str, ...] = ()   # gitmem/* branches waiting on the human: salvage, proposal, side...
    problems: tuple[str, ...] = field(default=())   # what could not be read, said on the page

    @property
    def label(self) -> str:
        return self.name or "default"

    @property
    def pending(self) -> tuple[DecisionRow, ...]:
        return tuple(sorted((d for d in self.decisions if d.pending), key=lambda d: d.asked))

    @property
    def first_day(self) -> date:
        if self.since is not None:
            return self.since
        return self.cycles[0].when.astimezone(self.moment.tzinfo).date() if self.cycles else self.until

    def streaks(self) -> tuple[Streak, ...]:
        """Runs of STREAK_MIN or more no-build cycles in a row."""
        return tuple(Streak(run[0].number, run[-1].number, run[0].when, run[-1].when, len(run))
                     for run in no_build_runs(self.cycles) if len(run) >= STREAK_MIN)
