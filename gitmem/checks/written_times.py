"""GM309 and GM310: the times LOG entries and NOW blocks carry, held to the clock (rules 4).

One ordering rule for both files. Entries are ordered by position: LOG by cycle number (GM303), NOW newest on
top. A time is the clock's word on when an entry was written, so it is judged against a clock, never against
another entry: a new entry dated more than CLOCK_SKEW after the clock that judges it is an error (GM309), and an
entry more than CLOCK_SKEW earlier than the one it follows is reported (GM310), because the writer that comes
second cannot correct the first one's fast clock. Before rules 4 a backwards time was an error (GM302, GM103),
and history made under those rules is still judged so.
"""
from __future__ import annotations

from datetime import datetime

from gitmem import codes
from gitmem.checks.inputs import CheckInput
from gitmem.checks.violation import Violation
from gitmem.memory.clock_skew import beyond, spoken
from gitmem.memory.text import Timestamp

# The rules generation from which LOG and NOW are ordered by position, and a backwards time is only reported.
ORDERED_BY_POSITION = 4


def by_position(inp: CheckInput) -> bool:
    """Whether the new state answers to the rules that order entries by position (rules 4 on)."""
    return inp.generation >= ORDERED_BY_POSITION


def dated_ahead_violation(inp: CheckInput, path: str, line: int, what: str, when: Timestamp,
                heading: str) -> Violation | None:
    """GM309 when `when` is more than CLOCK_SKEW after a clock that judges the new state: `check`'s clock, or
    the commit's committer date and the clock of the verify (a fast clock dates the commit ahead too). An entry
    a merge brings from another parent (its `heading` is there) was judged by the commit that wrote it."""
    if any(_holds(other.read(path), heading) for other in inp.others):
        return None
    judges: list[tuple[datetime, str]] = []
    if inp.moment is not None:
        judges.append((inp.moment, "commit" if inp.moment_is_commit else ""))
    if inp.verifying is not None:
        judges.append((inp.verifying, "verifying"))
    for moment, variant in judges:
        gap = beyond(when.moment, moment)
        if gap is not None:
            return Violation.of(codes.LOG_DATED_AHEAD, path, line, variant, what=what, when=when, ahead=spoken(gap),
                                moment=Timestamp.from_datetime(moment))
    return None


def skewed(path: str, line: int, what: str, when: Timestamp, before_what: str, before: Timestamp) -> Violation | None:
    """GM310 (a warning) when `when` is more than CLOCK_SKEW earlier than the entry it follows."""
    gap = beyond(before.moment, when.moment)
    if gap is None:
        return None
    return Violation.of(codes.LOG_TIME_SKEW, path, line, what=what, when=when, behind=spoken(gap),
                        before_what=before_what, before=before)


def _holds(data: bytes | None, heading: str) -> bool:
    return data is not None and f"\n{heading}\n".encode() in data
