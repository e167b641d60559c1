"""What a cycle may not do to memory, and how the runner undoes it.

A cycle may not edit RULES' proven or retired rules (only the daily close promotes and retires), resolve or
rewrite decisions (only humans answer), rewrite LOG (append-only), delete lessons or edit their Happened and
Confirmed lines (they are history), or mark a lesson promoted (the close's to do).
Each forbidden change is reverted in the file while the rest of the agent's work in that file is kept, and
one note per revert goes to the LOG entry's Evidence. Pure text in, text out: no git, no files.
"""
from __future__ import annotations

import functools
from collections import Counter
from dataclasses import dataclass, field, replace

from gitmem.memory import decisions, lessons, log, rules
from gitmem.memory.decoding import decode_lines, encoded
from gitmem.memory.fields import render_field
from gitmem.memory.lines import strip_trailing_blank
from gitmem.memory.lookalike import reads_as_field, reads_as_rule

# Every note starts with one of these: the runner writes the notes into the LOG entry's Evidence as
# `runner: <note>`, and `is_revert_note` finds them there again.
REVERT_VERBS = ("reverted", "restored", "moved")


def is_revert_note(line: str) -> bool:
    """An Evidence line (stripped) recording a forbidden memory edit undone: the runner's own note
    (`runner: <one of REVERT_VERBS> …`), or a hand-written line that says "reverted". The daily close lists
    them (gitmem.close.day_report.reverts); `gitmem report` counts them (gitmem.report.evidence)."""
    lowered = line.lower()
    if lowered.startswith("runner:"):
        return lowered[7:].lstrip().startswith(REVERT_VERBS)
    return "reverted" in lowered


@dataclass
class Enforcement:
    texts: dict[str, str] = field(default_factory=dict)     # role -> corrected text, only for reverted files
    notes: list[str] = field(default_factory=list)          # one line per revert, for LOG Evidence


def enforce(old: dict[str, str | None], new: dict[str, str | None], *, promotes: bool = False) -> Enforcement:
    """`old` is memory at HEAD, `new` the work tree after the agent ran; both keyed by role. `promotes`: the writer
    is the daily close, which may mark a lesson promoted."""
    result = Enforcement()
    lesson_fixer = functools.partial(_lessons, promotes=promotes)
    for role, fixer in (("rules", _rules), ("decisions", _decisions), ("log", _log), ("lessons", lesson_fixer)):
        before, after = old.get(role), new.get(role)
        if before is None or after == before:
            continue
        if after is None:
            result.texts[role] = before
            result.notes.append(f"restored {role.upper()} file the agent deleted")
            continue
        fixed, notes = fixer(before, after)
        if notes:
            result.texts[role] = fixed
            result.notes.extend(notes)
    return result


def _rules_start(lines: tuple[str, ...]) -> int | None:
    return next((i for i, line in enumerate(lines) if line.strip() == f"## {rules.PROVEN}"), None)


def _rules(before: str, after: str) -> tuple[str, list[str]]:
    old, new = rules.parse(before), rules.parse(after)
    new_lines, old_lines = decode_lines(after), decode_lines(before)
    cut, start = _rules_start(new_lines), _rules_start(old_lines)
    head = new_lines[:cut] if cut is not None else new_lines
    forged = _rule_lookalikes(head, old_lines[:start] if start is not None else old_lines)
    same_rules = [r.content() for r in old.all] == [r.content() for r in new.all]
    if same_rules and not forged:
        return after, []
    notes = []
    if forged:
        head = tuple(line for at, line in enumerate(head) if at not in forged)
        notes.append(f"reverted {len(forged)} line(s) the agent added to RULES' free text that read as rules (only "
                     f"the daily close adds rules)")
    if same_rules:
        return "\n".join([*head, *(new_lines[cut:] if cut is not None else ())]), notes
    changed = sorted({r.id for r in old.all} ^ {r.id for r in new.all}
                     | {r.id for r in new.all if (o := old.find(r.id)) is None or o.content() != r.content()})
    # Keep the agent's free text above `## Proven rules`; take the rule sections from HEAD byte for byte.
    tail = old_lines[start:] if start is not None else ("",)
    text = "\n".join([*strip_trailing_blank(head), "", *tail])
    return text, [*notes, f"reverted edits to proven/retired rules {', '.join(changed)} in RULES (only the daily "
                           f"close changes them)"]


