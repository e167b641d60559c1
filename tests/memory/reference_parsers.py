"""The memory parsers as they were before issue 31 made them fast: one Python step per line, every field read
at parse time. Kept only as the reference that tests/memory/test_parse_equivalence.py holds the fast ones to;
nothing in gitmem imports this module.

Each function returns plain data (tuples of the values every reader sees) so that the old and the new results
compare with `==`, field by field, line by line.
"""
from __future__ import annotations

import re

from gitmem import codes
from gitmem.memory import decisions, lessons
from gitmem.memory.decoding import decode_lines
from gitmem.memory.fences import FENCE_MARKS
from gitmem.memory.fields import Field
from gitmem.memory.lines import strip_trailing_blank
from gitmem.memory.problems import Problem
from gitmem.memory.sections import Section, headed, heading_level, title_problem

_FIELD_RE = re.compile(r"^[-*] ([A-Z][A-Za-z ]{0,30}?):(?: (.*)|)$")


def split_sections(lines: tuple[str, ...] | list[str], level: int, first_line: int = 1, *,
                   in_fence: bool = False) -> tuple[list[str], list[Section]]:
    preamble: list[str] = []
    sections: list[Section] = []
    title: str | None = None
    start = 0
    body: list[str] = []

    def close() -> Section:
        kept = strip_trailing_blank(body)
        return Section(title, start, start + len(kept), tuple(body))  # type: ignore[arg-type]

    for offset, line in enumerate(lines):
        if line.startswith(FENCE_MARKS):
            in_fence = not in_fence
        found = 0 if in_fence else heading_level(line)
        if found and found <= level:
            if title is not None:
                sections.append(close())
                title = None
            if found == level:
                title, start, body = line[level + 1:].strip(), first_line + offset, []
                continue
        if title is None:
            preamble.append(line)
        else:
            body.append(line)
    if title is not None:
        sections.append(close())
    return preamble, sections


def parse_fields(body: tuple[str, ...] | list[str], first_line: int) -> tuple[Field, ...]:
    fields: list[Field] = []
    key: str | None = None
    value: list[str] = []
    start = end = 0
    for offset, line in enumerate(body):
        number = first_line + offset
        match = _FIELD_RE.match(line)
        if match:
            if key is not None:
                fields.append(Field(key, "\n".join(value), start, end))
            key, value, start, end = match.group(1), [(match.group(2) or "").strip()], number, number
        elif key is not None and line.startswith("  ") and line.strip():
            value.append(line.strip())
            end = number
        elif key is not None:
            fields.append(Field(key, "\n".join(value), start, end))
            key = None
    if key is not None:
        fields.append(Field(key, "\n".join(value), start, end))
    return tuple(fields)


Entry = tuple[object, ...]


def decisions_parse(text: str) -> tuple[object, ...]:
    """(preamble, pending, resolved, section lines, problems, section preambles), each decision as `entry`."""
    lines = decode_lines(text)
    preamble, sections = split_sections(lines, 2)
    problems: list[Problem] = []
    problems += title_problem(preamble, decisions.TITLE)
    names = [s.title for s in sections]
    if names != [decisions.PENDING, decisions.RESOLVED]:
        problems.append(Problem.of(codes.DECISIONS_SECTIONS, sections[0].line if sections else 1,
                                   pending=decisions.PENDING, resolved=decisions.RESOLVED,
                                   found=", ".join(names) or "none"))
    found: dict[str, list[Entry]] = {decisions.PENDING: [], decisions.RESOLVED: []}
    section_lines: dict[str, int] = {}
    section_preambles: dict[str, tuple[str, ...]] = {}
    for section in sections:
        if section.title not in found or section.title in section_lines:
            continue
        section_lines[section.title] = section.line
        inner_preamble, items = split_sections(section.body, 3, section.body_start)
        section_preambles[section.title] = tuple(inner_preamble)
        for item, parsed in headed(items, decisions.parse_heading, problems,
                                   code=codes.DECISION_HEADING_MALFORMED, marker="###", what="decision"):
            found[section.title].append((parsed[0], parsed[1], section.title, item.body, item.line, item.end,
                                         parse_fields(item.body, item.body_start)))
    return (tuple(preamble), tuple(found[decisions.PENDING]), tuple(found[decisions.RESOLVED]), section_lines,
            tuple(problems), section_preambles)


def decisions_doc(doc: decisions.DecisionsDoc) -> tuple[object, ...]:
    """A parsed DECISIONS as `decisions_parse` gives it."""
    def entry(item: decisions.Decision) -> Entry:
        return (item.id, item.title, item.section, item.body, item.line, item.end, item.fields)

    return (doc.preamble, tuple(map(entry, doc.pending)), tuple(map(entry, doc.resolved)), doc.section_lines,
            doc.problems, doc.section_preambles)


def lessons_parse(text: str) -> tuple[object, ...]:
    """(preamble, lessons, problems), each lesson as (id, title, body, line, end, fields)."""
    lines = decode_lines(text)
    preamble, sections = split_sections(lines, 2)
    problems: list[Problem] = []
    problems += title_problem(preamble, lessons.TITLE)
    found: list[Entry] = []
    for section, parsed in headed(sections, lessons.parse_heading, problems, code=codes.LESSON_HEADING_MALFORMED,
                                  marker="##", what="lesson"):
        found.append((parsed[0], parsed[1], section.body, section.line, section.end,
                      parse_fields(section.body, section.body_start)))
    return tuple(preamble), tuple(found), tuple(problems)


def lessons_doc(doc: lessons.LessonsDoc) -> tuple[object, ...]:
    """A parsed LESSONS as `lessons_parse` gives it."""
    return (doc.preamble, tuple((item.id, item.title, item.body, item.line, item.end, item.fields)
                                for item in doc.lessons), doc.problems)
