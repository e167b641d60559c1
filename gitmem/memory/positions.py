"""A cycle number, a decision ID and a lesson ID are positions in the merged history, not claims (docs/format.md, "Two
writers"): the rule by which one side's new ones move after the other side's (`side_shifts`) and the renaming of
what that side wrote. Pure text, below the checks: the writers (gitmem.publish.renumber: the rebase, `gitmem
merge`, the merge driver) apply it, and `verify` applies it again to see a merge's other parent as the merge holds
it (gitmem.checks.merges).
"""
from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from gitmem.memory import decisions, lessons, log, volumes
from gitmem.memory.decoding import decode_text


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
    """The cycle numbers of the entries `data` appends to `base`, or to what a seal left of it (rules 6: a side
    that sealed is no append of `base`, and its new cycles move all the same); none when it is neither."""
    if data is None:
        return []
    verdict = log.append_verdict(base or b"", data)
    if not verdict.ok and base:
        shown = volumes.seal_shown(base, data)
        if shown is not None:
            verdict = log.append_verdict(shown[1], data)
    if not verdict.ok or verdict.open_ is None:
        return []
    return [cycle for _, cycle in log.heading_cycles(data[verdict.start:], open_=verdict.open_) if cycle is not None]


_DECISION_REF = re.compile(r"\bD-([0-9]{4,18})\b")
_LESSON_REF = re.compile(r"\bL-([0-9]{4,18})\b")
# A cycle a decision's Asked line, or a lesson's Happened or Confirmed line, names.
_NAMED_CYCLE = re.compile(r"\(cycle ([0-9]{1,18})\)")


@dataclass(frozen=True)
class Shifts:
    """How one side's new positions move after the other side's: its cycles, decision IDs and lesson IDs."""

    cycles: Shift = NO_SHIFT
    decisions: Shift = NO_SHIFT
    lessons: Shift = NO_SHIFT

    @property
    def by(self) -> bool:
        """Whether anything moves."""
        return bool(self.cycles.by or self.decisions.by or self.lessons.by)

    @property
    def ids(self) -> bool:
        """Whether an ID moves."""
        return bool(self.decisions.by or self.lessons.by)


NO_SHIFTS = Shifts()


def decision_numbers(data: bytes | None) -> set[int]:
    """The numbers of the decisions in DECISIONS `data` (D-0007 is 7)."""
    return {d.number for d in decisions.parse(decode_text(data)).all} if data else set()


def renamed_ids(text: str, shifts: Shifts) -> str:
    """`text` with each decision and lesson ID `shifts` moves renamed (D-0004 as D-0005, L-0002 as L-0003)."""
    def decision(match: re.Match[str]) -> str:
        return decisions.format_id(shifts.decisions.number(int(match.group(1))))

    def lesson(match: re.Match[str]) -> str:
        return lessons.format_id(shifts.lessons.number(int(match.group(1))))

    text = _DECISION_REF.sub(decision, text) if shifts.decisions.by else text
    return _LESSON_REF.sub(lesson, text) if shifts.lessons.by else text


def _named_cycles(text: str, cycles: Shift) -> str:
    return _NAMED_CYCLE.sub(lambda m: f"(cycle {cycles.number(int(m.group(1)))})", text) if cycles.by else text


def in_lines(text: str, spans: Iterable[tuple[int, int]], change: Callable[[str], str]) -> str:
    """`text` with `change` applied to the lines of each (first, last) span (1-based, inclusive) only."""
    lines = text.split("\n")
    for first, last in spans:
        lines[first - 1:last] = change("\n".join(lines[first - 1:last])).split("\n")
    return "\n".join(lines)


