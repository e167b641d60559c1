"""A daily cap on what an agent's cycles spend, and the refusal to start a cycle over it.

Spending is what each cycle already records in its LOG entry's Evidence (gitmem.memory.usage: the runner's
`tokens:` line and its cost), summed over today's runner cycles (never an interactive session's entry, which
holds no runner line), read from LOG's tail only, in the workspace's time zone. The caps are the agent's own
`cycle.tokens_per_day` and `cycle.cost_per_day` in gitmem.yaml (0: no cap); a fleet reads the same spending
against fleet.yaml's caps (gitmem.fleet.spending).

Over a cap, `gitmem cycle` refuses to start (exit 3, GM750) before anything changes: no agent runs, no entry is
written, nothing is committed. It starts again on the next day (the spending of a day is that day's), or as soon
as a human raises the cap.
"""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, time, timedelta

from gitmem.config import Config
from gitmem.memory import log
from gitmem.memory.usage import evidence_lines, recorded
from gitmem.workspace import Workspace


@dataclass(frozen=True)
class Caps:
    """What may be spent in one day: tokens and dollars, as the cycles record them in Evidence; None: no cap."""

    tokens_per_day: int | None = None
    cost_per_day: float | None = None

    @classmethod
    def of(cls, config: Config) -> Caps:
        """The agent's own caps, from gitmem.yaml's `cycle:` (0 there means no cap)."""
        return cls(config.cycle.tokens_per_day or None, config.cycle.cost_per_day or None)


@dataclass(frozen=True)
class Spent:
    tokens: int = 0
    cost: float = 0.0

    def over(self, caps: Caps) -> str:
        """Which cap this spending is over, in words; "" when none."""
        found = []
        if caps.tokens_per_day is not None and self.tokens > caps.tokens_per_day:
            found.append(f"{self.tokens} tokens today, over {caps.tokens_per_day}")
        if caps.cost_per_day is not None and self.cost > caps.cost_per_day:
            found.append(f"${self.cost:.2f} today, over ${caps.cost_per_day:.2f}")
        return "; ".join(found)


def spent_today(ws: Workspace, moment: datetime) -> Spent:
    """Tokens and cost the cycles of `moment`'s day (in the workspace's time zone) recorded in Evidence."""
    tz = ws.config.tzinfo()
    day = moment.astimezone(tz).date()
    start, end = datetime.combine(day, time(0), tz), datetime.combine(day + timedelta(days=1), time(0), tz)
    tail = log.tail_entries(ws.log_source(), lambda entries: any(e.when.moment < start for e in entries))
    tokens, cost = 0, 0.0
    for entry in tail.entries:
        # A session's entry holds no runner line: a `tokens:` line there is its writer's text, and would stop the
        # day's cycles. A runner cycle never carries the session marker (postflight drops it from its agent's).
        if entry.cycle is None or entry.interactive or not start <= entry.when.moment < end:
            continue
        found = recorded(evidence_lines("\n".join(entry.body)))
        tokens += found.usage.total if found.usage is not None else 0
        cost += found.cost or 0.0
    return Spent(tokens, round(cost, 6))


@dataclass(frozen=True)
class Refusal:
    """Why a cycle may not start, and the gitmem.yaml setting of the cap it is over (the refusal points at it)."""

    why: str
    key: str


def spending_refusal(ws: Workspace, moment: datetime) -> Refusal | None:
    """Why a cycle may not start at `moment` (the clock's): today's spending is over the agent's own cap;
    None when it may (no cap, or under it)."""
    caps = Caps.of(ws.config)
    if caps == Caps():
        return None
    spent = spent_today(ws, moment)
    over = spent.over(caps)
    if not over:
        return None
    key = "cycle.tokens_per_day" if spent.over(Caps(tokens_per_day=caps.tokens_per_day)) else "cycle.cost_per_day"
    day = moment.astimezone(ws.config.tzinfo()).date()
    return Refusal(f"the daily cap is reached ({over}, by what today's cycles recorded in LOG Evidence, {day} in "
            f"{ws.config.timezone}); the cycle did not start and nothing changed. It starts again tomorrow, or "
            "raise cycle.tokens_per_day / cycle.cost_per_day in gitmem.yaml and commit", key)
