"""Reading one day out of memory: the day's LOG entries, NOW blocks, the Rule 0 streak, decisions waiting.

LOG and NOW only grow, so everything here reads from the newest end and stops as soon as it has passed
the day's start: the cost follows the distance from the end of the file, not the length of the history.
LOG is given as a source to read back from (`Workspace.log_source()`, the file on disk), or as its text, or as
its whole history (`gitmem.workspace.log_history`): then a day older than LOG.md's first entry is read from the
sealed volumes that hold it (`close --date` of an old day), and a recent day reads none.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime, time, timedelta, tzinfo
from typing import Protocol, TypeVar

from gitmem.memory import fences, log, now
from gitmem.memory.log import LogEntry, TailSource
from gitmem.memory.now import NowBlock
from gitmem.workspace.log_history import LogHistory

STREAK_MIN = 3           # Rule 0: three no-build cycles in a row is a problem
_FIRST_TAIL = 16         # NOW blocks parsed on the first pass; each further pass parses four times as many

# The close's Day field and the day a close entry closed are LOG's (the push reads them too: gitmem.publish).
DAY_FIELD, closed_day = log.DAY_FIELD, log.closed_day

def _back(source: TailSource | str, enough: Callable[[tuple[LogEntry, ...]], bool]) -> tuple[LogEntry, ...]:
    """LOG's last entries, read back until `enough` of them (or the whole LOG), as readers take them: an amended
    entry gives way to its amendment (`log.live`; an amendment follows what it amends, so a tail holds both)."""
    if isinstance(source, LogHistory):           # past LOG.md's first entry, into the sealed volumes
        return source.live_tail(enough)[0]
    source = log.TextSource(source) if isinstance(source, str) else source
    return log.live_tail(source, enough)


def day_bounds(day: date, tz: tzinfo) -> tuple[datetime, datetime]:
    """[start, end) of a calendar day in the configured zone (DST-safe: both ends are local midnights)."""
    return datetime.combine(day, time(0), tz), datetime.combine(day + timedelta(days=1), time(0), tz)


def reported_until(day_end: datetime, written: datetime) -> datetime:
    """The moment up to which a close written at `written` reports the cycles of a day ending at `day_end`: the
    day's end, or, for a close run before it, the end of the minute the close is dated in. A close is dated by the
    moment it began (`run_close`) and LOG's times are whole minutes, so its entry alone says which cycles its report
    holds. One rule for the report (`writeup.facts_of`) and for every later reading of LOG (`_walk`): a cycle dated
    after it (a clock some minutes fast, a writer that pushed while the close ran) waits for the next close
    instead of falling between the two."""
    return min(day_end, written.replace(second=0, microsecond=0) + timedelta(minutes=1))


def entries_since(text: TailSource | str, start: datetime, *, at_least: int = 0) -> tuple[LogEntry, ...]:
    """LOG entries from the first one at or after `start` to the end, plus at least `at_least` before it.

    Reads growing tails backwards until the oldest entries read, `at_least` and one more, are before `start`.
    Those must be the oldest: LOG is ordered by position (rules 4), and an entry from a slow clock, dated before
    `start` below entries after it (GM310), says nothing of where the day begins; stopping at it would miss the
    day's entries above (its close, the cycles it ran).
    """
    def enough(entries: tuple[LogEntry, ...]) -> bool:
        return len(entries) > at_least and all(e.when.moment < start for e in entries[:at_least + 1])

    return _back(text, enough)


def cycle_numbers(text: str) -> set[int]:
    """Every cycle number that has a LOG entry now, from one regex pass (`log.heading_re`: 0.2 s for a 7 MB LOG
    of 50,000 entries), no parse. Close entries carry no number, so they never count."""
    fenced = fences.Fenced(text)
    return {int(match["cycle"]) for match in log.heading_re().finditer(text)
            if match["cycle"] is not None and not fenced.inside(match.start())}


@dataclass(frozen=True)
class Streak:
    """A run of no-build cycles in a row (Rule 0), across day boundaries: its first and last cycle numbers
    and times. The close keeps the run's LOG entries too (`cycles`), for their Results and blockers; the
    report, which holds no entries, leaves them out."""

    first: int
    last: int
    start: datetime
    end: datetime
    length: int
    cycles: tuple[LogEntry, ...] = field(default=(), compare=False, repr=False)

    @classmethod
    def of(cls, run: Sequence[LogEntry]) -> Streak:
        """The streak of a run of cycle entries (each with its number)."""
        first, last = run[0], run[-1]
        assert first.cycle is not None and last.cycle is not None     # a run holds cycles, never a close
        return cls(first.cycle, last.cycle, first.when.moment, last.when.moment, len(run), tuple(run))

    @property
    def is_problem(self) -> bool:
        return self.length >= STREAK_MIN


class _Cycle(Protocol):
    @property
    def outcome(self) -> str | None: ...


C = TypeVar("C", bound=_Cycle)


def no_build_runs(cycles: Iterable[C]) -> Iterator[list[C]]:
    """Every run of no-build cycles in a row, oldest first: the one loop that finds Rule 0 streaks, for the
    close, `gitmem status` and the report. `cycles` are cycles only (a close entry neither breaks nor joins a
    run), in LOG order."""
    run: list[C] = []
    for cycle in cycles:
        if cycle.outcome == log.Outcome.NO_BUILD:
            run.append(cycle)
            continue
        if run:
            yield run
        run = []
    if run:
        yield run


def no_build_streak(text: TailSource | str, until: datetime) -> Streak | None:
    """The no-build cycles in a row up to the last cycle before `until` (None when that cycle built something),
    reading backwards only until a built cycle ends the run."""
    def ended(entries: tuple[LogEntry, ...]) -> bool:
        return any(e.cycle is not None and e.when.moment < until and e.outcome != log.Outcome.NO_BUILD
                   for e in entries)

    cycles = [e for e in _back(text, ended)
              if e.cycle is not None and e.when.moment < until]
    runs = list(no_build_runs(cycles))
    return Streak.of(runs[-1]) if runs and runs[-1][-1] is cycles[-1] else None


def streaks_ending(text: TailSource | str, held: Sequence[LogEntry]) -> tuple[Streak, ...]:
    """Every run of at least STREAK_MIN no-build cycles in a row whose last cycle is one of `held` (a report's
    cycles): the streaks that ended in the report, or still ran at its end. A streak belongs to the report that
    holds its last cycle.

    Position alone decides, never a time: LOG is ordered by cycle number (rules 4), and a session from a slow
    clock dates its entry before cycles above it (GM310). A run is read up to the last held cycle, and LOG is read
    back until a built cycle numbered below the first held one ends every such run from below: a built entry
    merely dated before the day, sitting after the run, would cut it short, and a no-build one dated so would
    hide the run's end."""
    numbers = {entry.cycle for entry in held if entry.cycle is not None}
    if not numbers:
        return ()
    first, last = min(numbers), max(numbers)

    def reaches_back(entries: tuple[LogEntry, ...]) -> bool:
        return any(e.cycle is not None and e.cycle < first and e.outcome != log.Outcome.NO_BUILD for e in entries)

    cycles = [e for e in _back(text, reaches_back) if e.cycle is not None]
    ends = max((at for at, e in enumerate(cycles) if e.cycle == last), default=-1)
    return tuple(Streak.of(run) for run in no_build_runs(cycles[:ends + 1])
                 if len(run) >= STREAK_MIN and run[-1].cycle in numbers)


