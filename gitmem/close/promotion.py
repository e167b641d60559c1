"""Writing promotions: re-read the live files, re-run the gates, write RULES and LESSONS as one change.

A contradiction that no Supersedes line settles becomes a Pending decision (once; later closes point at it).
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date
from typing import Any

from gitmem.close import gates
from gitmem.close.backing import Backs
from gitmem.close.commit_guard import write_together
from gitmem.close.llm import CloseModel
from gitmem.config import Config
from gitmem.memory import decisions, lessons, rules
from gitmem.memory_writer import MemoryWriter


@dataclass
class PromotionResult:
    promoted: list[dict[str, Any]] = field(default_factory=list)
    not_promoted: list[str] = field(default_factory=list)     # every eligible-or-nearly lesson left, and why
    decisions_filed: list[str] = field(default_factory=list)
    lines: list[str] = field(default_factory=list)            # the report's Promotions field
    rules_full: bool = False                                  # eligible lessons wait for room in RULES
    refused: str | None = None                                # the checks refused the promotions written
    unbacked: list[str] = field(default_factory=list)         # Confirmed lines history does not back


def promote_live(memory: MemoryWriter, config: Config, model: CloseModel | None, *, today: date,
                 backs: Backs) -> PromotionResult:
    """Gates first (code), then wording (model or Rule: line), then a live re-check, then one write."""
    result = PromotionResult()
    needed = config.close.confirmations
    found = gates.eligible(lessons.parse(memory.read("lessons")), backs, needed)
    first = found.candidates
    result.not_promoted += found.blocked
    result.unbacked = found.unbacked
    if not first:
        result.lines = list(found.blocked)
        return result
    texts = gates.offline_texts(first)
    conflicts: dict[str, list[tuple[str, str]]] = {}
    if model is not None:
        texts, conflicts = model.rules(first, rules.parse(memory.read("rules")).proven, texts)
    # Re-read the live files right before writing: skip whatever changed or vanished meanwhile.
    lessons_doc, rules_doc = lessons.parse(memory.read("lessons")), rules.parse(memory.read("rules"))
    # Rendering keeps only what parses: with format problems a rewrite would drop text, so don't promote.
    damaged = [name for name, doc in (("LESSONS", lessons_doc), ("RULES", rules_doc)) if doc.problems]
    if damaged:
        result.not_promoted.append(f"no promotion: {' and '.join(damaged)} has format problems; run `gitmem check`")
        result.lines = list(result.not_promoted)
        return result
    still: list[gates.Candidate] = []
    unjudged: set[str] = set()
    for candidate in first:
        if lessons_doc.find(candidate.lesson.id) is candidate.lesson:
            # Read again unchanged: the one object of an unchanged lesson (`once.SameEntries`), whose gate this
            # `backs` judged a moment ago, or read back from the memo (1,100 eligible lessons at 100x, most of
            # them waiting for room in RULES): those read back are judged when planned (`_plan_judged`).
            still.append(candidate)
            if candidate.lesson.id in found.read_back:
                unjudged.add(candidate.lesson.id)
            continue
        why, live = gates.rechecked(candidate, lessons_doc, backs, needed)
        if why or live is None:
            result.not_promoted.append(f"{candidate.lesson.id} · {candidate.lesson.title}: skipped, {why}")
            continue
        still.append(live)

    def plan(candidates: list[gates.Candidate]) -> gates.Plan:
        return gates.plan_promotions(candidates, rules_doc, texts=texts, conflicts=conflicts,
                                     max_promotions=config.close.max_promotions,
                                     max_rules=config.limits.proven_rules_max)

    planned = _plan_judged(still, unjudged, plan, backs, needed, result)
    file_conflicts(memory, planned, texts, rules_doc, result)
    result.rules_full = planned.full
    result.not_promoted += planned.notes
    if planned.promote:
        new_rules, new_lessons = gates.apply(rules_doc, lessons_doc, planned.promote, today)
        refused = write_together(memory, {"lessons": lessons.render(new_lessons), "rules": rules.render(new_rules)})
        if refused:
            result.refused = f"promotions refused by the checks: {refused}"
            result.not_promoted.append(result.refused)
            planned.promote = []
    for item in planned.promote:
        result.promoted.append({"rule": item.rule.id, "lesson": item.lesson_id, "text": item.rule.text,
                                "cycles": list(item.rule.cycles), "retired": list(item.retired)})
    lines = [f"{item.rule.id} · {item.rule.text} (from {item.lesson_id})"
             + (f"; retired {', '.join(item.retired)} (superseded)" if item.retired else "")
             for item in planned.promote]
    lines += planned.notes + result.not_promoted          # a note in both is kept once, where notes put it
    if planned.proposals:
        lines.append("to make room, retire or supersede: " + "; ".join(planned.proposals))
    result.lines = list(dict.fromkeys(lines))
    return result


def _plan_judged(candidates: list[gates.Candidate], unjudged: set[str],
                 plan: Callable[[list[gates.Candidate]], gates.Plan], backs: Backs, needed: int,
                 result: PromotionResult) -> gates.Plan:
    """The plan for `candidates`, in which every lesson promoted had its gate judged in this process.

    A gate read back from the memo (`unjudged`) stands for a lesson that waits, but never promotes one alone: the
    memo lives outside `.git/gitmem`, where the agent may write (with the sandbox off), so the lessons the plan
    would promote are judged now, and the plan is made again without those the gates no longer pass (or with the
    cycles that count now). Only those are judged: at most `max_promotions` a plan, never the lessons waiting."""
    candidates = list(candidates)
    unjudged = set(unjudged)
    while True:
        planned = plan(candidates)
        judged_again = [item.lesson_id for item in planned.promote if item.lesson_id in unjudged]
        changed = False
        for lesson_id in judged_again:
            unjudged.discard(lesson_id)
            at = next(i for i, candidate in enumerate(candidates) if candidate.lesson.id == lesson_id)
            lesson, kept_cycles = candidates[at].lesson, candidates[at].cycles
            judged = gates.gate(lesson, backs, needed)
            if judged.why is None and judged.cycles == kept_cycles:
                continue
            changed = True
            if judged.why is None:
                candidates[at] = gates.Candidate(lesson, judged.cycles)
            else:
                del candidates[at]
                result.not_promoted.append(f"{lesson.id} · {lesson.title}: not eligible, {judged.why}")
        if not changed:
            return planned


def file_conflicts(memory: MemoryWriter, planned: gates.Plan, texts: dict[str, str], rules_doc: rules.RulesDoc,
                   result: PromotionResult) -> None:
    """A contradiction no Supersedes line settles goes to the human; the close does not pick a side."""
    pending = {d.title: d.id for d in decisions.parse(memory.read("decisions")).awaiting}
    contradicted: dict[str, list[str]] = {}
    for candidate, rule_id, why in planned.conflicts:
        lesson = candidate.lesson
        contradicted.setdefault(lesson.id, []).append(rule_id)
        title = f"Rule conflict: {lesson.id} vs {rule_id}"
        if title not in pending:
            existing = rules_doc.find(rule_id)
            item = memory.ask_decision(
                title=title, cycle=memory.workspace.last_log_cycle(),
                context=f"{lesson.id} would become the rule: {texts.get(lesson.id, '')}\n"
                        f"{rule_id} says: {existing.text if existing else '?'}\n"
                        f"Why they conflict: {why or 'unstated'}",
                options=f"supersede {rule_id} | keep {rule_id} and retire {lesson.id} | reword {lesson.id}",
                recommendation=f"if {lesson.id} is right, add `- Supersedes: {rule_id}` to it and the next close "
                               f"promotes it; otherwise retire {lesson.id}")
            pending[title] = item.id
            result.decisions_filed.append(item.id)
            said = f"filed {item.id} for the human"
        else:
            said = f"{pending[title]} already asks the human"
        planned.notes[planned.conflict_notes[lesson.id]] = gates.conflict_note(lesson, contradicted[lesson.id],
                                                                               said)
