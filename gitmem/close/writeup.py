"""One day's write-up for the close: the day's facts as of its end, Rule 0 streaks with their lessons, standing
conditions (reported when they start, then weekly), the promotion lines, and tomorrow's plan."""
from __future__ import annotations

from dataclasses import replace
from datetime import date, datetime, timedelta

from gitmem.close import day_report
from gitmem.close.day import (
    Streak,
    day_bounds,
    day_entries,
    day_now_blocks,
    no_build_streak,
    reported_until,
    streaks_ending,
    unreported_cycles,
)
from gitmem.close.promotion import PromotionResult
from gitmem.config import Config
from gitmem.memory import decisions, lessons, log
from gitmem.memory.fields import field_value
from gitmem.memory.lines import shortened
from gitmem.memory.log import TailSource
from gitmem.memory_writer import MemoryWriter
from gitmem.workspace import log_history

MIN_QUOTED = 60       # the least of an error a Problems line quotes, however small the entry's share


class Week:
    """What the days one close writes up share, computed once for all of them: a close catching up a week asks
    the same questions of DECISIONS and LOG for each day, and at 100x DECISIONS holds 4,000 decisions and a
    decision waiting a month has a month of LOG read back to its ask. The days are asked about oldest first."""

    def __init__(self, moment: datetime) -> None:
        self.moment = moment
        # (the document, the moment from which on it was narrowed, its decisions that can wait then or later)
        self._narrowed: tuple[decisions.DecisionsDoc, datetime, decisions.DecisionsDoc] | None = None
        self._tails: dict[datetime, list[log.LogEntry]] = {}

    def waiting(self, doc: decisions.DecisionsDoc, as_of: datetime) -> tuple[decisions.Waiting, ...]:
        """`decisions.waiting(doc, as_of, as_of=True, now=moment)`, judged among the decisions that can wait at
        or after the first day's end only: one answered by then waits on no later day either."""
        known = self._narrowed
        if known is None or known[0] is not doc or as_of < known[1]:
            now = self.moment
            # Most were answered long before: told so from their Answered line's day, at C speed.
            still = [item for item in decisions.not_settled_before(doc.all, as_of)
                     if not item.is_answered or ((done := decisions.answered_at(item, now)) is not None
                                                 and done > as_of)]
            kept = {id(item) for item in still}
            narrowed = replace(doc, pending=tuple(d for d in doc.pending if id(d) in kept),
                               resolved=tuple(d for d in doc.resolved if id(d) in kept))
            known = self._narrowed = (doc, as_of, narrowed)
        return decisions.waiting(known[2], as_of, as_of=True, now=self.moment)

    def entries_since(self, log_text: TailSource | str, start: datetime) -> list[log.LogEntry]:
        """LOG's entries from the last one before `start`, when a `- Blocked:` field is among them (else none):
        read back and parsed once per `start` (the oldest waiting decision's ask, the same day after day). The
        close's own entries, appended in between, are later than every day it writes up, so no reader of these
        misses them."""
        if start not in self._tails:
            text, first_line = log.tail_since(log.TextSource(log_text) if isinstance(log_text, str) else log_text,
                                              start)
            entries = list(log.parse(text, first_line=first_line, expect_title=False).entries) \
                if log.BLOCKED in text else []
            # A decision asked before LOG.md's first entry (rules 6 sealed the entries of its time): the volumes
            # back to its ask, which LOG.md alone no longer holds.
            sealed = log_text.sealed_since(start, holding=log.BLOCKED) \
                if isinstance(log_text, log_history.LogHistory) else ""
            if log.BLOCKED in sealed:
                entries = list(log.parse(sealed, expect_title=False).entries) + entries
            self._tails[start] = entries
        return self._tails[start]


