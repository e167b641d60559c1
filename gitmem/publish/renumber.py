"""A cycle number is a position in the merged history, not a claim (docs/format.md, "Two writers").

Two writers may take the same number: a scheduled cycle runs for minutes while a human's interactive session
logs and pushes. When one side's commits are replayed (a rebase) or merged onto the other's, and the other side
appended cycles since the two split, the replayed side's own new cycle entries in LOG, its new cycle blocks in
NOW and its cycle commits' messages (`gitmem: cycle N`, `Gitmem-Cycle: N`) take the next numbers after the other
side's last cycle, in their order. Decision and lesson IDs are positions too: when both sides asked (added) one,
the replayed side's new decisions (lessons) take the IDs after the other side's highest, and every mention of them
in what the replayed side added (its new decisions, lessons, LOG entries and NOW blocks) follows, as do the cycle
numbers its new decisions and lessons name; a merge leaves the other side's LOG entries as written (history in
that parent: gitmem.checks.merges). The rule itself is gitmem.memory.positions, which `verify` applies too.
Nothing else changes: times and the other side's entries stay as written. Pure text: the rebase
(gitmem.gitio.rebase), `gitmem merge` and the merge driver apply it.
"""
from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, replace

from gitmem.config import Config
from gitmem.memory import decisions, lessons, log, now
from gitmem.memory.decoding import decode_text
from gitmem.memory.positions import (
    NO_SHIFTS,
    Shift,
    Shifts,
    SideFiles,
    in_lines,
    renamed_ids,
    renumber_decisions,
    renumber_lessons,
    side_shifts,
)


def renumber_log(base: bytes | None, data: bytes, shift: Shift, ids: Shifts = NO_SHIFTS) -> bytes:
    """`data` with the headings of the cycle entries it appends to `base` renumbered by `shift`, and the decision
    and lesson IDs those entries name renamed by `ids`."""
    verdict = log.append_verdict(base or b"", data)
    if not verdict.ok or verdict.open_ is None:
        return data
    if ids.ids:
        data = data[:verdict.start] + renamed_ids(data[verdict.start:].decode("utf-8"), ids).encode("utf-8")
    if not shift.by:
        return data
    start = verdict.start
    tail = data[start:]
    parts: list[bytes] = [data[:start]]
    done = 0
    for at, cycle in log.heading_cycles(tail, open_=verdict.open_):
        if cycle is None or shift.number(cycle) == cycle:
            continue
        end = tail.find(b"\n", at)
        end = len(tail) if end < 0 else end
        parsed = log.parse_any_heading(tail[at + 3:end].decode("utf-8"))
        if parsed is None:
            continue
        when, _, outcome, amends = parsed
        heading = log.LogEntry(when, shift.number(cycle), outcome, amends=amends).heading()
        parts += [tail[done:at], heading.encode("utf-8")]
        done = end
    parts.append(tail[done:])
    return b"".join(parts)


def new_now_cycles(base: bytes | None, data: bytes | None) -> list[int]:
    """The cycle numbers of the cycle blocks in NOW `data` that `base` does not have."""
    if data is None:
        return []
    known = _headings(base)
    return [b.cycle for b in now.parse(decode_text(data)).blocks if b.cycle is not None and b.heading() not in known]


def last_now_cycle(data: bytes | None) -> int:
    if not data:
        return 0
    return max((b.cycle for b in now.parse(decode_text(data)).blocks if b.cycle is not None), default=0)


def renumber_now(base: bytes | None, data: bytes, shift: Shift, ids: Shifts = NO_SHIFTS) -> bytes:
    """`data` with the headings of the cycle blocks `base` does not have renumbered by `shift`, and the decision
    and lesson IDs those blocks name renamed by `ids`."""
    if not shift.by and not ids.ids:
        return data
    text = decode_text(data)
    doc = now.parse(text)
    if doc.problems:
        return data
    known = _headings(base)
    fresh = [block for block in doc.blocks if block.heading() not in known]
    text = in_lines(text, [(block.line + 1, block.end) for block in fresh], lambda part: renamed_ids(part, ids))
    lines = text.split("\n")
    for block in fresh:
        if block.cycle is None or shift.number(block.cycle) == block.cycle:
            continue
        lines[block.line - 1] = replace(block, cycle=shift.number(block.cycle)).heading()
    return "\n".join(lines).encode("utf-8")


