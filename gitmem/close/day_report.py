"""The close report and tomorrow's plan, built from the data alone (the model may only reword the prose)."""
from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime

from gitmem.close.day import DAY_FIELD, Streak
from gitmem.cycle.permissions import is_revert_note
from gitmem.memory import log, roadmap
from gitmem.memory.decisions import Waiting
from gitmem.memory.lines import shortened
from gitmem.memory.log import OUTCOMES, LogEntry, Outcome

STANDING_FIELD = "Standing"
REMIND_DAYS = 7          # a standing condition is reported when it starts, then once a week
STREAK_RULE = "When a task is blocked, ship the smallest unblocked piece the same cycle and log the blocker"
LIST_MOST = 10           # the most lines any list of a close entry holds; the rest is counted and pointed to
ENTRY_PARTS = 7          # a list's share of the entry's limit: Done, Waiting, Problems, Promotions, Standing, and
                         # two for Day, Cycles, Summary and Plan
MORE_CHARS = 120         # the most characters of the `… and N more` line
CYCLES_ELSEWHERE = "their LOG entries, or `gitmem report`"
LESSONS_ELSEWHERE = "`gitmem status --json` lists them"


@dataclass(frozen=True)
class EntryShape:
    """How much of each list a close entry holds, so the entry fits LOG's entry limit whatever history holds:
    at most `lines` lines and `chars` characters a list, a line cut at `chars // 3`, and when lines are left
    out a last line `… and N more` that says where they are. Derived from the limit, so a smaller context
    budget gets shorter lists."""

    lines: int
    chars: int

    @classmethod
    def within(cls, limit: int) -> EntryShape:
        return cls(LIST_MOST, max(3 * MORE_CHARS, limit // ENTRY_PARTS))

    def short(self, line: str) -> str:
        return shortened(line, self.chars // 3)

    def room(self, lines: Sequence[str], *, more: int = 0) -> int:
        """How many of the leading lines the list holds: all of them when they fit and nothing else was left
        out (`more`), else as many as fit beside the `… and N more` line."""
        def fitting(budget: int, most: int) -> int:
            used = count = 0
            for line in lines[:most]:
                used += len(self.short(line)) + 1
                if used > budget:
                    break
                count += 1
            return count
        if not more and fitting(self.chars, self.lines) == len(lines):
            return len(lines)
        return fitting(self.chars - MORE_CHARS - 1, self.lines - 1)

    def cap(self, lines: Sequence[str], elsewhere: str, *, more: int = 0) -> list[str]:
        """The lines that fit, then one `… and N more` line naming where the rest is; `more` counts lines left
        out before this list was made."""
        room = self.room(lines, more=more)
        hidden = len(lines) - room + more
        kept = [self.short(line) for line in lines[:room]]
        return kept + ([shortened(f"… and {hidden} more: {elsewhere}", MORE_CHARS)] if hidden else [])


@dataclass(frozen=True)
class DayFacts:
    day: date
    cycles: tuple[LogEntry, ...]
    waiting: tuple[Waiting, ...]               # as of the end of the day
    streaks: tuple[Streak, ...]                # runs of no-build that ended that day, or still ran at its end
    stale_days: int
    human_notes: tuple[str, ...] = ()          # the day's NOW `Human:` lines, newest first
    blocked_tasks: Mapping[str, Sequence[str]] = field(default_factory=dict)   # decision -> tasks it blocked
    reported_before: int = 0                   # cycles that ran on the day, in a report written before this one

    def counts(self) -> dict[str, int]:
        return {outcome: sum(1 for c in self.cycles if c.outcome == outcome) for outcome in OUTCOMES}

    def counts_line(self) -> str:
        """`4 cycles (2 built, 1 published, 1 no-build)`, or exactly that no cycle ran."""
        if not self.cycles and self.reported_before:
            return (f"no cycles to report: the {self.reported_before} cycle(s) that ran on {self.day.isoformat()} "
                    "are in an earlier close's report")
        if not self.cycles:
            return f"no cycles ran on {self.day.isoformat()}"
        numbers = ", ".join(f"{n} {outcome}" for outcome, n in self.counts().items())
        return f"{len(self.cycles)} cycle{'s' if len(self.cycles) != 1 else ''} ({numbers})"


def reverts(entry: LogEntry) -> list[str]:
    """The Evidence lines of a cycle that record a forbidden memory edit being reverted: the runner's own
    (`runner: <one of REVERT_VERBS> …`), and hand-written lines that say "reverted"."""
    lines = (line.strip() for line in (entry.get("Evidence") or "").split("\n"))
    return [text[7:].strip() if text.lower().startswith("runner:") else text
            for text in lines if is_revert_note(text)]


def done_lines(facts: DayFacts) -> list[str]:
    return [f"cycle {c.cycle} · {c.outcome} · {shortened(c.get('Task') or '(no task)', 70)}"
            + (f" — {shortened(c.get('Result') or '', 80)}" if c.outcome != Outcome.NO_BUILD else "")
            for c in facts.cycles]


def salvage_branch(entry: LogEntry) -> str | None:
    """The branch a salvaged cycle's work is on, from the runner's `Salvaged` field."""
    value = (entry.get(log.SALVAGED) or "").strip()
    return value if value.startswith("gitmem/") else None


def streak_cause(streak: Streak) -> str:
    """The streak's distinct reasons, from the cycles' own Result lines (Rule 0 makes each say why)."""
    reasons: list[str] = []
    for entry in streak.cycles:
        reason = shortened(entry.get("Result") or "no reason given", 80).rstrip(".")
        if reason not in reasons:
            reasons.append(reason)
    return "; ".join(reasons[:3]) + (f"; and {len(reasons) - 3} more" if len(reasons) > 3 else "")


def streak_blockers(streak: Streak, waiting: Sequence[Waiting]) -> tuple[str, ...]:
    """The pending decisions the streak's cycles said they were blocked on, newest first."""
    pending = {item.id for item in waiting}
    named = [found for entry in reversed(streak.cycles) for found in entry.blocked_by if found in pending]
    return tuple(dict.fromkeys(named))


def streak_problem(streak: Streak, fix_hint: str, *, lesson: str | None, continues: bool) -> str:
    since = streak.cycles[0].when
    state = "; the streak continues, already written up" if continues else ""
    text = (f"Rule 0: cycles {streak.first}–{streak.last} ({streak.length} in a row, since {since}) built "
            f"nothing{state}. Cause: {streak_cause(streak)}. Fix: {fix_hint}")
    return text + (f" (lesson {lesson})" if lesson else "")


def fix_hint(roadmap_text: str, waiting: Sequence[Waiting], blockers: Sequence[str] = (),
             blocked_tasks: Mapping[str, Sequence[str]] | None = None) -> str:
    """What the next cycle must do: the top ROADMAP item nothing blocks, as the plan picks it. It names the
    decisions the agent said it waits on, and no other: a guess would send the human to the wrong one."""
    item = next(iter(unblocked_items(roadmap_text, waiting, blocked_tasks or {})), None)
    step = (f"ship the smallest piece of `{shortened(item, 60)}`" if item
            else "ship the smallest thing that can be built today")
    if blockers:
        names = ", ".join(blockers)
        return (f"the next cycle must {step} and log it, working on something {names} does not block; "
                f"answer {names} in DECISIONS to unblock it")
    return f"the next cycle must {step} and log it"


_WORD = re.compile(r"[a-z0-9]+")


def _matches(item: str, task: str) -> bool:
    """A roadmap item and a logged task are the same work when one names the other or most words agree."""
    a, b = set(_WORD.findall(item.lower())), set(_WORD.findall(task.lower()))
    if not a or not b:
        return False
    return a <= b or b <= a or len(a & b) / len(a | b) >= 0.5


def unblocked_items(roadmap_text: str, waiting: Sequence[Waiting],
                    blocked_tasks: Mapping[str, Sequence[str]]) -> list[str]:
    """Open items of the current ROADMAP section that no pending decision blocks: an item is blocked when it
    names a pending decision, or when a cycle that logged `Blocked: D-…` (still pending) worked on it."""
    pending = {item.id for item in waiting}
    found = []
    for item in roadmap.open_items(roadmap_text):
        if any(decision in item for decision in pending):
            continue
        if any(_matches(item, task) for decision, tasks in blocked_tasks.items() if decision in pending
               for task in tasks):
            continue
        found.append(item)
    return found


TICK_COMMAND = "gitmem roadmap done"       # the agent's one way to tick an item (a tool of the same name too)


def tick_hint(item: str, cycles: Sequence[LogEntry]) -> str:
    """How the plan's ROADMAP item stops being the plan: the agent ticks it. When a cycle already logged work on
    it that built or published something, the plan says so: finished work left unticked is planned again."""
    worked = [c.cycle for c in cycles if c.outcome != Outcome.NO_BUILD and _matches(item, c.get("Task") or "")]
    if worked:
        return (f"; cycle {worked[-1]} logged work on it: once it is finished, tick it off "
                f"(`{TICK_COMMAND}`) and the plan moves on")
    return f"; tick it off when it is finished (`{TICK_COMMAND}`)"


def offline_plan(roadmap_text: str, waiting: Sequence[Waiting], priorities: Sequence[str], *,
                 blocked_tasks: Mapping[str, Sequence[str]] | None = None,
                 streak: tuple[Streak, str] | None = None, cycles: Sequence[LogEntry] = ()) -> tuple[str, str]:
    """(first task tomorrow, why). A running Rule 0 streak comes first; then the top open ROADMAP item no
    pending decision blocks (until the agent ticks it: `tick_hint`); then the oldest Pending decision's
    follow-up; then the priorities. `cycles` are the reported day's."""
    if streak is not None:
        run, hint = streak
        return shortened(hint, 160), f"cycles {run.first}–{run.last} built nothing (Rule 0)"
    blocked_tasks = blocked_tasks or {}
    items = unblocked_items(roadmap_text, waiting, blocked_tasks)
    all_open = roadmap.open_items(roadmap_text)
    if items:
        section = roadmap.current_section(roadmap_text)
        where = f" `{section.title}`" if section is not None else ""
        skipped = len(all_open) - len(items) if items[0] != all_open[0] else 0
        why = f"it is the top open item of the current ROADMAP section{where}"
        if skipped:
            why += " that no pending decision blocks"
        return shortened(items[0], 120), why + tick_hint(items[0], cycles)
    pending_blockers = [d for d in blocked_tasks if d in {w.id for w in waiting}]
    if all_open and pending_blockers:
        first = next(w for w in waiting if w.id == pending_blockers[0])
        return (f"follow up {first.id} · {shortened(first.title, 60)}",
                f"every open ROADMAP item waits on it ({first.age}); meanwhile build what it does not block")
    if waiting:
        oldest = waiting[0]
        rec = f"; recommendation: {shortened(oldest.recommendation, 80)}" if oldest.recommendation else ""
        return (f"follow up {oldest.id} · {shortened(oldest.title, 60)}",
                f"it is the oldest Pending decision ({oldest.age}){rec}")
    first_priority = priorities[0] if priorities else "build something new"
    return (f"pick a task by the priorities, starting with `{first_priority}`",
            "ROADMAP has no open item and nothing is pending")


def cycle_problems(facts: DayFacts) -> list[str]:
    """The day's events: cycles that built nothing (a salvage branch is named whole), forbidden edits reverted,
    commits made in the runner's checkout during a cycle (kept on a branch, never taken as anyone's word)."""
    found: list[str] = []
    for entry in facts.cycles:
        if entry.outcome == Outcome.NO_BUILD:
            line = f"cycle {entry.cycle} built nothing: {shortened(entry.get('Result') or 'no reason given', 140)}"
            branch = salvage_branch(entry)
            found.append(line + (f" (its work is on branch {branch})" if branch and branch not in line else ""))
        for note in reverts(entry):
            found.append(f"cycle {entry.cycle} made a forbidden memory edit, reverted: {shortened(note)}")
        kept = (entry.get(log.KEPT) or "").strip()
        if kept:
            found.append(f"cycle {entry.cycle}: commits were made in the runner's checkout during the cycle; they "
                         f"are kept on branch {kept}, not on the main branch. If one holds a human's answer, push "
                         "it or merge it in a pull request")
    return found


# -- standing conditions: reported when they start, then once a week --------------------------------------------

def standing_key(kind: str, text: str) -> str:
    """A short, stable name for a condition (its text may be long): kind plus a hash of what it says."""
    return f"{kind}#{hashlib.sha1(text.encode()).hexdigest()[:8]}"


def parse_standing(entry: LogEntry | None) -> dict[str, date]:
    """`key date; key date` from a close entry's Standing field: when each condition was last written up."""
    found: dict[str, date] = {}
    for part in (entry.get(STANDING_FIELD) or "").replace("\n", ";").split(";") if entry is not None else []:
        key, _, when = part.strip().rpartition(" ")
        try:
            found[key] = date.fromisoformat(when)
        except ValueError:
            continue
    return found


def render_standing(standing: Mapping[str, date], most_chars: int | None = None) -> str:
    """`key date; …`, newest first when it must be cut to `most_chars`: a condition left out only counts as new
    again, and is written up once more at its next close."""
    kept = dict(standing)
    if most_chars is not None:
        size, kept = 0, {}
        for key, when in sorted(standing.items(), key=lambda item: (item[1], item[0]), reverse=True):
            size += len(key) + len(when.isoformat()) + 3
            if size > most_chars:
                break
            kept[key] = when
    return "; ".join(f"{key} {when.isoformat()}" for key, when in sorted(kept.items()))


class Standing:
    """Which standing conditions a close writes up: new ones, and old ones a week after their last mention."""

    def __init__(self, previous: Mapping[str, date]) -> None:
        self.previous = dict(previous)
        self.current: dict[str, date] = {}

    def is_due(self, key: str, day: date) -> bool:
        """Whether the condition is written up at `day`; what was written up is recorded by `due` or `mark`."""
        last = self.previous.get(key)
        return last is None or (day - last).days >= REMIND_DAYS

    def due(self, key: str, day: date) -> bool:
        if self.is_due(key, day):
            self.current[key] = day
            return True
        self.current[key] = self.previous[key]
        return False

    def pick(self, keyed: Sequence[tuple[str, str]], day: date, room: int) -> tuple[list[str], int]:
        """The lines due at `day`, at most `room` of them (recorded as written up), and how many more were due.
        One left out is not recorded, so it stays due and a later close lists it."""
        chosen: list[str] = []
        more = 0
        for key, line in keyed:
            if not self.is_due(key, day):
                self.current[key] = self.previous[key]
            elif len(chosen) < room:
                self.current[key] = day
                chosen.append(line)
            else:
                more += 1
        return chosen, more

    def carry(self, *, complete: bool = True) -> Standing:
        """The state the next day's close starts from. After a complete close, conditions not seen again are
        dropped (one that comes back is new again); a caught-up day checks only some, so it keeps the rest."""
        return Standing(self.current if complete else {**self.previous, **self.current})


def close_fields(facts: DayFacts, *, problems: list[str], promotion_lines: list[str],
                 plan: tuple[str, str] | None, summary: str | None, standing: Mapping[str, date],
                 as_of: datetime, shape: EntryShape, problems_more: int = 0) -> dict[str, str]:
    """The close entry's fields. A day without cycles stays short and says exactly that. Every list is cut to
    `shape` (promotion lines come cut already: only the lines listed count as written up)."""
    share = shape.chars
    fields: dict[str, str] = {DAY_FIELD: facts.day.isoformat(), "Cycles": facts.counts_line()}
    if summary:
        fields["Summary"] = shortened(summary, share)
    if facts.cycles:
        fields["Done"] = "\n".join(shape.cap(done_lines(facts), CYCLES_ELSEWHERE))
    if facts.cycles or facts.waiting:
        fields["Waiting"] = "\n".join(shape.cap([w.describe() for w in facts.waiting],
                                                "DECISIONS and `gitmem status` list them")) or "nothing"
    if facts.cycles or problems or problems_more:
        fields["Problems"] = "\n".join(shape.cap(problems, f"the cycles' LOG entries; {LESSONS_ELSEWHERE}",
                                                 more=problems_more)) or "none"
    if promotion_lines:
        fields["Promotions"] = "\n".join(promotion_lines)
    fields["Plan"] = plan_text(plan, shape) if plan is not None else (
        f"see the close of a later day (this day was closed late, as of {as_of:%Y-%m-%d %H:%M})")
    if standing:
        fields[STANDING_FIELD] = render_standing(standing, share)
    return fields


def plan_text(plan: tuple[str, str], shape: EntryShape) -> str:
    """The plan (the task, and why) as the close states it in its report, on top of NOW and in its result: one
    line within a list's share of the entry, whoever worded it (the model may answer with pages)."""
    return shortened(f"{plan[0]} — why: {plan[1]}", shape.chars)


def plan_block(facts: DayFacts, plan: tuple[str, str], shape: EntryShape) -> dict[str, str]:
    """Did / Human / Next for the `plan for <next day>` NOW block: three lines, within any block limit (NOW's share
    of the context is half the LOG entry's): the waiting decisions are cut as a list's line is, the count first."""
    human = (f"{len(facts.waiting)} decision(s) waiting: " + ", ".join(
        f"{w.id} ({w.age})" for w in facts.waiting)) if facts.waiting else "nothing waiting"
    return {"did": f"closed {facts.day.isoformat()}: {facts.counts_line()}",
            "human": shape.short(human), "next": plan_text(plan, shape)}
