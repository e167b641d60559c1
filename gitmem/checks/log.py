"""GM3xx: LOG is append-only, in time order, with strictly increasing cycles, and every cycle says what it did."""
from __future__ import annotations

from dataclasses import replace

from gitmem import codes
from gitmem.checks import CheckInput
from gitmem.checks.violation import Violation, from_problem
from gitmem.memory import log
from gitmem.memory.text import decode


def first_difference(old: bytes, new: bytes) -> int:
    """1-based line of the first byte where `new` stops being `old` (binary search over memcmp)."""
    low, high = 0, min(len(old), len(new))
    while low < high:
        mid = (low + high + 1) // 2
        if old[:mid] == new[:mid]:
            low = mid
        else:
            high = mid - 1
    return old.count(b"\n", 0, low) + 1


def _previous_entry(data: bytes, end: int) -> log.LogEntry | None:
    """The last entry of the old LOG, data[:end], read from its tail only."""
    start = data.rfind(b"\n## ", 0, end) + 1
    doc = log.parse(decode(data[start:end]).text, expect_title=False)
    return doc.entries[-1] if doc.entries else None


def _previous_cycle(data: bytes, end: int) -> int | None:
    """The last cycle number in data[:end], reading growing tails: the cost follows the tail, not the history."""
    size = 1 << 16
    while True:
        start = max(0, end - size)
        if start:
            start = data.find(b"\n## ", start, end) + 1 or end
        chunk = data[start:end]
        cycles = [e.cycle for e in log.parse(chunk.decode("utf-8", "replace"), expect_title=False).entries
                  if e.cycle is not None]
        if cycles or start == 0:
            return max(cycles, default=None)
        size *= 8


def check(inp: CheckInput, skip: set[str]) -> list[Violation]:
    path = inp.config.path("log")
    if path in skip:
        return []
    had_log = inp.old is not None and (inp.old.oid(path) is not None or inp.old.exists(path))
    new = inp.new.read(path)
    if had_log and new is None:
        return [Violation.of(codes.LOG_NOT_APPEND_ONLY, path, 1, "deleted", path=path)]
    if new is None or path in skip:
        return []
    if not had_log:
        doc = log.parse(decode(new).text)
        return [from_problem(path, p) for p in doc.problems] + _entry_rules(path, doc.entries, None, None)
    assert inp.old is not None
    size = inp.old.prefix_length(path, new)
    if size is None:
        line = first_difference(inp.old.read(path) or b"", new)
        return [Violation.of(codes.LOG_NOT_APPEND_ONLY, path, line, "rewritten", line=line)]
    appended = new[size:]
    if not appended.strip():
        return []
    # Parse the appended text on its own, numbered from 1; shift to real line numbers only when reporting.
    text = decode(appended).text
    doc = log.parse(text, first_line=1, expect_title=False)
    found = [from_problem(path, p) for p in doc.problems] + _stray_text(path, text, 1)
    found += _entry_rules(path, doc.entries, _previous_entry(new, size), _previous_cycle(new, size))
    if not found:
        return []
    shift = new.count(b"\n", 0, size)
    return [replace(v, line=v.line + shift) for v in found]


def _stray_text(path: str, appended: str, first_line: int) -> list[Violation]:
    """Appended lines before the first new heading would change the entry above them: that is an edit."""
    for offset, line in enumerate(appended.split("\n")):
        if line.startswith("## "):
            return []
        if line.strip():
            number = first_line + offset
            return [Violation.of(codes.LOG_NOT_APPEND_ONLY, path, number, "appended_to_entry", line=number)]
    return []


def _entry_rules(path: str, entries: tuple[log.LogEntry, ...], previous: log.LogEntry | None,
                 previous_cycle: int | None) -> list[Violation]:
    found: list[Violation] = []
    last_time = previous.when if previous else None
    last_cycle = previous_cycle
    for entry in entries:
        if last_time is not None and entry.when.moment < last_time.moment:
            found.append(Violation.of(codes.LOG_TIME_BACKWARDS, path, entry.line, when=entry.when, before=last_time))
        last_time = entry.when
        if entry.cycle is None:
            continue
        if last_cycle is not None and entry.cycle <= last_cycle:
            found.append(Violation.of(codes.LOG_CYCLE_NOT_INCREASING, path, entry.line, cycle=entry.cycle,
                                      last=last_cycle, next=last_cycle + 1))
        last_cycle = entry.cycle
        has_result = bool(log.outcome_reason(entry))
        if entry.outcome == "no-build" and not has_result:
            found.append(Violation.of(codes.LOG_NO_BUILD_WITHOUT_REASON, path, entry.line))
            continue
        missing = [key for key in ("Task", "Result") if not (entry.get(key) or "").strip()]
        if missing:
            found.append(Violation.of(codes.LOG_CYCLE_INCOMPLETE, path, entry.line, cycle=entry.cycle,
                                      missing=" or ".join(missing)))
    return found
