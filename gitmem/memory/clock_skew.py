"""How far apart two honest clocks may be: the one allowance every rule about written times uses.

A time in memory was written by some machine's clock. Clocks kept by NTP agree within seconds, and an entry may
be written on one machine and committed on another a little behind; a clock that runs fast, or a local time
labelled UTC, is off by whole hours (no zone but UTC itself is less than an hour from UTC), so it is never
inside the allowance. The rules that use it: an answer dated after it was written down (GM211), an entry dated
ahead of the clock that judges it (GM309), and an entry earlier than the one it follows (GM310).
"""
from __future__ import annotations

from datetime import datetime, timedelta

CLOCK_SKEW = timedelta(minutes=10)


def beyond(later: datetime, earlier: datetime) -> timedelta | None:
    """How far `later` is after `earlier`, when that is more than CLOCK_SKEW; else None."""
    gap = later - earlier
    return gap if gap > CLOCK_SKEW else None


def spoken(gap: timedelta) -> str:
    """A gap as people read it: `12 min`, `3h 05min`, `27d 4h`."""
    minutes = int(gap.total_seconds() // 60)
    if minutes >= 24 * 60:
        return f"{minutes // (24 * 60)}d {minutes // 60 % 24}h"
    return f"{minutes // 60}h {minutes % 60:02d}min" if minutes >= 60 else f"{minutes} min"
