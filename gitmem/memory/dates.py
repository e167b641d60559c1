"""Dates and times a person gives (a command-line option, a recall bound): one parser, one wording of its
refusal. Memory files carry their own stricter timestamps (gitmem.memory.timestamps.parse_timestamp)."""
from __future__ import annotations

from datetime import date, datetime

from gitmem.errors import GitmemError

DAY = "YYYY-MM-DD date"
DAY_OR_TIME = "YYYY-MM-DD date or YYYY-MM-DD HH:MM time"


class NotADate(GitmemError):
    """A date or time that cannot be read, or a day outside the range the caller can use; the message says
    what is wanted. A usage error (exit 2), like any bad argument."""


def parse_day(text: str, earliest: date = date.min, latest: date = date.max) -> date:
    """A day, `YYYY-MM-DD` (or another ISO 8601 day such as `20261130`), from `earliest` to `latest`."""
    try:
        day = date.fromisoformat(text.strip())
    except ValueError:
        raise NotADate(f"{text!r} is not a {DAY}") from None
    if not earliest <= day <= latest:
        raise NotADate(f"{text!r} is out of range: give a day from {earliest} to {latest}")
    return day


def parse_day_or_time(text: str) -> date | datetime:
    """A day (`YYYY-MM-DD`) or a moment (`YYYY-MM-DD HH:MM`, a `T` for the space, optionally seconds and an
    offset). A moment without an offset is naive: the caller places it in its own zone. A trailing `Z` or
    ` UTC` is dropped, as recall always did, so such a moment is naive too."""
    cleaned = text.strip().replace("T", " ").removesuffix(" UTC").removesuffix("Z")
    try:
        return datetime.fromisoformat(cleaned) if len(cleaned) > 10 else date.fromisoformat(cleaned)
    except ValueError:
        raise NotADate(f"{text!r} is not a {DAY_OR_TIME}") from None

