"""What the fleet spent today, against the caps of fleet.yaml: per agent and across the fleet.

Spending is what each cycle already records in its LOG entry's Evidence (`tokens: ..., total N`, a cost), read
from today's entries only (a bounded read of LOG's tail), in each agent's own time zone: the same reading as a
cycle's own daily cap (gitmem.cycle.allowance), which holds the caps and the spending. An agent over its cap
is a row with the verdict "over budget"; a fleet over its cap stops `gitmem fleet dispatch` for every agent.
Both hold until the next day, or until a human raises the cap in fleet.yaml.
"""
from __future__ import annotations

from collections.abc import Sequence

from gitmem.cycle.allowance import Spent


def fleet_spent(spent: Sequence[Spent]) -> Spent:
    return Spent(sum(s.tokens for s in spent), round(sum(s.cost for s in spent), 6))
