"""LESSONS.md: every real mistake, what happened, why, and what must change. A lesson is not yet a rule."""
from __future__ import annotations

import re
from dataclasses import dataclass, replace
from datetime import date
from functools import cached_property

from gitmem import codes
from gitmem.memory.decoding import decode_lines
from gitmem.memory.digits import fold_digits, parses_with_ascii_digits
from gitmem.memory.fields import (
    Field,
    IdEntry,
    fields_keyed,
    first_field_value,
    parse_fields,
    render_field,
    without_fields,
)
from gitmem.memory.lines import strip_trailing_blank
from gitmem.memory.once import SameEntries, parsed_once
from gitmem.memory.problems import Problem
from gitmem.memory.resplit import resplit
from gitmem.memory.sections import SEP, Section, headed, split_id_heading, split_sections, title_problem
from gitmem.records import built_whole

TITLE = "# LESSONS"
_ID_RE = re.compile(r"^L-([0-9]{4,18})$")
# `<date> (cycle N) — evidence`; the dash may be an em dash or a plain hyphen.
# The text may also start on the next (continuation) line, after the dash.
_EVENT_RE = re.compile(r"^([0-9]{4}-[0-9]{2}-[0-9]{2})(?: [0-9]{2}:[0-9]{2} \S+)? \(cycle ([0-9]{1,18})\)"
                       r"(?: (?:—|-|–)\s(.*))?$", re.S)
# The date and cycle an event line starts with, as `with_event` rewrites them.
_EVENT_HEAD_RE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}(?: [0-9]{2}:[0-9]{2} \S+)? \(cycle [0-9]{1,18}\)")
# A retirement reason may run on over continuation lines; `open` and `promoted R-NN` are exact.
_STATUS_RE = re.compile(r"^(open|promoted (R-[0-9]{2,})|retired (?:—|-|–) (.+))$", re.S)


@dataclass(frozen=True)
class Event:
    """A dated, cycle-numbered line such as Happened or Confirmed."""

    day: date
    cycle: int
    text: str
    line: int


@dataclass(frozen=True)
class Lesson(IdEntry):
    id: str
    title: str
    body: tuple[str, ...] = ()
    line: int = 0
    end: int = 0

    @property
    def number(self) -> int:
        return int(self.id[2:])

    # Read from the body when first asked, once: the standing check reads a whole LESSONS for its headings only
    # (3,000 lessons at 100x), and a changed body is a new lesson (`replace`), read again.
    @cached_property
    def fields(self) -> tuple[Field, ...]:
        return parse_fields(self.body, self.line + 1)

    # Read once per lesson: a close asks each of LESSONS' lessons (3,000 at 100x) about its events from several
    # steps (the gates, the history of each line, the checks), and the fields of a frozen entry never change.
    # Only the lines of the field asked are read (`fields_keyed`): the gates never need the others.
    @cached_property
    def happened(self) -> Event | None:
        found = fields_keyed(self.body, self.line + 1, "Happened")
        return parse_event(found[0]) if found else None

    @property
    def confirmations(self) -> list[tuple[Field, Event | None]]:
        return list(self._confirmations)

    @cached_property
    def _confirmations(self) -> tuple[tuple[Field, Event | None], ...]:
        return tuple((f, parse_event(f)) for f in fields_keyed(self.body, self.line + 1, "Confirmed"))

    def get(self, key: str) -> str | None:
        """The first `key` field's value, read once, without the other fields (`first_field_value`): the close asks
        1,100 eligible lessons (100x) for their Rule and Supersedes lines, and nothing else of most of them."""
        values = self._values
        if key not in values:
            values[key] = first_field_value(self.body, key)
        return values[key]

    @cached_property
    def _values(self) -> dict[str, str | None]:
        return {}

    @cached_property
    def status(self) -> str:
        return (self.get("Status") or "open").strip()

    @property
    def is_open(self) -> bool:
        return self.status == "open"

    @cached_property
    def supersedes(self) -> tuple[str, ...]:
        return tuple(re.findall(r"R-[0-9]{2,}", self.get("Supersedes") or ""))

    def heading(self) -> str:
        return f"## {self.id}{SEP}{self.title}"