def facts_of(memory: MemoryWriter, config: Config, day: date, moment: datetime, *,
             week: Week | None = None) -> tuple[day_report.DayFacts, datetime]:
    """The day as it stood at its end (or now, for today): its cycles, what waited, the streaks that ended.
    `week`: what the days of one close share (their days asked about oldest first)."""
    week = week or Week(moment)
    tz = config.tzinfo()
    start, end = day_bounds(day, tz)
    as_of = min(end, moment)
    until = reported_until(end, moment)             # the close's entry is dated `moment`: what it says it holds
    log_text = log_history.of(memory.workspace)     # read back from LOG's end only to the last close
    # The cycles no close reported yet, up to the day's end: today's, and those run after the last close.
    cycles = unreported_cycles(log_text, until, tz, day_start=start)
    # A day closed after a later day (`close --date`): its cycles may be in that later day's report already.
    ran = [c for c in day_entries(log_text, day, tz)[0] if c.when.moment < until] if not cycles else []
    waiting = week.waiting(decisions.parse(memory.read("decisions")), as_of)
    human = tuple(value for b in day_now_blocks(memory.read("now"), day, tz)
                  if (value := field_value(b.fields, "Human")))
    # A streak belongs to the report that holds its last cycle.
    streaks = streaks_ending(log_text, cycles)
    return day_report.DayFacts(day, cycles, waiting, streaks, config.close.stale_decision_days, human,
                               blocked_tasks(log_text, waiting, as_of, week=week), reported_before=len(ran)), as_of


def blocked_tasks(log_text: TailSource | str, waiting: tuple[decisions.Waiting, ...],
                  as_of: datetime, *, week: Week | None = None) -> dict[str, list[str]]:
    """For each decision still pending at `as_of`, the tasks of the cycles that said they were blocked on it
    (`- Blocked: D-…`). Reads back to the oldest pending decision's ask, at most a week when none is dated."""
    asked = [item.asked.moment for item in waiting if item.asked is not None]
    start = min(asked, default=as_of - timedelta(days=7))
    pending = {item.id for item in waiting}
    blocked: dict[str, list[str]] = {}
    if not pending:
        return blocked
    # A decision that waits a year would have the year's LOG parsed, every day closed: the text is read back
    # to its ask by headings alone, and parsed only when a `- Blocked:` field is in it at all.
    for entry in (week or Week(as_of)).entries_since(log_text, start):
        if entry.when.moment >= as_of:
            break
        for decision in entry.blocked_by:
            if decision in pending:
                blocked.setdefault(decision, []).append(entry.get("Task") or "")
    return blocked


def streak_problems(memory: MemoryWriter, facts: day_report.DayFacts, roadmap_text: str) -> tuple[list[str], list[str]]:
    """Each Rule 0 streak that ended this day, or still ran at its end, written up once with cause, fix and a
    lesson; a streak that continues keeps its lesson and is reported as continuing. Returns the problem lines
    and the lessons opened."""
    found, opened = [], []
    for streak in facts.streaks:
        hint = day_report.fix_hint(roadmap_text, facts.waiting, day_report.streak_blockers(streak, facts.waiting),
                                   facts.blocked_tasks)
        lesson, existed = streak_lesson(memory, streak, hint)
        line = day_report.streak_problem(streak, hint, lesson=lesson, continues=existed)
        if lesson is None:
            line += f" (no lesson opened: {memory.config.path('lessons')} has format problems; run `gitmem check`)"
        found.append(line)
        if lesson is not None and not existed:
            opened.append(lesson)
    return found, opened