def close_entries(text: TailSource | str, count: int = 1) -> tuple[LogEntry, ...]:
    """The last `count` close entries of LOG (or fewer), reading back only as far as needed."""
    def enough(entries: tuple[LogEntry, ...]) -> bool:
        return sum(1 for e in entries if e.cycle is None) >= count

    found = [e for e in _back(text, enough) if e.cycle is None]
    return tuple(found[-count:])


def day_entries(text: TailSource | str, day: date, tz: tzinfo) -> tuple[tuple[LogEntry, ...], tuple[LogEntry, ...]]:
    """(the day's cycle entries, close entries written for that day) from the LOG text."""
    start, end = day_bounds(day, tz)
    entries = entries_since(text, start)
    cycles = tuple(e for e in entries if e.cycle is not None and start <= e.when.moment < end)
    # A close entry names its day; one without a Day field (hand-written) closes the day it was written on.
    closes = tuple(e for e in entries if e.cycle is None and (
        (e.get(DAY_FIELD) and closed_day(e) == day)
        or (not e.get(DAY_FIELD) and start <= e.when.moment < end)))
    return cycles, closes


def written_zone(entry: LogEntry, tz: tzinfo) -> tzinfo:
    """The zone whose day a close entry's Day names: the configured `tz`, unless the entry's stamp carries another
    offset than `tz` has at that moment (the human changed `timezone` since): then the offset it was written at.
    The day it closed ends when it ended for that close, so a zone change neither reports a cycle twice nor drops
    one."""
    moment = entry.when.moment
    if moment.tzinfo is None or moment.utcoffset() == moment.astimezone(tz).utcoffset():
        return tz
    return moment.tzinfo


