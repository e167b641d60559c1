"""GM309 and GM310: the times LOG entries and NOW blocks carry, held to the clock (rules 4); GM730: the times
new decisions and lessons carry (rules 5).

One ordering rule for both files. Entries are ordered by position: LOG by cycle number (GM303), NOW newest on
top. A time is the clock's word on when an entry was written, so it is judged against a clock, never against
another entry: a new entry dated more than CLOCK_SKEW after the clock that judges it is an error (GM309), and an
entry more than CLOCK_SKEW earlier than the one it follows is reported (GM310), because the writer that comes
second cannot correct the first one's fast clock. Before rules 4 a backwards time was an error (GM302, GM103),
and history made under those rules is still judged so.
"""
from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

from gitmem import codes
from gitmem.checks.inputs import CheckInput
from gitmem.checks.violation import Violation
from gitmem.memory.clock_skew import beyond, spoken
from gitmem.memory.timestamps import Timestamp

# The rules generation from which LOG and NOW are ordered by position, and a backwards time is only reported.
ORDERED_BY_POSITION = 4


def by_position(inp: CheckInput) -> bool:
    """Whether the new state answers to the rules that order entries by position (rules 4 on)."""
    return inp.generation >= ORDERED_BY_POSITION


def dated_ahead_violation(inp: CheckInput, path: str, line: int, what: str, when: Timestamp,
                heading: str) -> Violation | None:
    """GM309 when `when` is more than CLOCK_SKEW after a clock that judges the new state: `check`'s clock, or
    the commit's committer date and the clock of the verify (a fast clock dates the commit ahead too). An entry
    a merge brings from another parent was judged by the commit that wrote it: a heading there carries its time,
    whatever cycle number the merge gave it (`gitmem merge` renumbers what it brings in, and keeps its time unless
    it dates it again, by a time one of the parents holds: gitmem.publish.merge.brought_in)."""
    parents = (*((inp.old,) if inp.old is not None else ()), *inp.others) if inp.others else ()
    if any(_holds_time(parent.read(path), heading) for parent in parents):
        return None
    for moment, variant in judges(inp):
        gap = beyond(when.moment, moment)
        if gap is not None:
            return Violation.of(codes.LOG_DATED_AHEAD, path, line, variant, what=what, when=when, ahead=spoken(gap),
                                moment=Timestamp.from_datetime(moment))
    return None


def judges(inp: CheckInput) -> list[tuple[datetime, str]]:
    """The clocks a new state's written times are judged by, each with its message variant: `check`'s clock, or
    the commit's committer date and the verifying clock (a fast clock dates the commit ahead too)."""
    found: list[tuple[datetime, str]] = []
    if inp.moment is not None:
        found.append((inp.moment, "commit" if inp.moment_is_commit else ""))
    if inp.verifying is not None:
        found.append((inp.verifying, "verifying"))
    return found


# The last day anywhere on Earth is 14 hours ahead of UTC (Kiribati): a day is ahead of a clock only past it.
_EARTHS_LEAD = timedelta(hours=14)


def not_begun_anywhere(day: date, moment: datetime) -> bool:
    """Whether `day` has not yet begun anywhere on Earth at `moment`: no one could have written on it."""
    return day > (moment.astimezone(UTC) + _EARTHS_LEAD).date()


def ahead_violation(inp: CheckInput, path: str, line: int, what: str, *, when: Timestamp | None = None,
                    day: date | None = None) -> Violation | None:
    """GM730 for a time in DECISIONS or LESSONS new in this state: `when` more than CLOCK_SKEW after a judging
    clock (`judges`), or `day` after the day anywhere on Earth by it."""
    for moment, variant in judges(inp):
        if when is not None and beyond(when.moment, moment) is not None:
            return Violation.of(codes.MEMORY_DATED_AHEAD, path, line, variant, what=what, when=when,
                                moment=Timestamp.from_datetime(moment))
        if day is not None and not_begun_anywhere(day, moment):
            return Violation.of(codes.MEMORY_DATED_AHEAD, path, line, variant, what=what, when=day.isoformat(),
                                moment=Timestamp.from_datetime(moment))
    return None


def skewed(path: str, line: int, what: str, when: Timestamp, before_what: str, before: Timestamp) -> Violation | None:
    """GM310 (a warning) when `when` is more than CLOCK_SKEW earlier than the entry it follows."""
    gap = beyond(before.moment, when.moment)
    if gap is None:
        return None
    return Violation.of(codes.LOG_TIME_SKEW, path, line, what=what, when=when, behind=spoken(gap),
                        before_what=before_what, before=before)


def _holds_time(data: bytes | None, heading: str) -> bool:
    """Whether `data` has a heading dated as `heading` is (`## <time> · …`): the time is the heading's first part."""
    dated = heading.split(" · ", 1)[0]
    return data is not None and (f"\n{dated} · ".encode() in data or f"\n{dated}\n".encode() in data)
