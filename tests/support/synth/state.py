"""Decisions, lessons, rules and the roadmap of a synthetic history, rendered as they stand at any point.

"At b" means: everything whose LOG entry index is below b. Rendering goes through `gitmem.memory`, so every
state is canonical and valid by construction (the test suite verifies the whole history with `gitmem verify`).
"""
from __future__ import annotations

import itertools
import random
from dataclasses import dataclass, field, replace
from datetime import timedelta

from gitmem.memory import decisions, lessons, rules
from gitmem.memory.fields import render_field
from tests.support.synth.plan import DECISIONS_1X, LESSONS_1X, Plan, Planted, timestamp
from tests.support.synth.text import FACTS, TOPICS, TextGen

HUMAN_RULES = (
    "Read DECISIONS Resolved since the last cycle before picking a task",
    "Take every timestamp from the clock, never from the last LOG entry",
    "One task per cycle; log it before committing",
    "Never publish on Friday after 18:00 UTC",
    "Keep NOW blocks to Did, Human and Next",
    "Ask the human in DECISIONS instead of waiting in LOG",
    "Run the full test suite before every publish",
    "Answer people before building anything new",
    "Search LOG with recall before redoing an old task",
    "Measure before and after every performance change",
)
TOTAL_RULES, PROVEN_FINAL, MAX_PROMOTED = 22, 18, 14


@dataclass
class DecisionItem:
    pending: decisions.Decision
    asked_at: int                          # entry index
    resolved: decisions.Decision | None = None
    answer_commit: int | None = None       # index of the bulk chunk after which a human answers it


@dataclass
class LessonItem:
    base: lessons.Lesson                   # as created, Status open
    created_at: int
    confirmations: list[tuple[int, int, list[str]]] = field(default_factory=list)  # (entry index, cycle, lines)
    status: list[tuple[int, str]] = field(default_factory=list)                # (entry index, status)


@dataclass
class RuleItem:
    rule: rules.Rule
    created_at: int
    retired_at: int | None = None
    retired_as: str = ""


@dataclass
class State:
    decisions: list[DecisionItem] = field(default_factory=list)
    lessons: list[LessonItem] = field(default_factory=list)
    rules: list[RuleItem] = field(default_factory=list)
    templates: dict[str, str] = field(default_factory=dict)
    rules_preamble: tuple[str, ...] = ()


def _chunk_of(plan: Plan, index: int) -> int:
    """The bulk commit holding entry `index`; len(plan.chunks) for the recent, one-by-one part."""
    return next((j for j, end in enumerate(plan.chunks) if index < end), len(plan.chunks))


