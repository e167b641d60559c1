"""The fleet commands' answers as text, as `gitmem.fleet.answers` holds them as data: the inbox of `fleet pending`,
the health table of `fleet status`, the lines of `fleet dispatch`, and what `fleet report` and `fleet pages` say
they wrote. Plain strings; the command prints them (colour is its `tint`)."""
from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from gitmem.fleet.dispatch import DISPATCH, CatchUpPass
from gitmem.fleet.fleetfile import is_url
from gitmem.fleet.need import by_need, fleet_notes, headline, nothing_waits, unread_note
from gitmem.fleet.public import public_row, waiting_counts
from gitmem.fleet.read import AgentRow, InboxItem
from gitmem.views.kept_branches import delete_commands
from gitmem.views.pending import INCOMPLETE

# A verdict's colour in the health table; one gitmem does not know yet is yellow, as a look is due.
TINTS = {"ok": "green", "stalled": "red", "clock ahead": "red", "over budget": "red", "rule 0 streak": "red",
         "unreadable": "red"}
HEAD = ("agent", "verdict", "last cycle", "today", "streak", "pending", "last close", "branches")
PAGES_OFF = ("GitHub Pages: off in {fleet}, so nothing is published (`pages: public` publishes verdicts and counts "
             "only, to anyone)")
# tint(cell, colour name) -> the cell coloured; the command's, which knows whether its stream wants colour.
Tint = Callable[[str, str], str]


def inbox_text(inbox: Sequence[InboxItem], rows: Sequence[AgentRow], *, public: bool) -> str:
    """The fleet's pending decisions as text: each with where to answer it, or with --public only how many wait
    on each agent. It says when agents could not be read (stdout alone reaches a job summary)."""
    unread = [note] if (note := unread_note(rows)) else []
    if public:
        counts = waiting_counts(list(inbox))
        lines = [f"{label}: {n} decision(s) waiting" for label, n in counts.items()] or [nothing_waits(rows)]
        return "\n".join([*lines, *unread])
    lines = [] if inbox else [nothing_waits(rows)]
    for item in inbox:
        agent = item.agent + (f"/{item.workspace}" if item.workspace else "")
        lines.append(f"{agent} · {item.id} · {item.title}  ({item.age} old)")
        if item.recommendation:
            lines.append(f"    recommendation: {item.recommendation}")
        lines.append(f"    answer at: {item.answer_at}")
        if item.answer_incomplete:
            lines.append(f"    {INCOMPLETE}")
    return "\n".join([*lines, *unread])


def status_text(rows: Sequence[Any], *, tint: Tint | None = None, public: bool = False,
                unreadable: Sequence[str] = ()) -> str:
    """The health table as text: the fleet in one line, one line per agent (per workspace) most urgent first,
    then what each verdict is about (for an agent that could not be read, its line of `unreadable`, the GM931
    diagnostics) and the notes that hold for every agent, once. `public`: verdicts and counts only
    (`gitmem.fleet.public`); `tint` colours each verdict (none: plain)."""
    ordered: list[Any] = by_need(public_row(row) for row in rows) if public else by_need(rows)
    table = [HEAD, *(_public_cells(row) if public else _cells(row) for row in ordered)]
    widths = [max(len(line[i]) for line in table) for i in range(len(HEAD))]
    lines = []
    for n, line in enumerate(table):
        cells = [cell.ljust(widths[i]) for i, cell in enumerate(line)]
        if n and tint is not None:
            cells[1] = tint(cells[1], TINTS.get(ordered[n - 1].verdict, "yellow"))
        lines.append("  ".join(cells).rstrip())
    lines += unreadable
    for row in [] if public else ordered:
        lines += _row_notes(row)
    return "\n".join([headline(ordered), *lines, *fleet_notes(ordered)]) + "\n"


def _cells(row: AgentRow) -> tuple[str, ...]:
    last = row.last_cycle
    return (row.label, row.verdict, f"{last['cycle']} {last['outcome']} {last['age']} ago" if last else "—",
            str(row.cycles_today), str((row.streak or {}).get("length", 0)), str(row.pending),
            row.last_close or "—", str(len(row.waiting_branches)))


def _public_cells(row: Any) -> tuple[str, ...]:
    last = f"{row.last_cycle} {row.last_outcome} {row.last_age} ago" if row.last_cycle is not None else "—"
    return (row.label, row.verdict, last, str(row.cycles_today), str(row.streak), str(row.pending),
            row.last_close or "—", str(row.waiting_branches))


def _row_notes(row: AgentRow) -> list[str]:
    """What a row's verdict is about, its branches to review, and the commands that delete a declined one."""
    lines = []
    if row.said and not row.error:
        lines.append(f"{row.label}: {row.said}")
    review = [name for name in row.waiting_branches if name not in row.deletable_branches]
    if review:
        lines.append(f"{row.label}: waiting branches: {', '.join(review)}")
    for name in row.deletable_branches:
        # Where the branch is: an agent read in place lists its own branches as they are and a remote's as
        # `remote/gitmem/...`; a fetched copy's are its remote's (`origin` in the human's clone).
        remote, _, branch = name.rpartition("gitmem/")
        here = not remote and not is_url(row.repo)
        lines.append(f"{row.label}: {name}: its decision was answered No; delete it: "
                     + delete_commands(f"gitmem/{branch}", here, () if here else (remote.rstrip("/") or "origin",)))
    return lines


def dispatch_text(done: CatchUpPass, *, public: bool) -> str:
    """A line per agent (its decision, why, what was done or failed), then the calls made."""
    lines = []
    for step in done.steps:
        did = "; ".join(step.done) or ("would dispatch" if done.dry_run and step.decision == DISPATCH else "")
        if step.dispatched and not public:
            did += f" on {step.ref}"
        said = f"{step.agent}: {step.decision}: {step.why}" + (f" -> {did}" if did else "")
        why = "failed (the error is left out of the public view)" if public else f"failed: {step.error}"
        lines.append(said + (f" -> {why}" if step.error else ""))
    return "\n".join([*lines, f"{done.calls} GitHub API call(s)" + (" (dry run: none made)" if done.dry_run else "")])


def report_written(target: str, size: int, written: int, removed: Sequence[str], *, public: bool) -> str:
    """What `fleet report` says it wrote: the page, the agents' pages, and the stale pages it removed."""
    return (f"wrote {target} ({size // 1024} KB) and {written} agent page(s)"
            + ("; public view: verdicts and counts only" if public else "") + _removed_note(removed))


def _removed_note(removed: Sequence[str]) -> str:
    if not removed:
        return ""
    return (f"; removed {len(removed)} page(s) an earlier report wrote for agents no longer in the fleet "
            f"({', '.join(removed[:3])}{', …' if len(removed) > 3 else ''})")
