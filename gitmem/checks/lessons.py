"""GM4xx: lessons are complete, confirmed by later cycles only, and never deleted."""
from __future__ import annotations

from gitmem.checks import CheckInput
from gitmem.checks.common import duplicate_ids, texts
from gitmem.checks.violation import Violation, from_problem
from gitmem.memory import lessons
from gitmem.memory.lessons import Lesson


def check(inp: CheckInput, skip: set[str]) -> list[Violation]:
    loaded = texts(inp, "lessons", skip)
    if loaded is None:
        return []
    path, old_text, new_text = loaded
    doc = lessons.parse(new_text)
    found = [from_problem(path, p) for p in doc.problems]
    found += duplicate_ids(path, doc.lessons, "GM401", doc.next_id())
    for lesson in doc.lessons:
        found += lesson_rules(path, lesson)
    if old_text is not None:
        present = {lesson.id for lesson in doc.lessons}
        for gone in lessons.parse(old_text).lessons:
            if gone.id not in present:
                found.append(Violation(path, 1, "GM405", f"lesson {gone.id} disappeared; lessons are history",
                                       "retire it with `- Status: retired — <reason>` instead"))
    return found


def lesson_rules(path: str, lesson: Lesson) -> list[Violation]:
    found: list[Violation] = []
    missing = [k for k in ("Happened", "Why", "Change") if not (lesson.get(k) or "").strip()]
    if missing:
        found.append(Violation(path, lesson.line, "GM402", f"{lesson.id} lacks {', '.join(missing)}"))
    happened = lesson.happened
    if lesson.get("Happened") and happened is None:
        line = next(f.line for f in lesson.fields if f.key == "Happened")
        found.append(Violation(path, line, "GM402", f"{lesson.id}: Happened must read `YYYY-MM-DD (cycle N) — what`"))
    counted: set[int] = set()
    for item, event in lesson.confirmations:
        if event is None:
            found.append(Violation(path, item.line, "GM403",
                                   "a confirmation must read `YYYY-MM-DD (cycle M) — evidence`"))
            continue
        if happened is not None and event.cycle <= happened.cycle:
            found.append(Violation(path, item.line, "GM403",
                                   f"confirmation from cycle {event.cycle} is not later than the lesson's cycle "
                                   f"{happened.cycle}"))
        elif event.cycle in counted:
            found.append(Violation(path, item.line, "GM403", f"cycle {event.cycle} already confirmed this lesson"))
        counted.add(event.cycle)
    status = lesson.status
    if not lessons.valid_status(status):
        line = next((f.line for f in lesson.fields if f.key == "Status"), lesson.line)
        found.append(Violation(path, line, "GM404", f"{lesson.id}: bad Status `{status}`",
                               "use `open`, `promoted R-NN` or `retired — <reason>`"))
    return found