@dataclass(frozen=True)
class LessonsDoc:
    preamble: tuple[str, ...]
    lessons: tuple[Lesson, ...]
    problems: tuple[Problem, ...] = ()

    def find(self, lesson_id: str) -> Lesson | None:
        return self._by_id.get(lesson_id)

    @cached_property
    def _by_id(self) -> dict[str, Lesson]:
        """The first lesson of each ID (a duplicate is GM40x's to report): a close looks up thousands."""
        found: dict[str, Lesson] = {}
        for lesson in self.lessons:
            found.setdefault(lesson.id, lesson)
        return found

    def next_id(self) -> str:
        return format_id(max((lesson.number for lesson in self.lessons), default=0) + 1)


def format_id(number: int) -> str:
    return f"L-{number:04d}"


def parse_event(item: Field) -> Event | None:
    match = _EVENT_RE.match(item.value)
    if not match:
        return None
    try:
        day = date.fromisoformat(match.group(1))
    except ValueError:
        return None
    return built_whole(Event, {"day": day, "cycle": int(match.group(2)), "text": (match.group(3) or "").strip(),
                               "line": item.line})


def with_event(line: str, day: date, cycle: int) -> str:
    """A Happened or Confirmed line (as `parse_event` reads it) with its date and cycle replaced."""
    return _EVENT_HEAD_RE.sub(f"{day.isoformat()} (cycle {cycle})", line, count=1)


def event_with_other_digits(item: Field) -> bool:
    """A Happened or Confirmed line that does not parse but did under rules 2: its cycle or time written with
    digits other than 0-9 (`(cycle ٣)`). Its date never did: date.fromisoformat reads only 0-9."""
    folded = fold_digits(item.value)
    return (folded != item.value and folded[:10] == item.value[:10]
            and parse_event(replace(item, value=folded)) is not None)


def status_with_other_digits(status: str) -> bool:
    """A Status that does not parse but did under rules 2 (`promoted R-٠٧`)."""
    return parses_with_ascii_digits(status, _STATUS_RE.match)


def valid_status(status: str) -> bool:
    return bool(_STATUS_RE.match(status))


def promoted_rule(status: str) -> str | None:
    match = _STATUS_RE.match(status)
    return match.group(2) if match else None


def parse_heading(title: str) -> tuple[str, str] | None:
    return split_id_heading(title, _ID_RE)


_PARSED = SameEntries[Lesson]()
# The last text parsed and its document, which the next parse splits again only where it differs (`resplit`).
_LATEST: list[tuple[str, LessonsDoc]] = []


@parsed_once
def parse(text: str) -> LessonsDoc:
    doc = _parsed_after_edit(text) or _parsed_whole(text)
    _LATEST[:] = [(text, doc)]
    return doc


def _parsed_whole(text: str) -> LessonsDoc:
    preamble, sections = split_sections(decode_lines(text), 2)
    problems: list[Problem] = []
    problems += title_problem(preamble, TITLE)
    lessons = _lessons_of(sections, problems)
    return LessonsDoc(tuple(preamble), _PARSED.shared(lessons), tuple(problems))


def _parsed_after_edit(text: str) -> LessonsDoc | None:
    """`_parsed_whole(text)`, found from the last parse when `text` is an edit of its text that `resplit` can
    answer: a valid LESSONS whose lessons are its sections one for one (no problems, nothing but the preamble
    before the first). The lessons before the edit, and those after it when they did not move, are the last
    parse's objects, with what was read of them (their fields, their events)."""
    if not _LATEST:
        return None
    old_text, old = _LATEST[0]
    if old.problems or not old.lessons or len(old.preamble) != old.lessons[0].line - 1:
        return None
    edit = resplit(old_text, text, [lesson.line for lesson in old.lessons], 2)
    if edit is None:
        return None
    problems: list[Problem] = []
    moved = old.lessons[edit.moved:]
    if edit.shift:
        moved = tuple(built_whole(Lesson, {"id": lesson.id, "title": lesson.title, "body": lesson.body,
                                           "line": lesson.line + edit.shift, "end": lesson.end + edit.shift})
                      for lesson in moved)
    # A lesson the edit left as it was, where it was, is among those the edit's lines replaced.
    replaced = {lesson: lesson for lesson in old.lessons[edit.kept:edit.moved]}
    written = [replaced.get(lesson, lesson) for lesson in _lessons_of(edit.sections, problems)]
    return LessonsDoc(old.preamble, _PARSED.remember((*old.lessons[:edit.kept], *written, *moved)), tuple(problems))