def renumber_decisions(base: bytes | None, data: bytes, shifts: Shifts) -> bytes:
    """DECISIONS `data` with the decisions `base` does not have renamed by `shifts` (and the IDs they name), and
    the cycles they name (`Asked: … (cycle N)`) renumbered."""
    if not shifts.by:
        return data
    text = decode_text(data)
    doc = decisions.parse(text)
    if doc.problems:
        return data
    known = decision_numbers(base)

    def change(part: str) -> str:
        return _named_cycles(renamed_ids(part, shifts), shifts.cycles)

    return in_lines(text, [(d.line, d.end) for d in doc.all if d.number not in known], change).encode("utf-8")


def renumber_lessons(base: bytes | None, data: bytes, shifts: Shifts) -> bytes:
    """LESSONS `data` with the lessons `base` does not have renamed by `shifts` (and the IDs they name), and the
    cycles named in the lines this side wrote (a new lesson's `Happened`, a `Confirmed` line added to any lesson)
    renumbered: the other side's cycles took those numbers first."""
    if not shifts.by:
        return data
    text = decode_text(data)
    doc = lessons.parse(text)
    if doc.problems:
        return data
    base_text = decode_text(base) if base else ""
    base_lines = base_text.split("\n")
    known = {item.id: set(base_lines[item.line - 1:item.end]) for item in lessons.parse(base_text).lessons}
    lines = text.split("\n")
    for item in doc.lessons:
        old = known.get(item.id)
        for at in range(item.line - 1, item.end):
            if old is None:
                lines[at] = _named_cycles(renamed_ids(lines[at], shifts), shifts.cycles)
            elif lines[at] not in old:
                lines[at] = _named_cycles(lines[at], shifts.cycles)
    return "\n".join(lines).encode("utf-8")


@dataclass(frozen=True)
class SideFiles:
    """One side's LOG, DECISIONS and LESSONS as stored (None: no such file)."""

    log: bytes | None
    decisions: bytes | None = None
    lessons: bytes | None = None


def side_shifts(base: SideFiles, upstream: SideFiles, ours: SideFiles) -> Shifts:
    """How `ours`' new cycles, decisions and lessons move to follow `upstream`'s, both split from `base`. Ours
    landed upstream already (a branch squash-merged, cherry-picked): its entries are upstream's own, so its cycles
    take no new numbers."""
    landed = ours.log is not None and upstream.log is not None and upstream.log.startswith(ours.log)
    cycles = NO_SHIFT if landed else shift_after(last_cycle(upstream.log), new_log_cycles(base.log, ours.log))
    ids = lesson_ids = NO_SHIFT
    # Parsed only when both sides changed the file: at 100x DECISIONS holds 4,000 decisions.
    if base.decisions not in (upstream.decisions, ours.decisions):
        ids = _ids_after(*(_entries(side.decisions, lambda text: decisions.parse(text).all)
                           for side in (base, upstream, ours)))
    if base.lessons not in (upstream.lessons, ours.lessons):
        lesson_ids = _ids_after(*(_entries(side.lessons, lambda text: lessons.parse(text).lessons)
                                  for side in (base, upstream, ours)))
    return Shifts(cycles, ids, lesson_ids)


Numbered = decisions.Decision | lessons.Lesson


def _entries(data: bytes | None, parse: Callable[[str], Iterable[Numbered]]) -> list[Numbered]:
    return list(parse(decode_text(data))) if data else []


def _ids_after(base: list[Numbered], upstream: list[Numbered], ours: list[Numbered]) -> Shift:
    """The shift that puts `ours`' new IDs after `upstream`'s highest. One upstream holds already (the same ID,
    title and first line, its Asked or Happened: a branch squash-merged, cherry-picked) is upstream's own and
    takes no new ID, or it would land twice."""
    known = {item.number for item in base}
    landed = {_identity(item) for item in upstream}
    new = [item.number for item in ours if item.number not in known and _identity(item) not in landed]
    return shift_after(max((item.number for item in upstream), default=0), new)


def _identity(item: Numbered) -> tuple[str, str, str]:
    return item.id, item.title, item.body[0] if item.body else ""