def make_state(plan: Plan, templates: dict[str, str], human: tuple[str, str]) -> State:
    rng = random.Random(f"{plan.seed}:state")
    text = TextGen(rng)
    state = State(templates=templates)
    cycle_entry = {e.cycle: e for e in plan.entries if e.cycle is not None}
    bulk_cycles = [e.cycle for e in plan.entries[:plan.recent_start] if e.cycle is not None]
    facts = {kind: [f for f in FACTS if f.kind == kind] for kind in ("lesson", "decision")}

    count = max(2, round(DECISIONS_1X * plan.scale))
    # Stratified: one decision per equal slice of history, so even tiny scales have resolved ones.
    asked = [1 + int((n + rng.random()) * plan.cycles / count) for n in range(count)]
    fact_at = {int((n + 0.5) * count / len(facts["decision"])): f for n, f in enumerate(facts["decision"])}
    stale = next((i for i, c in enumerate(asked) if count >= 10
                  and _chunk_of(plan, cycle_entry[c].index) == len(plan.chunks) - 1), None)
    for number, cycle in enumerate(asked, start=1):
        entry = cycle_entry[cycle]
        topic = text.topic()
        fact = fact_at.get(number - 1)
        item = decisions.make_decision(
            decisions.format_id(number), text.title(topic), asked=timestamp(entry.when + timedelta(minutes=3)),
            cycle=cycle, context=fact.text if fact else text.line(topic),
            options=f"A) {text.task(topic)}; B) leave the {topic} as it is", recommendation=f"A, {text.line(topic)}")
        found = DecisionItem(item, entry.index)
        if fact:
            plan.facts.append(Planted(fact.query, "decision", item.id))
        if entry.index < plan.recent_start and number - 1 != stale:
            found.answer_commit = _chunk_of(plan, entry.index)
            # Never after the human's commit that holds it (the chunk's commit, 5 minutes after its last entry,
            # then 20 more): a commit is not older than the answers it holds (GM211).
            committed = plan.entries[plan.chunks[found.answer_commit] - 1].when + timedelta(minutes=25)
            when = timestamp(min(entry.when + timedelta(hours=rng.randint(2, 30)), committed))
            doc = decisions.DecisionsDoc((), (item,), (), {})
            answer = rng.choice(("A", "B", f"A, {text.line(topic)}"))
            found.resolved = decisions.move_to_resolved(doc, item.id, answer=answer, answered=when, name=human[0],
                                                        email=human[1]).resolved[0]
        state.decisions.append(found)

    count = max(1, round(LESSONS_1X * plan.scale))
    happened = sorted(rng.sample(bulk_cycles[:-1], min(count, len(bulk_cycles) - 1)))
    fact_at = {int((n + 0.5) * len(happened) / len(facts["lesson"])): f for n, f in enumerate(facts["lesson"])}
    rule_pool = [f"{text.task(text.topic()).capitalize()} before publishing" for _ in range(len(happened))]
    for number, cycle in enumerate(happened, start=1):
        entry = cycle_entry[cycle]
        topic = text.topic()
        fact = fact_at.get(number - 1)
        lesson = lessons.make_lesson(
            lessons.format_id(number), text.title(topic), day=entry.when.date(), cycle=cycle,
            happened=fact.text if fact else text.line(topic), why=text.line(topic), change=text.line(topic),
            rule=rule_pool[number - 1] if rng.random() < 0.8 else None)
        if fact:
            plan.facts.append(Planted(fact.query, "lesson", lesson.id))
        lesson_item = LessonItem(lesson, entry.index)
        later = [c for c in bulk_cycles if c > cycle]
        for confirm in sorted(rng.sample(later, min(len(later), rng.choice((0, 0, 1, 2, 2, 3))))):
            day = cycle_entry[confirm].when.date()
            line = render_field("Confirmed", lessons.event_text(day, confirm, text.line(topic)))
            lesson_item.confirmations.append((cycle_entry[confirm].index, confirm, line))
        state.lessons.append(lesson_item)
    _plan_rules(plan, state, rng)
    state.rules_preamble = _rules_preamble(templates["RULES.md"], text, human)
    return state


RULES_TARGET_LINES = 189          # the original system's RULES.md: 189 lines, 18 proven rules


def _rules_preamble(template: str, text: TextGen, human: tuple[str, str]) -> tuple[str, ...]:
    """The template's free text with the placeholders filled, plus product notes up to a realistic length."""
    lines = [line.replace("<agent name>", "Wren").replace(
        "<one sentence: what this agent exists to do>", "run and improve a small publishing product").replace(
        "<who answers DECISIONS.md, and how to reach them>", f"{human[0]} <{human[1]}>, answers in pull requests")
        for line in rules.parse(template).preamble]
    while lines and not lines[-1].strip():
        lines.pop()
    budget = RULES_TARGET_LINES - 2 - (2 + 1 + PROVEN_FINAL) - (1 + 1 + (TOTAL_RULES - PROVEN_FINAL)) - len(lines)
    topics = itertools.cycle(sorted(TOPICS))
    while budget >= 4:
        topic = next(topics)
        size = min(budget - 1, 9)
        lines += ["", f"## Notes on {topic}", *(f"- {text.line(topic)}" for _ in range(size - 2))]
        budget -= size
    return tuple(lines)


def _close_after(plan: Plan, index: int) -> int | None:
    return next((e.index for e in plan.entries[index:plan.recent_start] if e.cycle is None), None)


