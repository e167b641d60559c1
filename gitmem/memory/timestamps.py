"""The `YYYY-MM-DD HH:MM TZ` moments memory files are written with: read, rendered, and their zones."""
from __future__ import annotations

import re
from datetime import UTC, date, datetime, timedelta, timezone, tzinfo
from functools import lru_cache

from gitmem.records import built_whole, record

_TS_RE = re.compile(r"^([0-9]{4})-([0-9]{2})-([0-9]{2}) ([0-9]{2}):([0-9]{2}) (UTC|[+-][0-9]{2}:[0-9]{2})$")


@record(frozen=True, order=True)
class Timestamp:
    """A `YYYY-MM-DD HH:MM TZ` moment. `label` keeps the written zone (`UTC` or `+HH:MM`)."""

    moment: datetime
    label: str

    def __str__(self) -> str:
        return f"{self.moment:%Y-%m-%d %H:%M} {self.label}"

    @property
    def day(self) -> date:
        return self.moment.date()

    @classmethod
    def from_datetime(cls, moment: datetime) -> Timestamp:
        """Render an aware datetime in its own zone, truncated to the minute."""
        offset = moment.utcoffset()
        if offset is None:
            raise ValueError("timestamps need a time zone")
        moment = moment.replace(second=0, microsecond=0)
        label = "UTC" if _is_utc(moment.tzinfo, offset) else _offset_label(offset)
        return cls(moment, label)


def _is_utc(tz: tzinfo | None, offset: timedelta) -> bool:
    name = getattr(tz, "key", None) or (tz.tzname(None) if tz is not None else None)
    return offset == timedelta(0) and name in ("UTC", "Etc/UTC", "Z", "UTC+00:00", None) or tz is UTC


def _offset_label(offset: timedelta) -> str:
    minutes = int(offset.total_seconds()) // 60
    sign = "+" if minutes >= 0 else "-"
    minutes = abs(minutes)
    return f"{sign}{minutes // 60:02d}:{minutes % 60:02d}"


def parse_timestamp(text: str) -> Timestamp | None:
    match = _TS_RE.match(text.strip())
    if not match:
        return None
    year, month, day, hour, minute, label = match.groups()
    tz = _zone(label)
    if tz is None:
        return None
    try:
        moment = datetime(int(year), int(month), int(day), int(hour), int(minute), tzinfo=tz)
    except ValueError:
        return None
    # Built whole: every LOG heading, NOW block and Asked or Answered line is one (4,000 answers a close at 100x).
    return built_whole(Timestamp, {"moment": moment, "label": label})


@lru_cache(maxsize=64)
def _zone(label: str) -> tzinfo | None:
    """`UTC` or `+HH:MM` as a zone, None for an offset out of range. Cached: a history repeats a few labels,
    and the report reads one per LOG entry (gitmem.report.log_scan)."""
    if label == "UTC":
        return UTC
    sign = 1 if label[0] == "+" else -1
    hours, mins = int(label[1:3]), int(label[4:6])
    if hours > 23 or mins > 59:
        return None
    return timezone(sign * timedelta(hours=hours, minutes=mins))
