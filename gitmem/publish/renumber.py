"""A cycle number is a position in the merged history, not a claim (docs/format.md, "Two writers").

Two writers may take the same number: a scheduled cycle runs for minutes while a human's interactive session
logs and pushes. When one side's commits are replayed (a rebase) or merged onto the other's, and the other side
appended cycles since the two split, the replayed side's own new cycle entries in LOG, its new cycle blocks in
NOW and its cycle commits' messages (`gitmem: cycle N`, `Gitmem-Cycle: N`) take the next numbers after the other
side's last cycle, in their order; in a rebase, so do the cycles its new LESSONS lines cite (a Confirmed line
counts only in the commit that logs its cycle: gitmem.close.backing). A decision ID is a position too: when
both sides asked, the replayed side's new decisions take the IDs after the other side's highest, and every
mention of them in what the replayed side added (its new decisions, LOG entries and NOW blocks) follows, as do
the cycle numbers its new decisions name; a merge leaves the other side's LOG entries as written (history in that
parent: gitmem.checks.merges).
Nothing else changes: times and the other side's entries stay as written. Pure text: the rebase
(gitmem.gitio.rebase), `gitmem merge` and the merge driver apply it.
"""
from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace

from gitmem.config import Config
from gitmem.memory import decisions, lessons, log, now
from gitmem.memory.text import decode_text


@dataclass(frozen=True)
class Shift:
    """Cycle numbers from `first` on move up by `by`; `by` 0 changes nothing."""

    first: int = 0
    by: int = 0

    def number(self, cycle: int) -> int:
        return cycle + self.by if self.by and cycle >= self.first else cycle


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


def renumber_log(base: bytes | None, data: bytes, shift: Shift, ids: Shift = Shift()) -> bytes:
    """`data` with the headings of the cycle entries it appends to `base` renumbered by `shift`, and the decision
    IDs those entries name renamed by `ids`."""
    verdict = log.append_verdict(base or b"", data)
    if not verdict.ok or verdict.open_ is None:
        return data
    if ids.by:
        data = data[:verdict.start] + _renamed(data[verdict.start:].decode("utf-8"), ids).encode("utf-8")
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


_DECISION_REF = re.compile(r"\bD-([0-9]{4,18})\b")
_ASKED_CYCLE = re.compile(r"\(cycle ([0-9]{1,18})\)")


def decision_numbers(data: bytes | None) -> set[int]:
    """The numbers of the decisions in DECISIONS `data` (D-0007 is 7)."""
    return {d.number for d in decisions.parse(decode_text(data)).all} if data else set()


def _renamed(text: str, ids: Shift) -> str:
    """`text` with each decision ID `ids` moves renamed (D-0004 as D-0005)."""
    def one(match: re.Match[str]) -> str:
        number = int(match.group(1))
        return decisions.format_id(ids.number(number))
    return _DECISION_REF.sub(one, text) if ids.by else text


def _in_lines(text: str, spans: Iterable[tuple[int, int]], change: Callable[[str], str]) -> str:
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
        return _ASKED_CYCLE.sub(lambda m: f"(cycle {cycles.number(int(m.group(1)))})", _renamed(part, ids))

    return _in_lines(text, [(d.line, d.end) for d in doc.all if d.number not in known], change).encode("utf-8")


_EVENTS = ("Happened", "Confirmed")     # a lesson's lines that cite a cycle (gitmem.memory.lessons.parse_event)


def renumber_lessons(base: bytes | None, data: bytes, cycles: Shift) -> bytes:
    """LESSONS `data` with the cycle each event line `base` does not have cites (a new lesson's Happened, a new
    Confirmed line) renumbered by `cycles`: a confirmation counts only in the commit that logs the cycle it cites
    (gitmem.close.backing), so it follows its cycle to the new number, as the LOG entry and NOW block do."""
    if not cycles.by:
        return data
    text = decode_text(data)
    doc = lessons.parse(text)
    if doc.problems:
        return data
    known = {item.id: {(f.key, f.value) for f in item.fields} for item in lessons.parse(decode_text(base)).lessons} \
        if base else {}
    spans = [(f.line, f.line) for item in doc.lessons for f in item.fields
             if f.key in _EVENTS and (f.key, f.value) not in known.get(item.id, set())]
    if not spans:
        return data

    def change(line: str) -> str:
        return _ASKED_CYCLE.sub(lambda m: f"(cycle {cycles.number(int(m.group(1)))})", line, count=1)

    return _in_lines(text, spans, change).encode("utf-8")


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


