"""The rules each LOG entry answers to by itself and against the entry before it (time, cycle order, Task and
Result, a no-build's reason): the same rules judge an entry when it is appended (gitmem.checks.log_checks) and
when an amendment names it as invalid (gitmem.checks.amendments), so they live below both."""
from __future__ import annotations

from gitmem import codes
from gitmem.checks import written_times
from gitmem.checks.inputs import CheckInput
from gitmem.checks.violation import Violation
from gitmem.memory import log


def rules_below(inp: CheckInput | None, path: str, entries: tuple[log.LogEntry, ...],
                above: log.TailSource) -> list[Violation]:
    """`entry_rules` for `entries` written where the LOG text `above` ends: judged against the live entries
    there as readers take them, the last of them and the last cycle among them."""
    before = log.live_tail(above, block=log.LAST_ENTRY_BLOCK)
    previous_cycle = max((e.cycle for e in before if e.cycle is not None), default=None)
    return entry_rules(inp, path, entries, before[-1] if before else None, previous_cycle)


def entry_rules(inp: CheckInput | None, path: str, entries: tuple[log.LogEntry, ...],
                previous: log.LogEntry | None, previous_cycle: int | None) -> list[Violation]:
    """The rules each entry answers to. `inp` is None where memory is judged as it stands, with no change and no
    clock (gitmem.checks.amendments): there times decide nothing, as order is position (rules 4)."""
    found: list[Violation] = []
    last = previous
    last_cycle = previous_cycle
    for entry in entries:
        found += _times(inp, path, entry, last)
        last = entry
        if entry.cycle is None:
            continue
        if last_cycle is not None and entry.cycle <= last_cycle:
            found.append(Violation.of(codes.LOG_CYCLE_NOT_INCREASING, path, entry.line, cycle=entry.cycle,
                                      last=last_cycle, next=last_cycle + 1))
        last_cycle = entry.cycle
        has_result = bool(log.outcome_reason(entry))
        if entry.outcome == log.Outcome.NO_BUILD and not has_result:
            found.append(Violation.of(codes.LOG_NO_BUILD_WITHOUT_REASON, path, entry.line))
            continue
        missing = [key for key in ("Task", "Result") if not (entry.get(key) or "").strip()]
        if missing:
            found.append(Violation.of(codes.LOG_CYCLE_INCOMPLETE, path, entry.line, cycle=entry.cycle,
                                      missing=" or ".join(missing)))
    return found


def _what(entry: log.LogEntry) -> str:
    return "the close entry" if entry.cycle is None else f"the entry of cycle {entry.cycle}"


def _times(inp: CheckInput | None, path: str, entry: log.LogEntry, last: log.LogEntry | None) -> list[Violation]:
    """The rules on a new entry's time (gitmem.checks.written_times): ahead of the clock, earlier than the entry
    before it; under rules before 4, earlier at all is an error (GM302)."""
    if inp is None:
        return []
    ahead = written_times.dated_ahead_violation(inp, path, entry.line, _what(entry), entry.when, entry.heading())
    found = [ahead] if ahead else []
    if last is None:
        return found
    if not written_times.by_position(inp):
        if entry.when.moment < last.when.moment:
            found.append(Violation.of(codes.LOG_TIME_BACKWARDS, path, entry.line, when=entry.when, before=last.when))
        return found
    skew = written_times.skewed(path, entry.line, _what(entry), entry.when, _what(last).removeprefix("the "),
                                last.when)
    return [*found, *([skew] if skew else [])]
