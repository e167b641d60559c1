"""GM5xx: RULES holds one-line proven rules with provenance, within limits; rules retire, never vanish."""
from __future__ import annotations

from collections.abc import Collection

from gitmem import codes
from gitmem.checks.inputs import CheckInput, unreadable
from gitmem.checks.rule_inputs import decoded, duplicate_ids
from gitmem.checks.violation import Violation, from_problem
from gitmem.memory import lessons, rules


def check(inp: CheckInput, earlier: Collection[Violation] = ()) -> list[Violation]:
    skip = unreadable(earlier)
    cfg = inp.config
    path = cfg.path("rules")
    if path in skip:
        return []
    new_text = decoded(inp.new, path)
    if new_text is None:
        return []
    doc = rules.parse(new_text)
    found = [from_problem(path, p, new_text) for p in doc.problems]
    found += duplicate_ids(path, doc.all, codes.RULE_ID_DUPLICATE, doc.next_id())
    if doc.line_count > cfg.limits.rules_max_lines:
        found.append(Violation.of(codes.RULES_OVER_LIMIT, path, doc.line_count, "lines", count=doc.line_count,
                                  limit=cfg.limits.rules_max_lines))
    if len(doc.proven) > cfg.limits.proven_rules_max:
        line = doc.proven[cfg.limits.proven_rules_max].line
        found.append(Violation.of(codes.RULES_OVER_LIMIT, path, line, "proven", count=len(doc.proven),
                                  limit=cfg.limits.proven_rules_max))
    lessons_path = cfg.path("lessons")
    lessons_text = decoded(inp.new, lessons_path)
    known = {lesson.id for lesson in lessons.parse(lessons_text).lessons} if lessons_text else set()
    for item in doc.all:
        # An unreadable LESSONS (GM902) is reported once; it does not make every provenance "missing".
        if item.lesson and item.lesson not in known and lessons_path not in skip:
            found.append(Violation.of(codes.RULE_LESSON_MISSING, path, item.line, id=item.id, lesson=item.lesson))
    old_text = decoded(inp.old, path) if inp.old is not None else None
    if old_text is not None:
        old = rules.parse(old_text)
        now_ids = {r.id for r in doc.all}
        anchor = doc.section_lines.get(rules.RETIRED, doc.section_lines.get(rules.PROVEN, 1))
        for gone in old.proven:
            if gone.id not in now_ids:
                found.append(Violation.of(codes.RULE_VANISHED, path, anchor, "proven", id=gone.id))
        for gone in old.retired:
            if gone.id not in now_ids:
                found.append(Violation.of(codes.RULE_VANISHED, path, anchor, "retired", id=gone.id))
        old_retired = {r.id: r for r in old.retired}
        for item in doc.proven:
            if item.id in old_retired:
                found.append(Violation.of(codes.RULE_ID_DUPLICATE, path, item.line, "reused", id=item.id,
                                          next_id=doc.next_id()))
    return found