def close_day(moment: datetime, tz: tzinfo, late_hours: int) -> date:
    """The day a close started at `moment` belongs to: the day it runs in, or the day before when it runs within
    `late_hours` of midnight. A scheduler runs the close late in the evening and may run it hours late (GitHub's
    came 10-12 h late): such a run is the late close of the day before, never an early close of the new day."""
    return (moment.astimezone(tz) - timedelta(hours=late_hours)).date()


def _walk(entries: Sequence[LogEntry], tz: tzinfo, *, whole: bool) -> tuple[list[LogEntry], list[LogEntry]]:
    """(the cycles no close reports, the cycles older than the first close) after LOG's entries `entries`, in order.

    The one rule of coverage: a close entry reports the cycles above it in LOG that ran before the end of the day
    it closes (up to its own minute, for a close run before the day ended: `reported_until`), that no close above it
    reported, and that it read: those it names as arrived while it ran (`log.arrived_cycles`) wait for the next
    close. A cycle run after a day's close (23:55, after the 23:47 close)
    waits for the next close (a second close of that day, or the next day's); so does one run after midnight before
    a late close of the day before (00:10, then that close at 00:31). The first close in LOG reports from the start
    of its day only: cycles before it, from before the memory had a close, wait for a close of their own day. Only
    a read of the `whole` LOG knows which close is the first.
    """
    pending: list[LogEntry] = []
    older: list[LogEntry] = []
    first = whole
    for entry in entries:
        if entry.cycle is not None:
            pending.append(entry)
            continue
        closed = closed_day(entry)
        start, end = (day_bounds(closed, written_zone(entry, tz)) if closed is not None
                      else (entry.when.moment, entry.when.moment))
        end = reported_until(end, entry.when.moment)
        unseen = log.arrived_cycles(entry)        # pushed while it ran: above it, and never read by it
        if first:
            older += [c for c in pending if c.when.moment < start]
            pending = [c for c in pending if c.when.moment >= start]
            first = False
        older = [c for c in older if not start <= c.when.moment < end or c.cycle in unseen]
        pending = [c for c in pending if c.when.moment >= end or c.cycle in unseen]
    return pending, older


def unreported_cycles(text: TailSource | str, until: datetime, tz: tzinfo, *,
                      day_start: datetime) -> tuple[LogEntry, ...]:
    """The cycle entries before `until` that no close has reported yet (`_walk`), oldest first: those run since the
    last close, and those older than the first close that ran on or after `day_start`. So each cycle is in exactly
    one report, whatever day a close closes and however late it runs.

    Reads back only until the entries above are all reported: an entry older than the end of a day closed below it,
    with a close written before `day_start` below it too (so no cycle older than the first close can matter).
    """
    def settled(entries: tuple[LogEntry, ...]) -> bool:
        covered: datetime | None = None       # the latest end of a day closed by a close entry read so far
        early = False                         # a close written before `day_start` was read
        unseen: set[int] = set()              # cycles a close read so far names as arrived while it ran
        for entry in reversed(entries):
            if early and covered is not None and entry.when.moment < covered and entry.cycle not in unseen:
                return True
            if entry.cycle is None:
                unseen |= log.arrived_cycles(entry)
                closed = closed_day(entry)
                end = reported_until(day_bounds(closed, written_zone(entry, tz))[1] if closed is not None
                                     else entry.when.moment, entry.when.moment)
                covered = max(covered, end) if covered is not None else end
                early = early or entry.when.moment < day_start
        return False

    if isinstance(text, LogHistory):
        entries, whole = text.live_tail(settled)              # each part as readers take it (amendments)
    else:
        read = log.tail_entries(log.TextSource(text) if isinstance(text, str) else text, settled)
        entries, whole = log.live(read.entries), read.whole   # an amended entry gives way to its amendment
    pending, older = _walk(entries, tz, whole=whole)
    if not any(e.cycle is None for e in entries):            # no close yet: the first one reports from its day
        older, pending = pending, []
    found = {id(e) for e in pending if e.when.moment < until}
    found |= {id(e) for e in older if day_start <= e.when.moment < until}
    return tuple(e for e in entries if id(e) in found)


def day_now_blocks(text: str, day: date, tz: tzinfo) -> tuple[NowBlock, ...]:
    """The day's cycle blocks of NOW (newest first), parsing only the top blocks down to the day's start."""
    start, end = day_bounds(day, tz)
    count = _FIRST_TAIL
    while True:
        doc = now.parse(text, max_blocks=count)
        if len(doc.blocks) + len(doc.problems) < count or (doc.blocks and doc.blocks[-1].when.moment < start):
            return tuple(b for b in doc.blocks if b.cycle is not None and start <= b.when.moment < end)
        count *= 4