def renumber_now(base: bytes | None, data: bytes, shift: Shift, ids: Shift = Shift()) -> bytes:
    """`data` with the headings of the cycle blocks `base` does not have renumbered by `shift`, and the decision
    IDs those blocks name renamed by `ids`."""
    if not shift.by and not ids.by:
        return data
    text = decode_text(data)
    doc = now.parse(text)
    if doc.problems:
        return data
    known = _headings(base)
    fresh = [block for block in doc.blocks if block.heading() not in known]
    text = _in_lines(text, [(block.line + 1, block.end) for block in fresh], lambda part: _renamed(part, ids))
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
    shift: Shift
    decisions_path: str = ""
    base_decisions: bytes | None = None
    ids: Shift = Shift()        # this side's new decision IDs, after the other side's
    lessons_path: str = ""      # "" when LESSONS is not renumbered here (a merge: renumberer_for)
    base_lessons: bytes | None = None

    @property
    def paths(self) -> tuple[str, ...]:
        return tuple(path for path in (self.log_path, self.now_path, self.decisions_path, self.lessons_path) if path)

    def file(self, path: str, data: bytes) -> bytes:
        if path == self.log_path:
            return renumber_log(self.base_log, data, self.shift, self.ids)
        if path == self.now_path:
            return renumber_now(self.base_now, data, self.shift, self.ids)
        if path == self.decisions_path:
            return renumber_decisions(self.base_decisions, data, self.ids, self.shift)
        if path == self.lessons_path:
            return renumber_lessons(self.base_lessons, data, self.shift)
        return data

    def message(self, text: str) -> str:
        return renumber_message(text, self.shift)

    def describe(self) -> str:
        said = []
        if self.shift.by:
            said.append(f"another writer took cycle {self.shift.first}{'+' if self.shift.by > 1 else ''} first: "
                        f"this side's cycle {self.shift.first} is cycle {self.shift.number(self.shift.first)} now "
                        "(a cycle number is a position in the merged history)")
        if self.ids.by:
            first, moved = decisions.format_id(self.ids.first), decisions.format_id(self.ids.number(self.ids.first))
            said.append(f"another writer asked {first} first: this side's {first} is {moved} now, and what this "
                        "side wrote names it so")
        return "; ".join(said)


def renumberer_for(config: Config, *, log_too: bool = True) -> Callable[
        [Callable[[str, str], bytes | None], str, str, str], CycleRenumbering | None]:
    """For gitmem.gitio.rebase_onto and merge_into: the renumbering that puts our commits' cycles after the
    upstream's, or None when they already follow. Without `log_too` LOG is left to the merge's resolver, which
    renumbers it by the same rule and keeps each entry's own heading (gitmem.publish.merge.brought_in)."""
    log_path, now_path, decisions_path = config.path("log"), config.path("now"), config.path("decisions")

    def plan(read: Callable[[str, str], bytes | None], fork: str, upstream: str,
             ours: str) -> CycleRenumbering | None:
        base_log, upstream_log, our_log = read(fork, log_path), read(upstream, log_path), read(ours, log_path)
        # Ours landed upstream already (this branch squash-merged, cherry-picked): its entries are the upstream's
        # own, so its cycles take no new numbers, and its NOW blocks do not land a second time under them.
        landed = our_log is not None and upstream_log is not None and upstream_log.startswith(our_log)
        shift = Shift() if landed else shift_after(last_cycle(upstream_log), new_log_cycles(base_log, our_log))
        base_decisions = read(fork, decisions_path)
        upstream_decisions, our_decisions = read(upstream, decisions_path), read(ours, decisions_path)
        ids = Shift()
        # Parsed only when both sides changed DECISIONS: at 100x it holds 4,000 decisions.
        if base_decisions not in (upstream_decisions, our_decisions):
            ids = shift_after(max(decision_numbers(upstream_decisions), default=0),
                              decision_numbers(our_decisions) - decision_numbers(base_decisions))
        if not shift.by and not ids.by:
            return None
        # Without `log_too` (a merge) the resolver renumbers LOG's headings, and the other side's entries keep
        # their bodies as written, decision IDs included: they are history in that parent (gitmem.checks.merges).
        # LESSONS' cited cycles follow a replayed commit's LOG (a rebase); a merge keeps the commits that added
        # them, which logged the cycles they cite.
        lessons_path = config.path("lessons") if log_too and shift.by else ""
        return CycleRenumbering(log_path if log_too else "", now_path, base_log, read(fork, now_path), shift,
                                decisions_path, base_decisions, ids, lessons_path,
                                read(fork, lessons_path) if lessons_path else None)

    return plan