def _headings(data: bytes | None) -> set[str]:
    return {b.heading() for b in now.parse(decode_text(data)).blocks} if data else set()


_SUBJECT = re.compile(r"^gitmem: cycle ([0-9]{1,18}) ")
_TRAILER = re.compile(r"^Gitmem-Cycle: ([0-9]{1,18})$", re.M)


def renumber_message(text: str, shift: Shift) -> str:
    """A cycle commit's message with its cycle number (subject and trailer) renumbered by `shift`."""
    if not shift.by:
        return text

    def number(match: re.Match[str]) -> str:
        old = int(match.group(1))
        return match.group(0).replace(str(old), str(shift.number(old)), 1)

    return _TRAILER.sub(number, _SUBJECT.sub(number, text, count=1))


@dataclass(frozen=True)
class CycleRenumbering:
    """The renumbering of one side's commits (gitmem.gitio.Renumbering): its LOG and NOW, from `base` on."""

    log_path: str               # "" when LOG is not renumbered here (renumberer_for)
    now_path: str
    base_log: bytes | None
    base_now: bytes | None
    shifts: Shifts              # this side's new cycles, decision IDs and lesson IDs, after the other side's
    decisions_path: str = ""
    base_decisions: bytes | None = None
    lessons_path: str = ""
    base_lessons: bytes | None = None

    @property
    def shift(self) -> Shift:
        return self.shifts.cycles

    @property
    def paths(self) -> tuple[str, ...]:
        return tuple(path for path in (self.log_path, self.now_path, self.decisions_path, self.lessons_path) if path)

    def file(self, path: str, data: bytes) -> bytes:
        if path == self.log_path:
            return renumber_log(self.base_log, data, self.shift, self.shifts)
        if path == self.now_path:
            return renumber_now(self.base_now, data, self.shift, self.shifts)
        if path == self.decisions_path:
            return renumber_decisions(self.base_decisions, data, self.shifts)
        if path == self.lessons_path:
            return renumber_lessons(self.base_lessons, data, self.shifts)
        return data

    def message(self, text: str) -> str:
        return renumber_message(text, self.shift)

    def describe(self) -> str:
        said = []
        if self.shift.by:
            said.append(f"another writer took cycle {self.shift.first}{'+' if self.shift.by > 1 else ''} first: "
                        f"this side's cycle {self.shift.first} is cycle {self.shift.number(self.shift.first)} now "
                        "(a cycle number is a position in the merged history)")
        for ids, format_id, verb in ((self.shifts.decisions, decisions.format_id, "asked"),
                                     (self.shifts.lessons, lessons.format_id, "added")):
            if ids.by:
                first, moved = format_id(ids.first), format_id(ids.number(ids.first))
                said.append(f"another writer {verb} {first} first: this side's {first} is {moved} now, and what "
                            "this side wrote names it so")
        return "; ".join(said)


def renumberer_for(config: Config, *, log_too: bool = True) -> Callable[
        [Callable[[str, str], bytes | None], str, str, str], CycleRenumbering | None]:
    """For gitmem.gitio.rebase_onto and merge_into: the renumbering that puts our commits' cycles after the
    upstream's, or None when they already follow. Without `log_too` LOG is left to the merge's resolver, which
    renumbers it by the same rule and keeps each entry's own heading (gitmem.publish.merge.brought_in)."""
    log_path, now_path, decisions_path = config.path("log"), config.path("now"), config.path("decisions")
    lessons_path = config.path("lessons")

    def plan(read: Callable[[str, str], bytes | None], fork: str, upstream: str,
             ours: str) -> CycleRenumbering | None:
        base, upstream_files, our_files = (
            SideFiles(read(rev, log_path), read(rev, decisions_path), read(rev, lessons_path))
            for rev in (fork, upstream, ours))
        shifts = side_shifts(base, upstream_files, our_files)
        if not shifts.by:
            return None
        # Without `log_too` (a merge) the resolver renumbers LOG's headings, and the other side's entries keep
        # their bodies as written, decision IDs included: they are history in that parent (gitmem.checks.merges).
        return CycleRenumbering(log_path if log_too else "", now_path, base.log, read(fork, now_path), shifts,
                                decisions_path, base.decisions, lessons_path, base.lessons)

    return plan
