"""Promotion: the only code that adds proven rules. The gates are code; a model may only word a rule.

A lesson is eligible when it is open and at least `close.confirmations` of its Confirmed lines count. A line
counts when it names a cycle later than the lesson's own, no earlier line names the same cycle, history backs
it (gitmem.close.backing: the commit that added it also logged that cycle), and no line counted before it was
added by the same commit: the cycles one commit brings are one piece of work the human took at once (an
interactive session committed once, a squashed pull request), however many LOG entries it holds. A malformed,
early or repeated line blocks the lesson (the check refuses such lines anyway); a line that history does not
back, or whose commit already confirmed the lesson, just does not count, and the close reports it. Close
reports and NOW plans carry no cycle number, so they can never confirm anything.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import date
from itertools import repeat

from gitmem.close.backing import Backs
from gitmem.close.verdict_memo import KeptGate
from gitmem.memory import lessons, rules
from gitmem.memory.fields import field_line_starts
from gitmem.memory.lessons import Lesson, LessonsDoc
from gitmem.memory.lines import one_line
from gitmem.memory.problems import Problem
from gitmem.memory.rules import Rule, RulesDoc

RULE_MAX_CHARS = 120
NEEDS_RULE = "eligible, needs a rule line"


@dataclass(frozen=True)
class Gate:
    cycles: tuple[int, ...]                # the confirmations that count, in the order written
    why: str | None = None                 # why the lesson is not eligible; None when it is
    unbacked: tuple[str, ...] = ()         # lines history does not back: `cycle N: reason`


def gate(lesson: Lesson, backs: Backs, needed: int) -> Gate:
    """Which confirmations count, and whether that makes the lesson eligible."""
    happened = lesson.happened
    if not lesson.is_open:
        return Gate((), f"its status is `{lesson.status}`")
    if happened is None:
        return Gate((), "its Happened line names no cycle")
    cycles: list[int] = []
    seen: set[int] = set()
    by_commit: dict[str, int] = {}         # the commit that added a counted line: the cycle it counted for
    unbacked: list[str] = []
    for item, event in lesson.confirmations:
        if event is None:
            return Gate((), _NO_CYCLE.format(item.line))
        if event.cycle <= happened.cycle:
            return Gate((), f"cycle {event.cycle} is not later than the lesson's cycle {happened.cycle}")
        if event.cycle in seen:
            return Gate((), f"cycle {event.cycle} confirms it more than once")
        seen.add(event.cycle)
        verdict = backs(lesson, item)
        # Memory outside git has no commits (backing.uncommitted): there each backed line counts.
        first = by_commit.get(verdict.commit) if verdict.ok and verdict.commit else None
        if first is not None:
            unbacked.append(f"cycle {event.cycle}: the commit that added it ({(verdict.commit or '')[:10]}) also "
                            f"added the confirmation of cycle {first}; one commit confirms a lesson once")
        elif verdict.ok:
            cycles.append(event.cycle)
            if verdict.commit:
                by_commit[verdict.commit] = event.cycle
        else:
            unbacked.append(f"cycle {event.cycle}: {verdict.why}")
    if len(cycles) < max(needed, 1):
        return Gate(tuple(cycles), f"{len(cycles)} of {needed} confirmations count", tuple(unbacked))
    return Gate(tuple(cycles), None, tuple(unbacked))


# Why a lesson is not eligible when a Confirmed line names no cycle; the memo keeps it with the line counted from the
# lesson's heading (`_kept`), since the digest it is kept by covers the lesson's text, not where LESSONS holds it.
_NO_CYCLE = "the Confirmed line at line {} names no cycle"
_KEPT_NO_CYCLE = re.compile(re.escape(_NO_CYCLE).replace(r"\{\}", r"\+([0-9]{1,9})"))
_NO_CYCLE_AT = re.compile(re.escape(_NO_CYCLE).replace(r"\{\}", r"([0-9]+)"))


def _kept(result: Gate, lesson: Lesson) -> KeptGate:
    """The gate as the memo keeps it: a line its why names, counted from the lesson's heading (`+N`)."""
    at = _NO_CYCLE_AT.fullmatch(result.why or "")
    why = _NO_CYCLE.format(f"+{int(at[1]) - lesson.line}") if at else result.why
    return result.cycles, why, result.unbacked