def _rule_lookalikes(head: tuple[str, ...], old_head: tuple[str, ...]) -> set[int]:
    """The offsets in `head`, the free text above `## Proven rules`, of the lines the agent added that a reader
    takes for a rule (`- R-09 · … (human)`: GitHub's page and every prompt show it as one; gitmem.memory.lookalike).
    A line the free text held at HEAD stays, as often as it was there."""
    held = Counter(line for at, line in enumerate(old_head) if reads_as_rule(line, previous=_above(old_head, at)))
    found: set[int] = set()
    for at, line in enumerate(head):
        if reads_as_rule(line, previous=_above(head, at)):
            if held[line]:
                held[line] -= 1
            else:
                found.add(at)
    return found


def _above(lines: tuple[str, ...], at: int) -> str:
    """The line above `lines[at]`, or "" for the first: what tells a line's own start from a continuation."""
    return lines[at - 1] if at else ""


def _decisions(before: str, after: str) -> tuple[str, list[str]]:
    old, new = decisions.parse(before), decisions.parse(after)
    notes: list[str] = []
    new_pending = {d.id: d for d in new.pending}
    pending: list[decisions.Decision] = []
    for item in old.pending:
        current = new.find(item.id)
        if current is None:
            notes.append(f"restored decision {item.id}, which the agent deleted")
        elif item.is_answered:         # the human's answer in place (rules 4) stands as written, where written
            if current.content() != item.content():
                notes.append(f"restored the human's answer to {item.id} as written")
            pending.append(item)
            continue
        elif current.section == decisions.RESOLVED:
            notes.append(f"reverted the agent's resolution of {item.id} (only humans answer decisions)")
        elif _holds_answer(current, before=item):
            notes.append(f"reverted the agent's answer to {item.id} (only humans answer decisions)")
            pending.append(_unanswered(current))
            continue
        pending.append(new_pending.get(item.id, item))
    old_ids = {d.id for d in old.all}
    asked = []                         # new questions go on top of Pending (rules 4), as `decision ask` puts them
    for item in new.pending:
        if item.id in old_ids:
            continue
        if _holds_answer(item):
            notes.append(f"took the answer out of {item.id}: the agent asked it answered (only humans answer)")
            item = _unanswered(item)
        asked.append(item)
    pending[:0] = asked
    for item in old.resolved:
        current = new.find(item.id)
        if current is None or current.section != decisions.RESOLVED or current.content() != item.content():
            notes.append(f"restored resolved decision {item.id} as the human answered it")
    for item in new.resolved:
        if item.id not in old_ids:
            pending.append(_unanswered(item))
            notes.append(f"moved {item.id} back to Pending: the agent wrote it as resolved (only humans answer)")
    if not notes:
        return after, []
    doc = decisions.DecisionsDoc(new.preamble, tuple(pending), old.resolved, new.section_lines, new.problems,
                                 new.section_preambles or old.section_preambles)
    return decisions.render(doc), notes


def _holds_answer(item: decisions.Decision, *, before: decisions.Decision | None = None) -> bool:
    """Whether a Pending decision carries an answer in place, complete or half written, or a line that reads as
    one to the human on GitHub and to the next cycle's model (`- Аnswer:` with a Cyrillic А, `- **Answer**:`, a
    nested `  - Answer:` the parser joins to the field above, `#### Answer:`, `- <b>Answer</b>:`) that `before`, the
    decision at HEAD, did not hold."""
    if item.answer_in_place or item.answer_incomplete:
        return True
    held = {item.body[offset] for offset in _answer_lines(before)} if before is not None else set()
    return any(item.body[offset] not in held for offset in _answer_lines(item))


def _answer_lines(item: decisions.Decision) -> set[int]:
    """The offsets in `item.body` of each line a reader takes for an `Answer` or `Answered` field, however it is
    spelled (gitmem.memory.lookalike), with the indented lines that continue it. An indented line that continues
    another field (`- Context: …` then `  Answer: 42 as a string`) is that field's text, not an answer."""
    found: set[int] = set()
    continuing = False
    for offset, line in enumerate(item.body):
        if any(reads_as_field(line, key, previous=_above(item.body, offset)) for key in ("Answer", "Answered")):
            found.add(offset)
            continuing = True
        elif continuing and line.startswith("  ") and line.strip():
            found.add(offset)
        else:
            continuing = False
    return found


