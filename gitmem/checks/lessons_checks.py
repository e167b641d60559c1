"""GM4xx: lessons are complete, confirmed by later cycles only, and never deleted."""
from __future__ import annotations

from collections.abc import Collection

from gitmem import codes
from gitmem.checks import written_times
from gitmem.checks.inputs import CheckInput, unreadable
from gitmem.checks.rule_inputs import duplicate_ids, texts
from gitmem.checks.violation import Violation, from_problem
from gitmem.memory import lessons
from gitmem.memory.decoding import decode_text
from gitmem.memory.fields import fields_named
from gitmem.memory.lessons import Lesson


def check(inp: CheckInput, earlier: Collection[Violation] = ()) -> list[Violation]:
    skip = unreadable(earlier)
    loaded = texts(inp, "lessons", skip)
    if loaded is None:
        return []
    path, old_text, new_text = loaded
    doc = lessons.parse(new_text)
    old_doc = lessons.parse(old_text) if old_text is not None else None
    # A file the change left as it was is judged whole, as committed (`check --worktree` asks so).
    written = list(doc.lessons) if old_text == new_text else changed_lessons(doc, old_doc)
    found = [from_problem(path, p) for p in doc.problems]
    found += duplicate_ids(path, doc.lessons, codes.LESSON_DUPLICATE_ID, doc.next_id())
    for lesson in written:
        found += lesson_rules(path, lesson)
    if old_doc is not None:
        present = {lesson.id for lesson in doc.lessons}
        for gone in old_doc.lessons:
            if gone.id not in present:
                found.append(Violation.of(codes.LESSON_VANISHED, path, 1, id=gone.id))
    found += _dated_ahead(inp, path, old_doc, written)
    return found


def changed_lessons(doc: lessons.LessonsDoc, old_doc: lessons.LessonsDoc | None) -> list[Lesson]:
    """The lessons of `doc` this change wrote: new ones, and those whose heading or body differ from every old
    lesson of their ID. A lesson the change left as it was (wherever it now sits) was judged by the change that
    wrote it, as `rule_inputs.changed_span` takes LOG's old entries: a close that marks one of 3,000 lessons
    (100x) promoted judges that one, not all of them."""
    if old_doc is None:
        return list(doc.lessons)
    # A lesson an earlier parse handed over is that parse's own object (`once.SameEntries`, `lessons.parse`):
    # only the others are compared, with the old lessons of their ID, not hashed body by body.
    unchanged = set(map(id, old_doc.lessons))
    others = [lesson for lesson in doc.lessons if id(lesson) not in unchanged]
    ids = {lesson.id for lesson in others}
    before: dict[str, list[Lesson]] = {}
    for lesson in old_doc.lessons:
        if lesson.id in ids:
            before.setdefault(lesson.id, []).append(lesson)
    return [lesson for lesson in others
            if not any(old.title == lesson.title and old.body == lesson.body for old in before.get(lesson.id, ()))]


def _dated_ahead(inp: CheckInput, path: str, old_doc: lessons.LessonsDoc | None,
                 written: list[Lesson]) -> list[Violation]:
    """GM730: a `Happened` or `Confirmed` line new in this change dated after the day anywhere on Earth by the
    clock that judges it. A line a merge brings from another parent was judged by the commit that wrote it. Only
    the lessons the change wrote can hold a new line."""
    if not written or not written_times.judges(inp):
        return []
    ids = {lesson.id for lesson in written}
    sides = [old_doc.lessons if old_doc is not None else (),
             *(lessons.parse(decode_text(other.read(path) or b"")).lessons for other in inp.others)]
    known = {(item.id, f.value) for side in sides for item in side if item.id in ids for f in item.fields}
    found = []
    for lesson in written:
        for item in [*fields_named(lesson.fields, "Happened"), *(f for f, _ in lesson.confirmations)]:
            event = lessons.parse_event(item)
            if event is None or (lesson.id, item.value) in known:
                continue
            ahead = written_times.ahead_violation(inp, path, item.line, f"{lesson.id}'s {item.key} line",
                                                  day=event.day)
            if ahead is not None:
                found.append(ahead)
    return found


def lesson_rules(path: str, lesson: Lesson) -> list[Violation]:
    found: list[Violation] = []
    missing = [k for k in ("Happened", "Why", "Change") if not (lesson.get(k) or "").strip()]
    if missing:
        found.append(Violation.of(codes.LESSON_INCOMPLETE, path, lesson.line, id=lesson.id, missing=", ".join(missing)))
    happened = lesson.happened
    if lesson.get("Happened") and happened is None:
        item = next(f for f in lesson.fields if f.key == "Happened")
        variant = "digits" if lessons.event_with_other_digits(item) else "happened"
        found.append(Violation.of(codes.LESSON_INCOMPLETE, path, item.line, variant, id=lesson.id, field="Happened"))
    counted: set[int] = set()
    for item, event in lesson.confirmations:
        if event is None:
            variant = "digits" if lessons.event_with_other_digits(item) else "malformed"
            found.append(Violation.of(codes.LESSON_CONFIRMATION_INVALID, path, item.line, variant))
            continue
        if happened is not None and event.cycle <= happened.cycle:
            found.append(Violation.of(codes.LESSON_CONFIRMATION_INVALID, path, item.line, "not_later",
                                      cycle=event.cycle, lesson_cycle=happened.cycle))
        elif event.cycle in counted:
            found.append(Violation.of(codes.LESSON_CONFIRMATION_INVALID, path, item.line, "repeated",
                                      cycle=event.cycle))
        counted.add(event.cycle)
    status = lesson.status
    if not lessons.valid_status(status):
        line = next((f.line for f in lesson.fields if f.key == "Status"), lesson.line)
        variant = "digits" if lessons.status_with_other_digits(status) else ""
        found.append(Violation.of(codes.LESSON_STATUS_INVALID, path, line, variant, id=lesson.id, status=status))
    return found
