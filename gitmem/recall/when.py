"""The time a question names ("before April 10", "in May 2023", "last week", "3 weeks ago"), as dates.

Resolved against today (the real clock, in the configured zone: search.run asks it), never against a date a
model or an agent wrote. A date without a year is the latest such day not after today. Only the phrases
below are read; anything else names no time, and a question that names none is searched over all time.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, timedelta

MONTHS = {name: number for number, names in enumerate((
    ("january", "jan"), ("february", "feb"), ("march", "mar"), ("april", "apr"), ("may",), ("june", "jun"),
    ("july", "jul"), ("august", "aug"), ("september", "sep", "sept"), ("october", "oct"),
    ("november", "nov"), ("december", "dec")), start=1) for name in names}
_MONTH = "(?P<month>" + "|".join(sorted(MONTHS, key=len, reverse=True)) + r")\.?"
_DAY = r"(?P<day>[0-9]{1,2})(?:st|nd|rd|th)?"
_YEAR = r"(?P<year>(?:19|20)[0-9]{2})"
_DATES = tuple(re.compile(pattern + r"\b", re.I) for pattern in (
    r"(?P<iyear>(?:19|20)[0-9]{2})-(?P<imonth>[0-9]{2})-(?P<iday>[0-9]{2})",
    rf"{_MONTH}\s+{_DAY}(?:,?\s+{_YEAR})?",
    rf"{_DAY}\s+(?:of\s+)?{_MONTH}(?:,?\s+{_YEAR})?",
    rf"{_MONTH}(?:\s+of)?(?:\s+{_YEAR})?",
))
_BOUND = re.compile(r"\b(?P<word>before|until|till|after|since|on|in|during)\s+(?:the\s+)?", re.I)
_AGO = re.compile(r"\b(?P<count>[0-9]+|a|an|one|two|three|four|five|six)\s+(?P<unit>day|week|month|year)s?\s+ago\b",
                  re.I)
_LAST = re.compile(r"\b(?P<word>yesterday|last\s+(?P<unit>week|month|year))\b", re.I)
# What happened on a day is told on it or in the days after: "on June 26" holds entries written that week.
TOLD_WITHIN = timedelta(days=7)
_COUNTS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6}
_UNIT_DAYS = {"day": 1, "week": 7, "month": 30, "year": 365}


@dataclass(frozen=True)
class TimeSpan:
    """The days a question names: from `since` to `until`, both included; None is open."""

    since: date | None
    until: date | None


def named_span(text: str, today: date) -> TimeSpan | None:
    """The span of time `text` names, or None when it names none (the first phrase found counts)."""
    for bound in _BOUND.finditer(text):
        named = next((match for pattern in _DATES if (match := pattern.match(text, bound.end()))), None)
        if named is None:
            continue
        first, last = _days(named, today)
        if first is not None and last is not None:
            word = bound.group("word").lower()
            if word in ("before", "until", "till"):
                return TimeSpan(None, first - timedelta(days=1) if word == "before" else last)
            if word in ("after", "since"):
                return TimeSpan(last + timedelta(days=1) if word == "after" else first, None)
            return TimeSpan(first, last + TOLD_WITHIN)
    found = _AGO.search(text)
    if found:
        count = found.group("count").lower()
        days = (_COUNTS.get(count) or int(count)) * _UNIT_DAYS[found.group("unit").lower()]
        middle = today - timedelta(days=days)
        slack = timedelta(days=max(1, days // 4))            # "3 weeks ago" is roughly then, not to the day
        return TimeSpan(middle - slack, middle + slack)
    found = _LAST.search(text)
    if found:
        if found.group("word").lower() == "yesterday":
            return TimeSpan(today - timedelta(days=1), today - timedelta(days=1))
        days = _UNIT_DAYS[found.group("unit").lower()]
        return TimeSpan(today - timedelta(days=2 * days), today)
    return None


def _days(found: re.Match[str], today: date) -> tuple[date | None, date | None]:
    """The first and last day of the date a match names."""
    parts = {key: value for key, value in found.groupdict().items() if value}
    try:
        if "iyear" in parts:
            day = date(int(parts["iyear"]), int(parts["imonth"]), int(parts["iday"]))
            return day, day
        month = MONTHS[parts["month"].lower()]
        year = int(parts["year"]) if "year" in parts else None
        if "day" in parts:
            day = date(year or today.year, month, int(parts["day"]))
            if year is None and day > today:
                day = day.replace(year=today.year - 1)
            return day, day
        year = year or (today.year if month <= today.month else today.year - 1)
        first = date(year, month, 1)
        last = (date(year + month // 12, month % 12 + 1, 1)) - timedelta(days=1)
        return first, last
    except ValueError:              # "February 30": names no day
        return None, None