def _read_back(kept: KeptGate, lesson: Lesson) -> Gate:
    """A gate the memo kept (`_kept`), its why naming the line where the lesson stands now."""
    cycles, why, unbacked = kept
    at = _KEPT_NO_CYCLE.fullmatch(why or "")
    return Gate(cycles, _NO_CYCLE.format(lesson.line + int(at[1])) if at else why, unbacked)


@dataclass(frozen=True)
class Candidate:
    lesson: Lesson
    cycles: tuple[int, ...]


@dataclass
class Eligibility:
    candidates: list[Candidate] = field(default_factory=list)
    blocked: list[str] = field(default_factory=list)        # open lessons with enough lines, and why not eligible
    unbacked: list[str] = field(default_factory=list)       # Confirmed lines that history does not back
    # The lessons (by id) whose outcome was read back from the memo, not judged in this process: each one promoted
    # is judged first (gitmem.close.promotion), since a memo outside `.git/gitmem` may still be the agent's to write.
    read_back: set[str] = field(default_factory=set)


def eligible(doc: LessonsDoc, backs: Backs, needed: int) -> Eligibility:
    """The eligible lessons, and why each open lesson with enough Confirmed lines is not.

    History is consulted only for open lessons with enough Confirmed lines, in one walk for all of them. A lesson
    with fewer lines that could be Confirmed fields is not read further (`_may_be_hopeful`). A `backs` that keeps
    the outcome of the gates (gitmem.close.backing.Backing) answers for the lessons an earlier close judged and
    nothing has changed for since, with no field of them read; the others' outcomes are kept for the next.
    """
    least = max(needed, 1)
    maybe = [lesson for lesson in doc.lessons if _may_be_hopeful(lesson, least)]
    kept_gates = getattr(backs, "kept_gates", None)
    # By id(lesson): the gates an earlier close judged on the same lessons, from the same verdicts.
    by_id = {id(lesson): lesson for lesson in maybe}
    kept = {found: _read_back(gate, by_id[found]) for found, gate in kept_gates(maybe, needed).items()} \
        if kept_gates else {}
    hopeful = [lesson for lesson in maybe
               if id(lesson) in kept or lesson.is_open and len(lesson.confirmations) >= least]
    prime(backs, [lesson for lesson in hopeful if id(lesson) not in kept])
    keep_gate = getattr(backs, "keep_gate", None)
    out = Eligibility()
    for lesson in hopeful:
        result = kept.get(id(lesson))
        if result is not None:
            out.read_back.add(lesson.id)
        else:
            result = gate(lesson, backs, needed)
            if keep_gate is not None:
                keep_gate(lesson, needed, _kept(result, lesson))
        out.unbacked += [f"{lesson.id} · {lesson.title}: the confirmation of {line} (it does not count)"
                         for line in result.unbacked]
        if result.why:
            out.blocked.append(f"{lesson.id} · {lesson.title}: not eligible, {result.why}")
        else:
            out.candidates.append(Candidate(lesson, result.cycles))
    save_gates = getattr(backs, "save_gates", None)
    if save_gates is not None and len(kept) < len(hopeful):
        save_gates()
    return out


def _may_be_hopeful(lesson: Lesson, least: int) -> bool:
    """Whether the lesson's body has `least` lines that may be `- Confirmed:` fields (a field line starts with
    `- ` or `* ` and its key, `memory.fields.parse_fields`): a bound on its confirmations found without parsing its
    fields. A close asks this of every lesson (3,000 at 100x), and most have fewer."""
    return sum(map(str.startswith, lesson.body, repeat(_CONFIRMED_LINE))) >= least


