"""A cycle number and a decision ID are positions in the merged history, not claims (docs/format.md, "Two
writers"): the rule by which one side's new ones move after the other side's (`side_shifts`) and the renaming of
what that side wrote. Pure text, below the checks: the writers (gitmem.publish.renumber: the rebase, `gitmem
merge`, the merge driver) apply it, and `verify` applies it again to see a merge's other parent as the merge holds
it (gitmem.checks.merges).
"""
from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from gitmem.memory import decisions, log
from gitmem.memory.text import decode_text


@dataclass(frozen=True)
class Shift:
    """Cycle numbers from `first` on move up by `by`; `by` 0 changes nothing."""

    first: int = 0
    by: int = 0

    def number(self, cycle: int) -> int:
        return cycle + self.by if self.by and cycle >= self.first else cycle


NO_SHIFT = Shift()


def shift_after(last: int, new: Iterable[int]) -> Shift:
    """The shift that puts the cycle numbers `new` (one side's new cycles) after `last` (the other side's last
    cycle); none when they already follow it."""
    numbers = list(new)
    if not numbers:
        return Shift()
    first = min(numbers)
    return Shift(first, max(0, last - first + 1))


def last_cycle(data: bytes | None) -> int:
    """The highest cycle number in a LOG (0 for none)."""
    return log.last_cycle_number(decode_text(data)) if data else 0


def new_log_cycles(base: bytes | None, data: bytes | None) -> list[int]:
    """The cycle numbers of the entries `data` appends to `base`; none when it is no append."""
    if data is None:
        return []
    verdict = log.append_verdict(base or b"", data)
    if not verdict.ok or verdict.open_ is None:
        return []
    return [cycle for _, cycle in log.heading_cycles(data[verdict.start:], open_=verdict.open_) if cycle is not None]


_DECISION_REF = re.compile(r"\bD-([0-9]{4,18})\b")
_ASKED_CYCLE = re.compile(r"\(cycle ([0-9]{1,18})\)")


def decision_numbers(data: bytes | None) -> set[int]:
    """The numbers of the decisions in DECISIONS `data` (D-0007 is 7)."""
    return {d.number for d in decisions.parse(decode_text(data)).all} if data else set()


def renamed_ids(text: str, ids: Shift) -> str:
    """`text` with each decision ID `ids` moves renamed (D-0004 as D-0005)."""
    def one(match: re.Match[str]) -> str:
        number = int(match.group(1))
        return decisions.format_id(ids.number(number))
    return _DECISION_REF.sub(one, text) if ids.by else text


def in_lines(text: str, spans: Iterable[tuple[int, int]], change: Callable[[str], str]) -> str:
    """`text` with `change` applied to the lines of each (first, last) span (1-based, inclusive) only."""
    lines = text.split("\n")
    for first, last in spans:
        lines[first - 1:last] = change("\n".join(lines[first - 1:last])).split("\n")
    return "\n".join(lines)


def renumber_decisions(base: bytes | None, data: bytes, ids: Shift, cycles: Shift) -> bytes:
    """DECISIONS `data` with the decisions `base` does not have renamed by `ids`, and the cycles they name
    (`Asked: … (cycle N)`) renumbered by `cycles`."""
    if not ids.by and not cycles.by:
        return data
    text = decode_text(data)
    doc = decisions.parse(text)
    if doc.problems:
        return data
    known = decision_numbers(base)

    def change(part: str) -> str:
        return _ASKED_CYCLE.sub(lambda m: f"(cycle {cycles.number(int(m.group(1)))})", renamed_ids(part, ids))

    return in_lines(text, [(d.line, d.end) for d in doc.all if d.number not in known], change).encode("utf-8")


@dataclass(frozen=True)
class SideFiles:
    """One side's LOG and DECISIONS as stored (None: no such file)."""

    log: bytes | None
    decisions: bytes | None


def side_shifts(base: SideFiles, upstream: SideFiles, ours: SideFiles) -> tuple[Shift, Shift]:
    """(cycles, decision IDs): how `ours`' new cycles and new decisions move to follow `upstream`'s, both split
    from `base`. Ours landed upstream already (a branch squash-merged, cherry-picked): its entries are upstream's
    own, so its cycles take no new numbers."""
    landed = ours.log is not None and upstream.log is not None and upstream.log.startswith(ours.log)
    cycles = Shift() if landed else shift_after(last_cycle(upstream.log), new_log_cycles(base.log, ours.log))
    ids = Shift()
    # Parsed only when both sides changed DECISIONS: at 100x it holds 4,000 decisions.
    if base.decisions not in (upstream.decisions, ours.decisions):
        ids = shift_after(max(decision_numbers(upstream.decisions), default=0),
                          decision_numbers(ours.decisions) - decision_numbers(base.decisions))
    return cycles, ids