def invalid_memory_problem(memory: MemoryWriter, shape: day_report.EntryShape) -> list[str]:
    """Memory that does not pass its check as it stands (an error committed with `--no-verify`, or by a hand
    merge): every cycle refuses to start on it, and `gitmem status` lists it (`gitmem.checks.standing`). One
    line, the first error and how many more, cut to a list line's share of the entry so that the count and what
    to do survive the cut. LOG is not judged here: the close's first append judges it, and refuses to write
    after an invalid LOG. The files are read as the close reads them (once per process, `confined.files`)."""
    from gitmem.checks.standing import parsed_standing
    from gitmem.confined import files

    found = parsed_standing(memory.config, lambda path: files.read_bytes(memory.root, path))
    if not found:
        return []
    first = found[0]
    more = f" (and {len(found) - 1} more)" if len(found) > 1 else ""
    head = "memory does not pass its check: "
    tail = f"{more}; cycles refuse to start until it is fixed: run `gitmem status`"
    error = f"{first.path}:{first.line}: {first.code} {first.message}"
    return [head + shortened(error, max(MIN_QUOTED, shape.chars // 3 - len(head) - len(tail))) + tail]


def standing_problems(facts: day_report.DayFacts, config: Config, standing: day_report.Standing, day: date,
                      promoted: PromotionResult | None, *, before: list[str],
                      shape: day_report.EntryShape) -> tuple[list[str], int]:
    """Conditions that last: a full RULES and unbacked confirmations are written up when they start, then once a
    week; a stale decision at every close while it waits, since only the human can end it and the close is
    where they look. Returns the lines the Problems list holds after `before`, and how many more were due (an
    unbacked line left out stays due)."""
    found = []
    for item in facts.waiting:
        if item.is_stale(facts.stale_days):
            found.append(f"{item.describe()} has waited longer than {facts.stale_days} days: please answer it")
    if promoted is not None:
        if promoted.rules_full and standing.due("rules-full", day):
            found.append(f"RULES is full ({config.limits.proven_rules_max} proven rules): eligible lessons wait; "
                         "see Promotions for the retirements proposed")
        if promoted.refused:
            found.append(f"{promoted.refused}; retire or supersede a rule, or shorten RULES")
    if promoted is None:
        return found, 0
    keyed = [(day_report.standing_key("unbacked", line), line) for line in promoted.unbacked]
    due = [line for key, line in keyed if standing.is_due(key, day)]
    room = max(0, shape.room(before + found + due) - len(before) - len(found))
    unbacked, more = standing.pick(keyed, day, room)
    return found + unbacked, more


def promotion_lines(promoted: PromotionResult, standing: day_report.Standing, day: date,
                    shape: day_report.EntryShape) -> list[str]:
    """Promotions made are always listed; a lesson that keeps waiting for the same reason, once a week. At most
    `shape.lines` lines: the rest is counted, and a lesson not listed stays due for the next close."""
    made_prefixes = {f"{p['rule']} · {p['text']}" for p in promoted.promoted}
    made = [line for line in promoted.lines if any(line.startswith(prefix) for prefix in made_prefixes)]
    waiting = [(day_report.standing_key("lesson", line), line) for line in promoted.lines if line not in made]
    room = shape.room(made + [line for key, line in waiting if standing.is_due(key, day)])
    listed = made[:room]
    due, more = standing.pick(waiting, day, room - len(listed))
    return shape.cap(listed + due, day_report.LESSONS_ELSEWHERE, more=more + len(made) - len(listed))


def plan_tomorrow(memory: MemoryWriter, config: Config, facts: day_report.DayFacts, roadmap_text: str,
          as_of: datetime) -> tuple[str, str]:
    """Tomorrow's first task: the fix of a streak still running, else what no pending decision blocks."""
    running = facts.streaks[-1] if facts.streaks and still_running(memory, facts.streaks[-1], as_of) else None
    streak = None
    if running is not None:
        streak = (running, day_report.fix_hint(roadmap_text, facts.waiting,
                                               day_report.streak_blockers(running, facts.waiting), facts.blocked_tasks))
    return day_report.offline_plan(roadmap_text, facts.waiting, config.cycle.priorities,
                                   blocked_tasks=facts.blocked_tasks, streak=streak, cycles=facts.cycles)


def still_running(memory: MemoryWriter, streak: Streak, as_of: datetime) -> bool:
    """Whether the streak's last cycle is the last cycle before `as_of` (nothing was built after it)."""
    latest = no_build_streak(memory.workspace.log_source(), as_of)
    return latest is not None and latest.last == streak.last


def streak_lesson(memory: MemoryWriter, streak: Streak, hint: str) -> tuple[str | None, bool]:
    """Rule 0: one lesson per streak (keyed by its first cycle), with a rule line so it can be promoted.
    Returns its id and whether it existed already; no id when LESSONS has format problems, which a rewrite would
    lose (the day is written up all the same, as promotions skip such a LESSONS)."""
    title = f"Rule 0: no-build streak from cycle {streak.first}"
    doc = lessons.parse(memory.read("lessons"))
    for item in doc.lessons:
        # Only a lesson written once the streak had begun can be about it: any lesson may carry this title.
        if item.title == title and item.happened is not None and item.happened.cycle >= streak.first:
            return item.id, True
    if doc.problems:
        return None, False
    item = memory.add_lesson(
        title=title, cycle=streak.last,
        happened=f"cycles {streak.first}–{streak.last} ({streak.length} in a row) built nothing",
        why=day_report.streak_cause(streak), change=hint[0].upper() + hint[1:], rule=day_report.STREAK_RULE)
    return item.id, False
