"""What the fleet spent today, against the caps of fleet.yaml: per agent and across the fleet.

Spending is what each cycle already records in its LOG entry's Evidence (`tokens: ..., total N`, a cost), read
from today's entries only (a bounded read of LOG's tail), in each agent's own time zone. An agent over its cap
is a row with the verdict "over budget"; a fleet over its cap stops `gitmem fleet dispatch` for every agent.
Both hold until the next day, or until a human raises the cap in fleet.yaml.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from gitmem.close.day import day_bounds, entries_since
from gitmem.fleet.fleetfile import Caps
from gitmem.report.evidence import read_evidence
from gitmem.workspace import Workspace


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
    start, end = day_bounds(moment.astimezone(tz).date(), tz)
    tokens, cost = 0, 0.0
    for entry in entries_since(ws.log_source(), start):
        if entry.cycle is None or not start <= entry.when.moment < end:
            continue
        facts = read_evidence("\n".join(entry.body))
        tokens += facts.usage.total if facts.usage is not None else 0
        cost += facts.cost or 0.0
    return Spent(tokens, round(cost, 6))


def fleet_spent(spent: Sequence[Spent]) -> Spent:
    return Spent(sum(s.tokens for s in spent), round(sum(s.cost for s in spent), 6))
