"""A cycle number is a position in the merged history, not a claim (docs/format.md, "Two writers").

Two writers may take the same number: a scheduled cycle runs for minutes while a human's interactive session
logs and pushes. When one side's commits are replayed (a rebase) or merged onto the other's, and the other side
appended cycles since the two split, the replayed side's own new cycle entries in LOG, its new cycle blocks in
NOW and its cycle commits' messages (`gitmem: cycle N`, `Gitmem-Cycle: N`) take the next numbers after the other
side's last cycle, in their order. Nothing else changes: bodies, times and the other side's entries stay as
written. Pure text: the rebase (gitmem.gitio.rebase), `gitmem merge` and the merge driver apply it.
"""
from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace

from gitmem.config import Config
from gitmem.memory import log, now
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


def renumber_log(base: bytes | None, data: bytes, shift: Shift) -> bytes:
    """`data` with the headings of the cycle entries it appends to `base` renumbered by `shift`."""
    verdict = log.append_verdict(base or b"", data)
    if not shift.by or not verdict.ok or verdict.open_ is None:
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
        parsed = log.parse_heading(tail[at + 3:end].decode("utf-8"))
        if parsed is None:
            continue
        when, _, outcome = parsed
        heading = log.LogEntry(when, shift.number(cycle), outcome).heading()
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


def renumber_now(base: bytes | None, data: bytes, shift: Shift) -> bytes:
    """`data` with the headings of the cycle blocks `base` does not have renumbered by `shift`."""
    if not shift.by:
        return data
    text = decode_text(data)
    doc = now.parse(text)
    if doc.problems:
        return data
    known = _headings(base)
    lines = text.split("\n")
    for block in doc.blocks:
        if block.cycle is None or block.heading() in known or shift.number(block.cycle) == block.cycle:
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

    @property
    def paths(self) -> tuple[str, ...]:
        return tuple(path for path in (self.log_path, self.now_path) if path)

    def file(self, path: str, data: bytes) -> bytes:
        if path == self.log_path:
            return renumber_log(self.base_log, data, self.shift)
        if path == self.now_path:
            return renumber_now(self.base_now, data, self.shift)
        return data

    def message(self, text: str) -> str:
        return renumber_message(text, self.shift)

    def describe(self) -> str:
        return (f"another writer took cycle {self.shift.first}{'+' if self.shift.by > 1 else ''} first: this "
                f"side's cycle {self.shift.first} is cycle {self.shift.number(self.shift.first)} now (a cycle "
                "number is a position in the merged history)")


def renumberer_for(config: Config, *, log_too: bool = True) -> Callable[
        [Callable[[str, str], bytes | None], str, str, str], CycleRenumbering | None]:
    """For gitmem.gitio.rebase_onto and merge_into: the renumbering that puts our commits' cycles after the
    upstream's, or None when they already follow. Without `log_too` LOG is left to the merge's resolver, which
    renumbers it by the same rule and keeps each entry's own heading (gitmem.publish.merge.brought_in)."""
    log_path, now_path = config.path("log"), config.path("now")

    def plan(read: Callable[[str, str], bytes | None], fork: str, upstream: str,
             ours: str) -> CycleRenumbering | None:
        base_log = read(fork, log_path)
        shift = shift_after(last_cycle(read(upstream, log_path)),
                            new_log_cycles(base_log, read(ours, log_path)))
        if not shift.by:
            return None
        return CycleRenumbering(log_path if log_too else "", now_path, base_log, read(fork, now_path), shift)

    return plan
