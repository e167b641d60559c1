"""GM3xx: LOG is append-only, in time order, with strictly increasing cycles, and every cycle says what it did."""
from __future__ import annotations

from dataclasses import replace

from gitmem import codes
from gitmem.checks import CheckInput
from gitmem.checks.common import common_prefix
from gitmem.checks.violation import Violation, from_problem
from gitmem.gitio.snapshots import Snapshot
from gitmem.memory import fences, log
from gitmem.memory.text import decode

# The fence state at the end of a LOG, remembered on the snapshot that holds it (`Snapshot.facts`).
FENCE_OPEN_AT_END = "fence-open-at-end"


def first_difference(old: bytes, new: bytes) -> int:
    """1-based line of the first byte where `new` stops being `old`."""
    return old.count(b"\n", 0, common_prefix(old, new)) + 1


def open_at(snapshot: Snapshot | None, path: str, data: bytes, end: int) -> bool:
    """Whether data[:end] (the old LOG) leaves a code fence open: remembered on `snapshot` when a check of it
    already knows, else one scan (`find` speed) of the old LOG."""
    known = snapshot.facts.get((FENCE_OPEN_AT_END, path)) if snapshot is not None else None
    if isinstance(known, bool):
        return known
    return fences.open_after(data, 0, end)


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
        text = decode(new).text
        doc = log.parse(text)
        inp.new.facts[(FENCE_OPEN_AT_END, path)] = fences.open_after(new)
        return ([from_problem(path, p) for p in doc.problems] + _entry_rules(path, doc.entries, None, None)
                + _unclosed(path, text, False, 1))
    assert inp.old is not None
    size = inp.old.prefix_length(path, new)
    if size is None:
        line = first_difference(inp.old.read(path) or b"", new)
        return [Violation.of(codes.LOG_NOT_APPEND_ONLY, path, line, "rewritten", line=line)]
    start = size
    if size and new[size - 1:size] != b"\n":     # the old LOG ends mid-line: the append must end that line first
        if not new[size:].strip(b"\n"):
            return []
        if new[size:size + 1] != b"\n":
            line = new.count(b"\n", 0, size) + 1
            return [Violation.of(codes.LOG_NOT_APPEND_ONLY, path, line, "appended_to_entry", line=line)]
        start = size + 1
    old_open = open_at(inp.old, path, new, start)
    inp.new.facts[(FENCE_OPEN_AT_END, path)] = fences.open_after(new, start, open_=old_open)
    appended = new[start:]
    if not appended.strip():
        return []
    # Parse the appended text on its own, numbered from 1, starting in the fence state the old LOG left; shift
    # to real line numbers only when reporting.
    text = decode(appended).text
    doc = log.parse(text, first_line=1, expect_title=False, in_fence=old_open)
    found = [from_problem(path, p) for p in doc.problems]
    before = log.tail_entries(log.BytesSource(new, start, open_at_end=old_open, numbered=False),
                              log.has_cycle).entries
    previous_cycle = max((e.cycle for e in before if e.cycle is not None), default=None)
    found += _entry_rules(path, doc.entries, before[-1] if before else None, previous_cycle)
    found += _unclosed(path, text, old_open, 1)
    stray = _stray_text(text, old_open)
    if not found and stray is None:
        return []
    shift = new.count(b"\n", 0, start)
    found = [replace(v, line=v.line + shift) for v in found]
    if stray is not None:
        line, variant = stray[0] + shift, stray[1]
        found.append(Violation.of(codes.LOG_NOT_APPEND_ONLY, path, line, variant, line=line))
    return found


def _stray_text(appended: str, old_open: bool) -> tuple[int, str] | None:
    """(line, variant) of the first appended line before the first new heading: it would change the entry above
    it, which is an edit.

    The one exception: when the old LOG ends inside a code fence (written before fences were checked), a
    line that closes it may come first, so that the new entry is a heading and not more of that code.
    """
    open_ = old_open
    for offset, line in enumerate(appended.split("\n")):
        if not open_ and line.startswith(log.HEADING):
            return None
        if open_ and fences.is_fence(line):     # open here only before any other line: it closes the old fence
            open_ = False
            continue
        if line.strip():
            return 1 + offset, "in_open_fence" if open_ else "appended_to_entry"
    return None


def _unclosed(path: str, text: str, old_open: bool, first_line: int) -> list[Violation]:
    """GM921 when the new text opens a code fence it never closes: every later heading would be code."""
    at = fences.unclosed(text, open_=old_open)
    if at is None:
        return []
    line = first_line + text.count("\n", 0, at)
    return [Violation.of(codes.UNCLOSED_FENCE, path, line)]


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
