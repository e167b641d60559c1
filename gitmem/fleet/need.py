"""What each agent needs from the human, most urgent first: the order of the fleet's rows, the counts in its
header, the notes said once for the whole fleet rather than once per agent, and a diagnostic at its entry of
the fleet file for each agent that could not be read."""
from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any, Protocol, TypeVar

from gitmem import codes
from gitmem.fleet.fleetfile import Fleet
from gitmem.fleet.read import (
    CLOCK_AHEAD,
    INACTIVE_NOTE,
    NEW,
    OK,
    OVER_BUDGET,
    STALLED,
    STREAK,
    UNREADABLE,
    WAITING,
    AgentRow,
)
from gitmem.memory.lines import one_line

# An agent nobody can read is the first row, never the last one below the fold; "ok" is last.
NEED_ORDER = (UNREADABLE, STALLED, CLOCK_AHEAD, OVER_BUDGET, STREAK, WAITING, NEW, OK)


class Judged(Protocol):
    @property
    def verdict(self) -> str: ...
    @property
    def pending(self) -> int: ...


Row = TypeVar("Row", bound=Judged)


def rank(verdict: str) -> int:
    """Where a verdict sorts: one gitmem does not know yet sorts with the ones that need a look."""
    return NEED_ORDER.index(verdict) if verdict in NEED_ORDER else NEED_ORDER.index(WAITING)


def by_need(rows: Iterable[Row]) -> list[Row]:
    """`rows` most urgent first; within a verdict, more waiting decisions first, then in fleet.yaml's order."""
    return sorted(rows, key=lambda row: (rank(row.verdict), -row.pending))


def need_counts(rows: Sequence[Judged]) -> list[tuple[str, int]]:
    """(verdict, how many agents have it), in NEED_ORDER, leaving out verdicts no agent has."""
    return [(verdict, count) for verdict in NEED_ORDER
            if (count := sum(rank(row.verdict) == NEED_ORDER.index(verdict) for row in rows))]


def headline(rows: Sequence[Judged]) -> str:
    """The fleet in one line: `22 agents: 1 unreadable, 2 stalled, 5 waiting on you, 14 ok`."""
    counts = ", ".join(f"{count} {verdict}" for verdict, count in need_counts(rows))
    return f"{len(rows)} agent{'s' if len(rows) != 1 else ''}" + (f": {counts}" if counts else "")


def fleet_notes(rows: Sequence[Judged]) -> list[str]:
    """What the verdicts have in common, said once: why a stalled agent may be stalled."""
    return [f"stalled: {INACTIVE_NOTE}"] if any(row.verdict == STALLED for row in rows) else []


def unread_note(rows: Sequence[Judged]) -> str:
    """What an inbox cannot say when agents could not be read: "nothing waits" would be a claim about them too.
    Empty when every agent was read."""
    unread = sum(row.verdict == UNREADABLE for row in rows)
    if not unread:
        return ""
    return (f"{unread} agent{'s' if unread != 1 else ''} could not be read: any decision waiting on "
            f"{'them' if unread != 1 else 'it'} is not listed here.")


def nothing_waits(rows: Sequence[Judged]) -> str:
    """The empty inbox's line: nothing waits, or nothing waits among the agents that could be read."""
    return "No decisions are waiting." if not unread_note(rows) else \
        "No decisions are waiting from the agents that could be read."


# What a public view says of an agent that could not be read: its error names repositories and quotes git.
PUBLIC_ERROR = ("could not be read (the error is left out of the public view; run without --public where only the "
                "agents' readers see it)")


def unreadable_diagnostics(fleet: Fleet, rows: Iterable[AgentRow], *, public: bool = False) -> list[str]:
    """One `path:line: GM931 agent: error` line per row that could not be read, at its entry in the fleet file:
    where the human fixes a path, a URL, a workspace or a token. `public` leaves the error out (PUBLIC_ERROR).
    The error is folded onto the line: it may quote git's or a library's output, and a line break in it would
    start a line that reads as no diagnostic (a `path:line:` reader takes it for garbage, or for another's)."""
    at = entry_places(fleet)
    found = []
    for row in rows:
        if row.error:
            error = one_line(PUBLIC_ERROR if public else row.error)
            text, _ = codes.FLEET_AGENT_UNREADABLE.render(agent=row.label, error=error)
            found.append(f"{at(row.agent)}: {codes.FLEET_AGENT_UNREADABLE.code} {text}")
    return found


def unreadable_data(fleet: Fleet, rows: Iterable[AgentRow], *, public: bool) -> list[dict[str, Any]]:
    """`unreadable` of the --json outputs: each agent that could not be read, where its entry is (`at`, the fleet
    file and line, as the text's GM931 line says) and git's `error`, which `public` leaves out."""
    at = entry_places(fleet)
    return [{"agent": row.label, **({} if public else {"error": row.error}), "at": at(row.agent),
             "code": codes.FLEET_AGENT_UNREADABLE.code} for row in rows if row.error]


def entry_places(fleet: Fleet) -> Callable[[str], str]:
    """`path:line` of an agent's entry in the fleet file, by its name (line 1 where its line is not known)."""
    lines = {entry.name: entry.line for entry in fleet.agents}
    return lambda agent: f"{fleet.path}:{lines.get(agent) or 1}"
