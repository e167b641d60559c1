"""The close report and tomorrow's plan, built from the data alone (the model may only reword the prose)."""
from __future__ import annotations

from dataclasses import dataclass
from datetime import date

from gitmem.close.day import DAY_FIELD, Streak
from gitmem.cycle.permissions import REVERT_VERBS
from gitmem.memory import roadmap
from gitmem.memory.decisions import Waiting
from gitmem.memory.log import OUTCOMES, LogEntry
from gitmem.memory.text import one_line


@dataclass(frozen=True)
class DayFacts:
    day: date
    cycles: tuple[LogEntry, ...]
    waiting: tuple[Waiting, ...]
    streak: Streak
    stale_days: int
    human_notes: tuple[str, ...] = ()      # the day's NOW `Human:` lines, newest first

    def counts(self) -> dict[str, int]:
        return {outcome: sum(1 for c in self.cycles if c.outcome == outcome) for outcome in OUTCOMES}

    def counts_line(self) -> str:
        """`4 cycles (2 built, 1 published, 1 no-build)`, or exactly that no cycle ran."""
        if not self.cycles:
            return f"no cycles ran on {self.day.isoformat()}"
        numbers = ", ".join(f"{n} {outcome}" for outcome, n in self.counts().items())
        return f"{len(self.cycles)} cycle{'s' if len(self.cycles) != 1 else ''} ({numbers})"


def reverts(entry: LogEntry) -> list[str]:
    """The Evidence lines of a cycle that record a forbidden memory edit being reverted: the runner's own
    (`runner: <one of REVERT_VERBS> …`), and hand-written lines that say "reverted"."""
    found = []
    for line in (entry.get("Evidence") or "").split("\n"):
        text = line.strip()
        lowered = text.lower()
        if lowered.startswith("runner:"):
            if lowered[7:].lstrip().startswith(REVERT_VERBS):
                found.append(text[7:].strip())
        elif "reverted" in lowered:
            found.append(text)
    return found


def _short(text: str, limit: int = 100) -> str:
    """One line for the report; a cut is marked with `…` so nothing is shortened silently."""
    text = one_line(text)
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def done_lines(facts: DayFacts) -> list[str]:
    return [f"cycle {c.cycle} · {c.outcome} · {_short(c.get('Task') or '(no task)', 70)}"
            + (f" — {_short(c.get('Result') or '', 80)}" if c.outcome != "no-build" else "")
            for c in facts.cycles]


def streak_cause(streak: Streak) -> str:
    """The streak's distinct reasons, from the cycles' own Result lines (Rule 0 makes each say why)."""
    reasons: list[str] = []
    for entry in streak.cycles:
        reason = _short(entry.get("Result") or "no reason given", 80).rstrip(".")
        if reason not in reasons:
            reasons.append(reason)
    return "; ".join(reasons[:3]) + (f"; and {len(reasons) - 3} more" if len(reasons) > 3 else "")


def streak_problem(streak: Streak, fix_hint: str) -> str:
    since = streak.cycles[0].when
    return (f"Rule 0: cycles {streak.first}–{streak.last} ({streak.length} in a row, since {since}) built "
            f"nothing. Cause: {streak_cause(streak)}. Fix: {fix_hint}")


def fix_hint(roadmap_text: str, waiting: tuple[Waiting, ...]) -> str:
    item = roadmap.first_open_item(roadmap_text)
    step = (f"ship the smallest piece of `{_short(item, 60)}`" if item
            else "ship the smallest thing that can be built today")
    blocked = f"; if {waiting[0].id} blocks it, work on something it does not block" if waiting else ""
    return f"the next cycle must {step} and log it{blocked}"


def problem_lines(facts: DayFacts, hint: str, streak_lesson: str | None = None) -> list[str]:
    found: list[str] = []
    for entry in facts.cycles:
        if entry.outcome == "no-build":
            found.append(f"cycle {entry.cycle} built nothing: "
                         f"{_short(entry.get('Result') or 'no reason given', 140)}")
        for note in reverts(entry):
            found.append(f"cycle {entry.cycle} made a forbidden memory edit, reverted: {_short(note)}")
    for item in facts.waiting:
        if item.days > facts.stale_days:
            found.append(f"{item.describe()} has waited longer than {facts.stale_days} days: please answer it")
    if facts.streak.is_problem:
        found.append(streak_problem(facts.streak, hint) + (f" (lesson {streak_lesson})" if streak_lesson else ""))
    return found


def offline_plan(roadmap_text: str, waiting: tuple[Waiting, ...], priorities: tuple[str, ...]) -> tuple[str, str]:
    """(first task tomorrow, why): the top open ROADMAP item, else the oldest Pending decision's follow-up."""
    item = roadmap.first_open_item(roadmap_text)
    if item:
        section = roadmap.current_section(roadmap_text)
        where = f" `{section.title}`" if section is not None else ""
        return _short(item, 120), f"it is the top open item of the current ROADMAP section{where}"
    if waiting:
        oldest = waiting[0]
        rec = f"; recommendation: {_short(oldest.recommendation, 80)}" if oldest.recommendation else ""
        return (f"follow up {oldest.id} · {_short(oldest.title, 60)}",
                f"it is the oldest Pending decision ({oldest.days} days){rec}")
    first = priorities[0] if priorities else "build something new"
    return f"pick a task by the priorities, starting with `{first}`", "ROADMAP has no open item and nothing is pending"


def close_fields(facts: DayFacts, *, problems: list[str], promotion_lines: list[str], plan: tuple[str, str],
                 summary: str | None) -> dict[str, str]:
    """The close entry's fields. A day without cycles stays short and says exactly that."""
    fields: dict[str, str] = {DAY_FIELD: facts.day.isoformat(), "Cycles": facts.counts_line()}
    if summary:
        fields["Summary"] = summary
    if facts.cycles:
        fields["Done"] = "\n".join(done_lines(facts))
    if facts.cycles or facts.waiting:
        fields["Waiting"] = "\n".join(w.describe() for w in facts.waiting) or "nothing"
    if facts.cycles or problems:
        fields["Problems"] = "\n".join(problems) or "none"
    if promotion_lines:
        fields["Promotions"] = "\n".join(promotion_lines)
    fields["Plan"] = f"{plan[0]} — why: {plan[1]}"
    return fields


def plan_block(facts: DayFacts, plan: tuple[str, str]) -> dict[str, str]:
    """Did / Human / Next for the `plan for <next day>` NOW block: three lines, within any block limit."""
    human = (f"{len(facts.waiting)} decision(s) waiting: " + ", ".join(
        f"{w.id} ({w.days}d)" for w in facts.waiting)) if facts.waiting else "nothing waiting"
    return {"did": f"closed {facts.day.isoformat()}: {facts.counts_line()}",
            "human": human, "next": f"{plan[0]} — why: {plan[1]}"}
