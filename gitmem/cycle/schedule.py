"""How often an agent's cycles should run, from the `schedule:` of its GitHub workflows, and whether a cycle
that starts now started late.

A cron line's interval is the longest gap between two of its firings over a year (GitHub's cron is in UTC,
with the five standard fields; `*/3`, ranges, lists and names are read). An agent's interval is its most
frequent schedule's: the template's workflow runs cycles every 3 hours and the close once a day, and the
cycles are what a stall is judged by (gitmem fleet) and what a late start is judged by (the cycle itself: see
`lateness`). The workflow files are the agent's, so they are read as untrusted
text: a bounded number of bounded files, never through a link, and only `cron:` lines are looked at.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from functools import lru_cache
from pathlib import Path

from gitmem.confined import files

WORKFLOWS = ".github/workflows"
MAX_FILES = 50
MAX_FILE_BYTES = 512 * 1024
MAX_CRONS = 16                 # a real workflow has a few; each line costs a scan of a year (up to 0.3 s)
PER_FILE = 4
CRON_LINE = re.compile(r"""^\s*(?:-\s*)?cron:\s*["']?([^"'#\n]{1,200}?)["']?\s*(?:#.*)?$""", re.M)
SCAN_DAYS = 366
FIELDS = ((0, 59), (0, 23), (1, 31), (1, 12), (0, 6))
NAMES = {"jan": 1, "feb": 2, "mar": 3, "apr": 4, "may": 5, "jun": 6, "jul": 7, "aug": 8, "sep": 9, "oct": 10,
         "nov": 11, "dec": 12, "sun": 0, "mon": 1, "tue": 2, "wed": 3, "thu": 4, "fri": 5, "sat": 6}
START = datetime(2027, 1, 1, tzinfo=UTC)      # a year without a 29 February: no yearly gaps
MOST_FIRINGS = 10_000     # firings counted since the last cycle: past it, a note says "at least"
LATE_AFTER = 30 * 60       # GitHub's scheduled runs often start some minutes after their time: that is on time


def workflow_crons(root: Path) -> list[str]:
    """The `cron:` values in the repository's workflow files (none when it has no readable workflows): the
    template's own `gitmem.yml` first, at most PER_FILE distinct lines of a file and MAX_CRONS in all, so that
    what the agent writes into its workflows bounds the time spent judging them."""
    found: list[str] = []
    try:
        entries = [rel for rel, is_dir in files.walk(root, WORKFLOWS, recursive=False)
                   if not is_dir and rel.endswith((".yml", ".yaml"))]
    except (OSError, files.FileRefused):
        return []
    entries.sort(key=lambda rel: (Path(rel).stem != "gitmem", rel))
    for rel in entries[:MAX_FILES]:
        try:
            if (files.file_size(root, rel) or 0) > MAX_FILE_BYTES:
                continue
            text = (files.read_bytes(root, rel) or b"").decode("utf-8", "replace")
        except (OSError, files.FileRefused):
            continue
        lines = dict.fromkeys(match.group(1).strip() for match in CRON_LINE.finditer(text))
        found += [line for line in list(lines)[:PER_FILE] if line not in found]
        if len(found) >= MAX_CRONS:
            break
    return found[:MAX_CRONS]


def interval_seconds(crons: list[str]) -> int | None:
    """The interval of the most frequent schedule among `crons`; None when none of them can be read."""
    known = [seconds for line in crons if (seconds := cron_interval(line)) is not None]
    return min(known) if known else None


@dataclass(frozen=True)
class CronTimes:
    """A five-field cron line read into the values each field allows."""

    minutes: tuple[int, ...]
    hours: tuple[int, ...]
    days: frozenset[int]
    months: frozenset[int]
    weekdays: frozenset[int]
    either: bool            # both day fields restricted: standard cron fires on a day matching either

    def fires_on(self, day: date) -> bool:
        weekday = (day.weekday() + 1) % 7
        in_days, in_week = day.day in self.days, weekday in self.weekdays
        return day.month in self.months and ((in_days or in_week) if self.either else (in_days and in_week))


@lru_cache(maxsize=256)
def cron_times(line: str) -> CronTimes | None:
    """The line's fields; None when it is not a five-field cron line gitmem reads."""
    parts = line.split()
    if len(parts) != 5:
        return None
    sets = [_field(part, low, high) for part, (low, high) in zip(parts, FIELDS, strict=True)]
    minutes, hours, days, months, weekdays = sets
    if minutes is None or hours is None or days is None or months is None or weekdays is None:
        return None
    return CronTimes(tuple(sorted(minutes)), tuple(sorted(hours)), frozenset(days), frozenset(months),
                     frozenset(7 % 7 if d == 7 else d for d in weekdays), parts[2] != "*" and parts[4] != "*")


@lru_cache(maxsize=256)
def cron_interval(line: str) -> int | None:
    """The longest gap in seconds between two firings of a five-field cron line; None when it is not one, or
    fires less than twice in a year."""
    times = cron_times(line)
    if times is None:
        return None
    fired: list[int] = []
    for offset in range(0, SCAN_DAYS * 24 * 60, 24 * 60):
        if times.fires_on((START + timedelta(minutes=offset)).date()):
            fired += [offset + hour * 60 + minute for hour in times.hours for minute in times.minutes]
    if len(fired) < 2:
        return None
    return max(b - a for a, b in zip(fired, fired[1:], strict=False)) * 60


def firings(line: str, after: datetime, until: datetime, *, most: int = MOST_FIRINGS) -> list[datetime]:
    """When the cron line fires (in UTC, as GitHub reads it) after `after` and up to `until`, at most `most`
    of them and over at most SCAN_DAYS days: a cycle a year late is told so without scanning the year."""
    times = cron_times(line)
    if times is None or until <= after:
        return []
    start, end = after.astimezone(UTC), until.astimezone(UTC)
    found: list[datetime] = []
    day = start.date()
    for _ in range(min((end.date() - day).days + 1, SCAN_DAYS)):
        if times.fires_on(day):
            for hour in times.hours:
                for minute in times.minutes:
                    moment = datetime.combine(day, time(hour, minute), UTC)
                    if start < moment <= end:
                        found.append(moment)
                        if len(found) >= most:
                            return found
        day += timedelta(days=1)
    return found


@dataclass(frozen=True)
class Lateness:
    """A cycle that started after its schedule's time: the cron line, when the schedule wanted the cycle after
    the last one, and how many of its firings passed without a cycle."""

    cron: str
    due: datetime
    now: datetime
    missed: int

    def note(self) -> str:
        late = _duration((self.now - self.due).total_seconds())
        count = f"at least {self.missed}" if self.missed >= MOST_FIRINGS - 1 else str(self.missed)
        missed = f"; {count} scheduled run(s) passed without a cycle" if self.missed else ""
        return (f"started late: the schedule `{self.cron}` (UTC) wanted a cycle at {self.due:%Y-%m-%d %H:%M} UTC, "
                f"after the last one; it started {late} later, at {self.now.astimezone(UTC):%Y-%m-%d %H:%M} UTC "
                f"by the clock{missed} (GitHub runs schedules best-effort: late, dropped, or disabled after 60 "
                "days without activity)")


def lateness(crons: list[str], last: datetime, now: datetime) -> Lateness | None:
    """Whether a cycle starting `now` (the real clock) is late after a last cycle at `last`, by the most
    frequent of `crons` (the cycles' schedule): late when the first firing after `last` is more than
    LATE_AFTER (or one interval, when shorter) before `now`. None when on time, or when no line is read."""
    known = [(seconds, line) for line in crons if (seconds := cron_interval(line)) is not None]
    if not known:
        return None
    interval, line = min(known)
    passed = firings(line, last, now)
    if not passed:
        return None
    if (now - passed[0]).total_seconds() <= min(LATE_AFTER, interval):
        return None
    return Lateness(line, passed[0], now, len(passed) - 1)


def _duration(seconds: float) -> str:
    minutes = int(seconds // 60)
    days, rest = divmod(minutes, 24 * 60)
    hours, minutes = divmod(rest, 60)
    return " ".join(part for part in (f"{days} d" if days else "", f"{hours} h" if hours else "",
                                      f"{minutes} min" if minutes or not (days or hours) else "") if part)


def _field(text: str, low: int, high: int) -> set[int] | None:
    found: set[int] = set()
    for item in text.lower().split(","):
        base, _, step_text = item.partition("/")
        step = int(step_text) if _digits(step_text) and 0 < int(step_text) <= high else None
        if step_text and step is None:
            return None
        if base == "*":
            start, end = low, high
        else:
            first, _, last = base.partition("-")
            start_value, end_value = _value(first), _value(last) if last else None
            if start_value is None or (last and end_value is None):
                return None
            start = start_value
            end = end_value if end_value is not None else (high if step else start_value)
        if not (low <= start <= high + (1 if high == 6 else 0) and start <= end <= high + (1 if high == 6 else 0)):
            return None
        found.update(range(start, end + 1, step or 1))
    return found


def _digits(text: str) -> bool:
    """ASCII digits only: `isdigit()` and int() also take `١` for 1, which cron does not."""
    return text.isascii() and text.isdigit()


def _value(text: str) -> int | None:
    if _digits(text) and len(text) <= 2:
        return int(text)
    return NAMES.get(text)