_CONFIRMED_LINE = field_line_starts("Confirmed")


def prime(backs: Backs, lessons_asked: list[Lesson]) -> None:
    """Let a history-walking `backs` answer for all these lessons' lines in one walk."""
    resolve = getattr(backs, "resolve", None)
    if resolve is not None:
        resolve([(lesson, item) for lesson in lessons_asked for item, _ in lesson.confirmations])


def recheck(candidate: Candidate, doc: LessonsDoc, backs: Backs, needed: int) -> str | None:
    """Re-read gate right before writing: why the candidate must be skipped now, or None if it still stands."""
    return rechecked(candidate, doc, backs, needed)[0]


def rechecked(candidate: Candidate, doc: LessonsDoc, backs: Backs,
              needed: int) -> tuple[str | None, Candidate | None]:
    """`recheck`, and the candidate as it stands in `doc` when it still stands: its gate is judged once."""
    live = doc.find(candidate.lesson.id)
    if live is None:
        return "vanished from LESSONS", None
    if live.content() != candidate.lesson.content():
        return "changed since the close read it", None
    judged = gate(live, backs, needed)
    return judged.why, (Candidate(live, judged.cycles) if judged.why is None else None)


@dataclass(frozen=True)
class Promotion:
    rule: Rule
    lesson_id: str
    retired: tuple[str, ...] = ()


@dataclass
class Plan:
    """What this close will do with each eligible lesson; every lesson lands in exactly one list."""

    promote: list[Promotion] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)          # eligible but not promoted, and why
    conflicts: list[tuple[Candidate, str, str]] = field(default_factory=list)   # (candidate, rule id, why)
    full: bool = False
    full_blocked: int = 0                                   # eligible lessons held back because RULES is full
    proposals: list[str] = field(default_factory=list)      # retirements proposed when RULES is full
    conflict_notes: dict[str, int] = field(default_factory=dict)   # lesson id -> its note in `notes`
    held: dict[str, str] = field(default_factory=dict)      # lesson id -> why it is not promoted (as in `notes`)
    no_room: list[str] = field(default_factory=list)        # the lessons held back because RULES is full

    def hold(self, lesson: Lesson, why: str) -> None:
        """Leave `lesson` out of this close, saying why."""
        self.held[lesson.id] = why
        self.notes.append(f"{lesson.id} · {lesson.title}: {why}")


def rule_text_problem(text: str) -> str | None:
    if not text:
        return NEEDS_RULE
    if len(text) > RULE_MAX_CHARS:
        return f"eligible, but its rule line is {len(text)} characters (at most {RULE_MAX_CHARS})"
    probe = rules.Rule("R-99", text, "from L-0001; cycles 1, 2", rules.PROVEN).render()
    parsed = rules.parse_rule_line(probe, 1, rules.PROVEN)
    if isinstance(parsed, Problem) or parsed.text != text:
        return "eligible, but its rule line does not form a valid `- R-NN · rule (provenance)` line"
    return None


