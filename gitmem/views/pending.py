"""What is waiting on the human: Pending decisions with their recommendation and age."""
from __future__ import annotations

from datetime import datetime
from typing import Any

from gitmem.codes import DECISION_ANSWER_INCOMPLETE
from gitmem.memory import decisions
from gitmem.memory.decisions import Waiting
from gitmem.workspace import Workspace

# What `pending` and `fleet pending` say of a decision with half an answer in place.
INCOMPLETE = ("half an answer is written in it: add the missing `- Answer:` or `- Answered: YYYY-MM-DD HH:MM TZ by "
              f"Name <email>` line ({DECISION_ANSWER_INCOMPLETE.code}); until then it waits")


def pending(ws: Workspace, *, now: datetime | None = None) -> tuple[Waiting, ...]:
    """Pending decisions, oldest first, aged at `now` (default: the clock)."""
    return decisions.waiting(decisions.parse(ws.read("decisions")), now or ws.clock()())


def as_dict(item: Waiting, path: str) -> dict[str, Any]:
    """`gitmem pending --json`: one decision, where it is, its age in days (two decimals) and as every view
    shows it ("5h", "3d")."""
    return {"id": item.id, "title": item.title, "recommendation": item.recommendation,
            "asked": str(item.asked) if item.asked else "",
            "age_days": round(item.age_days, 2) if item.age_days is not None else None,
            "age": item.age, "answer_incomplete": item.answer_incomplete,
            "line": item.line, "path": path}

