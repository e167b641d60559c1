"""LOG read for a report: one linear pass over the entry headings, or only the tail when a window starts late.

A full `gitmem.memory.log.parse` costs about 1 s per MB (75 s for the 75 MB LOG of a 100x history). A report
needs only each entry's heading and a few Evidence lines, so this finds the headings with one regex over the
text (`gitmem.memory.log.heading_re`) and looks inside an entry only with substring tests and the
anchored regexes of `gitmem.report.evidence`. Only the newest close entry is parsed whole, for its report.
With a start moment the file is read from its end in growing blocks and stops once it holds an entry from
before that moment (LOG is in time order, GM302), so the job summary's 14 days cost the same at any size.
A heading inside a fenced code block would count too; LOG bodies hold none.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from gitmem import codes
from gitmem.checks.violation import Violation
from gitmem.confined import files
from gitmem.memory import fences, log
from gitmem.memory.decoding import undecodable
from gitmem.memory.timestamps import parse_timestamp
from gitmem.report import evidence
from gitmem.report.model import CloseRow, CycleRow
from gitmem.workspace.head_and_tail import FileSource

_DAY_RE = re.compile(r"^- Day: *([0-9]{4}-[0-9]{2}-[0-9]{2})[ \t]*$", re.M)
_PROMOTED_RE = re.compile(r"^(?:- Promotions: |  )(R-[0-9]{2,}) · .*\(from L-[0-9]{4,}\)", re.M)
FIRST_BLOCK = 256 * 1024


@dataclass(frozen=True)
class LogText:
    """LOG's text as a report reads it, and each line of it that was not UTF-8 (GM902), shown with U+FFFD."""
    text: str
    undecodable: tuple[Violation, ...] = ()


@dataclass(frozen=True)
class Scanned:
    cycles: tuple[CycleRow, ...]
    closes: tuple[CloseRow, ...]
    latest_close: CloseRow | None


def read_log(root: Path, rel: str, start: datetime | None, *, block: int = FIRST_BLOCK) -> LogText:
    """LOG's text: whole, or from the last entry before `start` to the end. Undecodable bytes are replaced, so
    a damaged file still reports what it can, and the lines that held them are named (`gitmem check` judges)."""
    handle = files.open_read(root, rel)
    if handle is None:
        return LogText("")
    with handle:
        size = handle.seek(0, os.SEEK_END)
        source = FileSource(root, rel, None)
        while True:
            offset = 0 if start is None else max(0, size - block)
            handle.seek(offset)
            data = handle.read()
            if start is None or offset == 0:
                return _decoded(rel, data, 0, source)
            # The first heading outside fenced code in this block (`gitmem.memory.fences`).
            skip = data.find(b"\n") + 1
            cut = fences.first_heading(data, b"## ", skip, open_=source.fence_open_at(offset + skip)) if skip else None
            if cut is not None:
                read = _decoded(rel, data[cut:], offset + cut, source)
                found = log.heading_re().search(read.text)
                if found is not None and _before(found, start):
                    return read
            block *= 4


def _decoded(rel: str, data: bytes, at: int, source: FileSource) -> LogText:
    """`data`, which starts at byte `at` of LOG, as text, with GM902 at each line that is not UTF-8."""
    try:
        return LogText(data.decode("utf-8").replace("\r\n", "\n"))
    except UnicodeDecodeError:
        found = tuple(Violation.of(codes.NOT_UTF8, rel, source.line_at(at + bad), byte=at + bad, reason=why)
                      for bad, why in undecodable(data))
        return LogText(data.decode("utf-8", "replace").replace("\r\n", "\n"), found)


def _before(match: re.Match[str], start: datetime) -> bool:
    stamp = parse_timestamp(match["when"])
    return stamp is not None and stamp.moment < start


def scan_log(text: str, start: datetime | None = None, end: datetime | None = None) -> Scanned:
    """The cycles and closes whose heading time is in [start, end), oldest first."""
    cycles: list[CycleRow] = []
    closes: list[CloseRow] = []
    last_close: tuple[datetime, str] | None = None
    fenced = fences.Fenced(text)
    matches = (match for match in log.heading_re().finditer(text) if not fenced.inside(match.start()))
    current = next(matches, None)
    while current is not None:
        following = next(matches, None)
        stop = following.start() if following is not None else len(text)
        stamp = parse_timestamp(current["when"])
        if stamp is None:                 # a date that does not exist: `gitmem check` reports it (GM302)
            current = following
            continue
        when = stamp.moment
        if (start is None or when >= start) and (end is None or when < end):
            # An entry ends at the next `## ` line outside fenced code, matched or not, so a malformed heading
            # adds nothing to it.
            cut = fences.first_heading(text, "## ", current.end() + 1, stop)
            body = text[current.end(): cut if cut is not None else stop]
            if current["cycle"] is None:
                day = _DAY_RE.search(body)
                closes.append(CloseRow(when, day.group(1) if day else when.date().isoformat(), (), _promoted(body)))
                last_close = (when, text[current.start(): current.end()] + body)
            else:
                cycles.append(_cycle(int(current["cycle"]), when, current["outcome"], body))
        current = following
    latest = None
    if last_close is not None:
        entry = log.parse(last_close[1], expect_title=False).entries
        fields = tuple((f.key, f.value) for f in entry[0].fields) if entry else ()
        latest = CloseRow(last_close[0], closes[-1].day, fields, closes[-1].promoted)
    return Scanned(tuple(cycles), tuple(closes), latest)


def _promoted(body: str) -> tuple[str, ...]:
    """The rules a close entry's Promotions field names as promoted (`R-04 · text (from L-0001)` lines)."""
    start = body.find("\n- Promotions:")
    if start < 0:
        return ()
    end = body.find("\n- ", start + 1)
    return tuple(_PROMOTED_RE.findall(body, start + 1, end if end >= 0 else len(body)))


def _cycle(number: int, when: datetime, outcome: str, body: str) -> CycleRow:
    facts = evidence.read_evidence(body) if evidence.may_say_something(body) else evidence.NOTHING
    usage, context = facts.usage, facts.context
    salvage = evidence.salvage_branches(body)
    return CycleRow(number, when, outcome,
                    tokens=usage.total if usage else None, cost=facts.cost,
                    cache_rate=usage.cache_rate if usage else None,
                    context=context.tokens if context else None, budget=context.limit if context else None,
                    reverts=facts.reverts, salvage=salvage)
