"""What is waiting on the human: Pending decisions with their recommendation and age."""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from gitmem.config import Config
from gitmem.memory import decisions


@dataclass(frozen=True)
class Waiting:
    id: str
    title: str
    recommendation: str
    asked: str
    age_days: float | None
    line: int
    path: str

    def as_dict(self) -> dict[str, object]:
        return dict(self.__dict__)


def pending(text: str, config: Config, *, now: datetime) -> list[Waiting]:
    """Pending decisions, oldest first."""
    doc = decisions.parse(text)
    found = []
    for item in doc.pending:
        asked = item.asked
        age = (now - asked.moment).total_seconds() / 86400 if asked else None
        found.append(Waiting(item.id, item.title, (item.get("Recommendation") or "").strip(),
                             str(asked) if asked else "", round(age, 2) if age is not None else None,
                             item.line, config.path("decisions")))
    return sorted(found, key=lambda w: (w.asked == "", w.asked, w.id))


def describe_age(days: float | None) -> str:
    if days is None:
        return "age unknown"
    if days < 1:
        return f"{max(int(days * 24), 0)}h"
    return f"{int(days)}d"