def _plan_rules(plan: Plan, state: State, rng: random.Random) -> None:
    """Human rules from the start; lessons with two confirmations promoted at the next close; four retired."""
    eligible = []
    for item in state.lessons:
        if len(item.confirmations) >= 2 and item.base.get("Rule"):
            at = _close_after(plan, item.confirmations[1][0])
            if at is not None:
                eligible.append((at, item))
    eligible = sorted(eligible, key=lambda pair: pair[0])[:MAX_PROMOTED]
    humans = TOTAL_RULES - len(eligible)
    for n in range(humans):
        state.rules.append(RuleItem(rules.Rule(rules.format_id(n + 1), HUMAN_RULES[n % len(HUMAN_RULES)]
                                               + ("" if n < len(HUMAN_RULES) else f", case {n + 1}"),
                                               "human", rules.PROVEN), 0))
    for n, (at, item) in enumerate(eligible):
        rule_id = rules.format_id(humans + n + 1)
        cycles = ", ".join(str(cycle) for _, cycle, _ in item.confirmations[:2])
        state.rules.append(RuleItem(rules.Rule(rule_id, item.base.get("Rule") or "", f"from {item.base.id}; "
                                               f"cycles {cycles}", rules.PROVEN), at))
        item.status.append((at, f"promoted {rule_id}"))
        if n < 2:                                   # the first promotions supersede a human rule
            old = state.rules[2 + n]
            body = [line for line in item.base.body if not line.startswith("- Status:")]
            item.base = replace(item.base, body=(*body, *render_field("Supersedes", old.rule.id),
                                                 *render_field("Status", "open")))
            day = plan.entries[at].when.date().isoformat()
            old.retired_at, old.retired_as = at, f"superseded by {rule_id} on {day}"
    retired = sum(1 for r in state.rules if r.retired_at is not None)
    for n in range(TOTAL_RULES - PROVEN_FINAL - retired):
        old = state.rules[4 + 2 * n]
        at = min(plan.recent_start - 1, max(1, round(plan.recent_start * (0.2 + 0.2 * n))))
        day = plan.entries[at].when.date().isoformat()
        old.retired_at, old.retired_as = at, f"retired on {day}: the runner now enforces it"
    for item in state.lessons:
        if not item.status and rng.random() < 0.1:
            item.status.append((min(item.created_at + 30, plan.recent_start - 1), "retired — no longer relevant"))


def decisions_text(state: State, upto: int, answered_chunks: int) -> bytes:
    doc = decisions.parse(state.templates["DECISIONS.md"])
    pending, resolved = [], []
    for item in state.decisions:
        if item.asked_at >= upto:
            continue
        if item.resolved is not None and item.answer_commit is not None and item.answer_commit < answered_chunks:
            resolved.append(item)
        else:
            pending.append(item.pending)
    # A human answers a batch in ID order; each answer goes on top of Resolved.
    resolved.sort(key=lambda i: (i.answer_commit, i.pending.number), reverse=True)
    return decisions.render(replace(doc, pending=tuple(pending),
                                    resolved=tuple(i.resolved for i in resolved if i.resolved))).encode()


def lessons_text(state: State, upto: int) -> bytes:
    doc = lessons.parse(state.templates["LESSONS.md"])
    items = []
    for item in state.lessons:
        if item.created_at >= upto:
            continue
        body = [line for line in item.base.body if not line.startswith("- Status:")]
        body += [line for at, _, lines in item.confirmations if at < upto for line in lines]
        status = [s for at, s in item.status if at < upto]
        body += render_field("Status", status[-1] if status else "open")
        items.append(replace(item.base, body=tuple(body)))
    return lessons.render(replace(doc, lessons=tuple(items))).encode()


def rules_text(state: State, upto: int) -> bytes:
    doc = rules.parse(state.templates["RULES.md"])
    proven = [r.rule for r in state.rules if r.created_at < upto and not (r.retired_at is not None
                                                                          and r.retired_at < upto)]
    gone = sorted((r for r in state.rules if r.retired_at is not None and r.retired_at < upto),
                  key=lambda r: r.retired_at or 0)
    retired = [replace(r.rule, provenance=r.retired_as, section=rules.RETIRED) for r in gone]
    return rules.render(replace(doc, preamble=state.rules_preamble or doc.preamble, proven=tuple(proven),
                                retired=tuple(retired))).encode()