def _unanswered(item: decisions.Decision) -> decisions.Decision:
    drop = _answer_lines(item)
    body = tuple(line for offset, line in enumerate(item.body) if offset not in drop)
    return replace(item, section=decisions.PENDING, body=body)


# What the note calls each way a LOG change is not an append (gitmem.memory.log.judge_append).
_LOG_FAULTS = {log.REWRITTEN: "a rewrite of LOG", log.APPENDED_TO_ENTRY: "text added to an old LOG entry",
               log.IN_OPEN_FENCE: "text added inside a code fence the old LOG leaves open"}


def _log(before: str, after: str) -> tuple[str, list[str]]:
    """LOG as HEAD holds it plus the agent's new entries, when the change is not an append as `check` judges
    it: a line added to HEAD's last entry counts as much as an edited old line."""
    verdict = log.append_verdict(encoded(before), encoded(after))
    if verdict.ok:
        return after, []
    old_headings = {entry.heading() for entry in log.parse(before).entries}
    text = before
    kept = 0
    for entry in log.parse(after).entries:
        if entry.heading() not in old_headings:
            text = log.append_entry(text, entry)
            kept += 1
    return text, [f"reverted {_LOG_FAULTS[verdict.variant]} at line {verdict.line} (LOG is append-only); kept "
                  f"{kept} new entr{'y' if kept == 1 else 'ies'}"]


def _lessons(before: str, after: str, *, promotes: bool) -> tuple[str, list[str]]:
    old, new = lessons.parse(before), lessons.parse(after)
    present = {lesson.id for lesson in new.lessons}
    missing = [lesson for lesson in old.lessons if lesson.id not in present]
    doc, notes = lessons.LessonsDoc(new.preamble, new.lessons, new.problems), []
    for lesson in new.lessons:
        known = old.find(lesson.id)
        if known == lesson:          # unchanged, at the same lines (3,000 lessons at 100x): nothing to judge
            continue
        doc, said = _lesson_history(doc, known, lesson, promotes=promotes)
        notes += said
    if missing:
        merged = sorted([*doc.lessons, *missing], key=lambda lesson: lesson.number)
        doc = lessons.LessonsDoc(doc.preamble, tuple(merged), doc.problems)
        notes.append(f"restored lesson{'s' if len(missing) > 1 else ''} {', '.join(m.id for m in missing)} "
                     f"(lessons are never deleted; retire them instead)")
    return (lessons.render(doc), notes) if notes else (after, [])


_EVENTS = ("Happened", "Confirmed")


def _lesson_history(doc: lessons.LessonsDoc, old: lessons.Lesson | None, new: lessons.Lesson, *,
                    promotes: bool) -> tuple[lessons.LessonsDoc, list[str]]:
    """A lesson's Happened and Confirmed lines are its history, which the close counts: a cycle adds Confirmed
    lines after them, never edits or drops one (else the old lesson is put back with the new lines on top). Its
    `promoted` status is the close's to write (else the status it had, `open` for a new lesson, is put back)."""
    notes: list[str] = []
    if old is not None:
        was = [(f.key, f.value) for f in old.fields if f.key in _EVENTS]
        now = [(f.key, f.value) for f in new.fields if f.key in _EVENTS]
        if now[:len(was)] != was:
            added = Counter(now) - Counter(was)
            body = list(old.body)
            for key, value in now:
                if key == "Confirmed" and added[(key, value)] > 0:
                    added[(key, value)] -= 1
                    body = list(lessons.insert_before_status(tuple(body), render_field(key, value)))
            doc = lessons.replace_lesson(doc, replace(new, body=tuple(body)))
            notes.append(f"restored {new.id}'s Happened and Confirmed lines, which the agent edited or dropped (a "
                         "lesson's history only grows); its new Confirmed lines are kept")
    status, was_status = new.status, old.status if old is not None else "open"
    if not promotes and status != was_status and lessons.promoted_rule(status) is not None:
        doc = lessons.set_status(doc, new.id, was_status)
        notes.append(f"reverted {new.id}'s status `{status}` to `{was_status}` (only the daily close promotes)")
    return doc, notes
