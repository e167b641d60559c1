"""What the fleet shows where anyone may read it: per agent a verdict and the counts behind it, never memory's words.

A GitHub Pages site is public even when its repository is private, and a public repository's job summaries and
workflow artifacts are public too. What the agents wrote (decision titles and recommendations, LOG task lines,
close reports, branch names) and what git said while reading them (remote URLs, errors) stays with the readers
of the agents' repositories. The public view keeps what fleet.yaml already says (the agent's name) and what the
fleet judged: the verdict, cycle numbers, counts and ages.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

from gitmem.fleet.read import AgentRow, InboxItem
from gitmem.memory.log import OUTCOMES

if TYPE_CHECKING:     # a page needs no GitHub client loaded
    from gitmem.fleet.dispatch import CatchUp

# The verdicts `gitmem.fleet.read.verdict` gives; anything else (a future verdict) is shown as "needs a look".
PUBLIC_VERDICTS = ("ok", "stalled", "clock ahead", "over budget", "rule 0 streak", "waiting on you", "no cycles yet",
                   "unreadable")
PUBLIC_NOTE = ("public view: verdicts and counts only; decision text, LOG lines, branch names and errors are "
               "left out (they are in the agents' own repositories)")


@dataclass(frozen=True)
class PublicRow:
    """One agent (one workspace of it) as the public may see it."""

    label: str                      # fleet.yaml's name, and the workspace's name from the agent's gitmem.yaml
    verdict: str
    last_cycle: int | None
    last_outcome: str | None
    last_age: str | None
    cycles_today: int
    streak: int
    pending: int
    stale: int
    last_close: str | None          # the date the last close closed, nothing more
    waiting_branches: int


def public_row(row: AgentRow) -> PublicRow:
    """`row` without a word of the agent's memory or of git's output."""
    last = row.last_cycle or {}
    cycle = last.get("cycle")
    outcome = last.get("outcome")
    return PublicRow(
        label=row.label,
        verdict=row.verdict if row.verdict in PUBLIC_VERDICTS else "needs a look",
        last_cycle=cycle if isinstance(cycle, int) else None,
        last_outcome=outcome if outcome in OUTCOMES else None,
        last_age=str(last["age"]) if last.get("age") else None,
        cycles_today=row.cycles_today,
        streak=int((row.streak or {}).get("length", 0)),
        pending=row.pending,
        stale=row.stale,
        last_close=_day(row.last_close),
        waiting_branches=len(row.waiting_branches),
    )


def _day(text: str | None) -> str | None:
    """The YYYY-MM-DD a close names, or None: a close's field is the agent's writing."""
    head = (text or "")[:10]
    digits = head.replace("-", "")
    return head if len(head) == 10 and head[4] == head[7] == "-" and digits.isascii() and digits.isdigit() else None


def waiting_counts(inbox: list[InboxItem]) -> dict[str, int]:
    """Per agent label, how many decisions wait on the human: the inbox's size without its text."""
    counts: dict[str, int] = {}
    for item in inbox:
        label = item.agent + (f"/{item.workspace}" if item.workspace else "")
        counts[label] = counts.get(label, 0) + 1
    return counts


def public_step(step: CatchUp) -> dict[str, Any]:
    """A catch-up step for a public view: whether a call failed, not its error,
    nor the repository or branch."""
    shown: dict[str, Any] = {key: value for key, value in asdict(step).items() if key not in ("ref", "error", "github")}
    shown["failed"] = bool(step.error)
    return shown