def plan_promotions(candidates: list[Candidate], doc: RulesDoc, *, texts: dict[str, str],
                    conflicts: dict[str, list[tuple[str, str]]], max_promotions: int, max_rules: int) -> Plan:
    """Decide, lesson by lesson, what to promote. `texts` are the one-line rules (Rule: lines or the model's).

    Nothing is truncated: a lesson that cannot be promoted is listed with the reason.
    """
    out = Plan()
    proven = [r.id for r in doc.proven]
    number = max((r.number for r in doc.all), default=0)
    for candidate in candidates:
        lesson = candidate.lesson
        text = one_line(texts.get(lesson.id) or "")
        problem = rule_text_problem(text)
        if problem:
            out.hold(lesson, problem)
            continue
        unsettled = [(rid, why) for rid, why in conflicts.get(lesson.id, []) if rid not in lesson.supersedes]
        if unsettled:
            out.conflicts.extend((candidate, rid, why) for rid, why in unsettled)
            out.conflict_notes[lesson.id] = len(out.notes)
            out.notes.append(conflict_note(lesson, [rid for rid, _ in unsettled]))
            out.held[lesson.id] = "eligible, but contradicts " + ", ".join(rid for rid, _ in unsettled)
            continue
        # A rule is retired only once it is in force: one added by this very close would be added and retired in
        # the same change, which the close's own permissions refuse (and every later close would plan the same).
        arriving = [item.rule.id for item in out.promote if item.rule.id in lesson.supersedes]
        if arriving:
            out.hold(lesson, f"eligible, waiting: it supersedes {', '.join(arriving)}, which this close promotes; "
                             "the next close retires it")
            continue
        if len(out.promote) >= max_promotions:
            out.hold(lesson, f"eligible, waiting (at most {max_promotions} promotions per close)")
            continue
        retiring = tuple(rid for rid in lesson.supersedes if rid in proven)
        if len(proven) - len(retiring) + 1 > max_rules:
            out.full = True
            out.full_blocked += 1
            out.no_room.append(lesson.id)
            out.hold(lesson, f"eligible, but RULES is full ({len(proven)}/{max_rules} proven rules); not promoted")
            continue
        number += 1
        rule = Rule(rules.format_id(number), text,
                    f"from {lesson.id}; cycles {', '.join(str(c) for c in candidate.cycles)}", rules.PROVEN)
        proven = [rid for rid in proven if rid not in retiring] + [rule.id]
        out.promote.append(Promotion(rule, lesson.id, retiring))
    if out.full:
        out.proposals = propose_retirements(doc, out)
    return out


def conflict_note(lesson: Lesson, rule_ids: list[str], filed: str = "a decision is filed for the human") -> str:
    """Why an eligible lesson waits: it contradicts rules, and where the human is asked about it."""
    return f"{lesson.id} · {lesson.title}: eligible, but contradicts {', '.join(rule_ids)}; {filed}"


def propose_retirements(doc: RulesDoc, planned: Plan) -> list[str]:
    """Learned rules still in force, oldest first, as candidates to retire or supersede, each with its reason.

    A rule this very close retires is not proposed; rules a human wrote are the human's call. A rule this close
    adds is proposed only when no older one is in force: its own promotions may be what filled RULES."""
    retiring = {rid for item in planned.promote for rid in item.retired}
    older = [r for r in doc.proven if r.id not in retiring]
    learned = [r for r in older if r.lesson is not None]
    chosen = learned or older or [item.rule for item in planned.promote]
    return [f"{r.id} · {r.text} ({r.provenance}): the oldest learned rule still in force"
            if r.lesson is not None else f"{r.id} · {r.text} ({r.provenance}): the oldest rule still in force"
            for r in chosen[:max(planned.full_blocked, 1)]]


def apply(rules_doc: RulesDoc, lessons_doc: LessonsDoc, promotions: list[Promotion],
          on: date) -> tuple[RulesDoc, LessonsDoc]:
    """Add each rule, retire what it supersedes (with the reason), and mark the lesson promoted."""
    for item in promotions:
        rules_doc = rules.add_proven(rules_doc, item.rule)
        for old in item.retired:
            rules_doc = rules.retire(rules_doc, old, superseded_by=item.rule.id, on=on)
        lessons_doc = lessons.set_status(lessons_doc, item.lesson_id, f"promoted {item.rule.id}")
    return rules_doc, lessons_doc


def offline_texts(candidates: list[Candidate]) -> dict[str, str]:
    """Without a model a rule is the lesson's own `Rule:` line, or nothing."""
    return {c.lesson.id: one_line(c.lesson.get("Rule") or "") for c in candidates}