def _lessons_of(sections: list[Section], problems: list[Problem]) -> list[Lesson]:
    return [built_whole(Lesson, {"id": parsed[0], "title": parsed[1], "body": section.body, "line": section.line,
                                 "end": section.end})
            for section, parsed in headed(sections, parse_heading, problems, code=codes.LESSON_HEADING_MALFORMED,
                                          marker="##", what="lesson")]


def render(doc: LessonsDoc) -> str:
    parts = ["\n".join(strip_trailing_blank(doc.preamble)) or TITLE]
    parts.extend(lesson.render() for lesson in doc.lessons)
    return "\n\n".join(parts) + "\n"


def event_text(day: date, cycle: int, text: str) -> str:
    # Trimmed, so an empty first line never leaves a trailing space after the dash.
    return f"{day.isoformat()} (cycle {cycle}) — {text.strip()}"


def make_lesson(lesson_id: str, title: str, *, day: date, cycle: int, happened: str, why: str, change: str,
                rule: str | None = None, supersedes: str | None = None,
                more: tuple[tuple[str, str], ...] = ()) -> Lesson:
    """A new open lesson; `more` are further fields (an imported lesson's Origin) written above its Status."""
    body = [*render_field("Happened", event_text(day, cycle, happened)), *render_field("Why", why),
            *render_field("Change", change)]
    if rule:
        body += render_field("Rule", rule)
    if supersedes:
        body += render_field("Supersedes", supersedes)
    for key, value in more:
        body += render_field(key, value)
    body += render_field("Status", "open")
    # Its fields' lines count from 1 until it is written.
    return Lesson(lesson_id, title, tuple(body))


def replace_lesson(doc: LessonsDoc, lesson: Lesson) -> LessonsDoc:
    return replace(doc, lessons=tuple(lesson if item.id == lesson.id else item for item in doc.lessons))


def insert_before_status(body: tuple[str, ...], new_lines: list[str]) -> tuple[str, ...]:
    lines = strip_trailing_blank(body)
    index = next((i for i, line in enumerate(lines) if line.startswith("- Status:")), len(lines))
    return tuple(lines[:index] + new_lines + lines[index:])


def confirm(doc: LessonsDoc, lesson_id: str, *, day: date, cycle: int, evidence: str) -> LessonsDoc:
    lesson = doc.find(lesson_id)
    if lesson is None:
        raise KeyError(f"lesson {lesson_id} not found")
    body = insert_before_status(lesson.body, render_field("Confirmed", event_text(day, cycle, evidence)))
    return replace_lesson(doc, replace(lesson, body=body))


def set_status(doc: LessonsDoc, lesson_id: str, status: str) -> LessonsDoc:
    return with_statuses(doc, {lesson_id: status})


def with_statuses(doc: LessonsDoc, statuses: dict[str, str]) -> LessonsDoc:
    """`doc` with each lesson of `statuses` given its status, in one pass over the lessons: an import that
    retires 1,500 superseded lessons rebuilt all 3,000 once per retirement."""
    changed: dict[str, Lesson] = {}
    for lesson_id, status in statuses.items():
        lesson = doc.find(lesson_id)
        if lesson is None:
            raise KeyError(f"lesson {lesson_id} not found")
        lines = without_fields(strip_trailing_blank(lesson.body), ("Status",))
        changed[lesson_id] = replace(lesson, body=tuple([*lines, *render_field("Status", status)]))
    return replace(doc, lessons=tuple(changed.get(item.id, item) for item in doc.lessons))
