"""GM407: a lesson's new `Happened` or `Confirmed` line names the cycle its change's LOG entry had before a merge
or a replay renumbered it.

git runs a merge driver only on a file both sides changed. A `git pull --rebase` (or `git merge`) whose other side
changed LOG but not LESSONS renumbers the replayed side's LOG entries (the driver) and takes its LESSONS as written:
a line that named the replayed entry's cycle now names another writer's, and its confirmation would never count.
The runner's push and `gitmem merge` renumber both; this rule stops the other paths before the push.
"""
from __future__ import annotations

from collections.abc import Collection

from gitmem import codes
from gitmem.checks.inputs import CheckInput, unreadable
from gitmem.checks.log_checks import judged_append
from gitmem.checks.rule_inputs import decoded
from gitmem.checks.violation import Violation
from gitmem.gitio import same_blob
from gitmem.memory import log


def check(inp: CheckInput, earlier: Collection[Violation] = ()) -> list[Violation]:
    path, log_path = inp.config.path("lessons"), inp.config.path("log")
    if inp.old is None or {path, log_path} & unreadable(earlier) or same_blob(inp.old, inp.new, path) \
            or same_blob(inp.old, inp.new, log_path):
        return []
    moved, numbers = _moved_cycles(inp, log_path)
    if not moved:
        return []
    # Only now: a LOG appended by a cycle or a session, the pre-commit path's common change, parses no lesson.
    from gitmem.checks.lessons_checks import changed_lessons
    from gitmem.memory import lessons
    from gitmem.memory.fields import fields_named

    old_text, new_text = decoded(inp.old, path), decoded(inp.new, path)
    if new_text is None:
        return []
    doc = lessons.parse(new_text)
    old_doc = lessons.parse(old_text) if old_text is not None else None
    found = []
    # Lines new against the first parent: a merge's other parent wrote its lines for its own numbering, which the
    # merge changed.
    for lesson in changed_lessons(doc, old_doc):
        before = {f.value for item in (old_doc.lessons if old_doc is not None else ()) if item.id == lesson.id
                  for f in item.fields}
        for item in [*fields_named(lesson.fields, "Happened"), *(f for f, _ in lesson.confirmations)]:
            event = lessons.parse_event(item)
            if item.value in before or event is None or event.cycle not in moved or event.cycle in numbers:
                continue
            found.append(Violation.of(codes.LESSON_CYCLE_RENUMBERED, path, item.line, id=lesson.id, key=item.key,
                                      cycle=event.cycle, now=moved[event.cycle]))
    return found


def _moved_cycles(inp: CheckInput, log_path: str) -> tuple[dict[int, int], set[int]]:
    """({cycle written under: cycle now} of the LOG entries this change appended that a merge or a replay
    renumbered (their `- Merged:` heading), the cycles of every entry it appended). Nothing when LOG is no append
    of the old one (a seal): the LOG rules judge those changes."""
    old, new = inp.old, inp.new.read(log_path)
    if old is None or new is None:
        return {}, set()
    # The LOG rules' own judgement of the append, made once (its prefix proof never copies the 75 MB LOG).
    _, verdict = judged_append(old, log_path, new)
    if not verdict.ok:
        return {}, set()
    moved: dict[int, int] = {}
    numbers: set[int] = set()
    for entry in log.appended_entries(new, verdict):
        if entry.cycle is None:
            continue
        numbers.add(entry.cycle)
        written_as = log.parse_heading(log.as_written(entry)[0])
        if written_as is not None and written_as[1] is not None and written_as[1] != entry.cycle:
            moved[written_as[1]] = entry.cycle
    return moved, numbers
