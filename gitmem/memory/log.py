"""LOG.md: append-only, one entry per cycle plus one per daily close. History is searched, not loaded."""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from gitmem.memory.text import (
    Entry,
    headed,
    title_problem,
    SEP, Field, Problem, Timestamp, decode_lines, parse_fields, render_field,
    split_sections, split_timestamped_heading, strip_trailing_blank,
)

TITLE = "# LOG"
OUTCOMES = ("built", "published", "no-build")
FIELD_ORDER = ("Task", "Tried", "Evidence", "Result", "Learned")
_CYCLE_RE = re.compile(r"^cycle (\d+)$")


@dataclass(frozen=True)
class LogEntry(Entry):
    when: Timestamp
    cycle: int | None = None          # None for a close entry
    outcome: str | None = None        # built | published | no-build; None for a close entry
    body: tuple[str, ...] = ()
    line: int = 0
    end: int = 0
    fields: tuple[Field, ...] = field(default=(), compare=False)

    @property
    def kind(self) -> str:
        return "close" if self.cycle is None else "cycle"

    def heading(self) -> str:
        if self.cycle is None:
            return f"## {self.when}{SEP}close"
        return f"## {self.when}{SEP}cycle {self.cycle}{SEP}{self.outcome}"


@dataclass(frozen=True)
class LogDoc:
    preamble: tuple[str, ...]
    entries: tuple[LogEntry, ...]
    problems: tuple[Problem, ...] = ()

    @property
    def cycles(self) -> tuple[LogEntry, ...]:
        return tuple(e for e in self.entries if e.cycle is not None)


def make_entry(when: Timestamp, *, cycle: int | None, outcome: str | None, fields: dict[str, str]) -> LogEntry:
    """Fields are rendered in canonical order; unknown keys follow in the order given."""
    ordered = [k for k in FIELD_ORDER if k in fields] + [k for k in fields if k not in FIELD_ORDER]
    body = [line for key in ordered if fields[key] is not None for line in render_field(key, fields[key])]
    # Fields are parsed here too, so `.get()` works before the entry is written (lines count from 1).
    return LogEntry(when=when, cycle=cycle, outcome=outcome, body=tuple(body), fields=parse_fields(body, 1))


def parse_heading(title: str) -> tuple[Timestamp, int | None, str | None] | None:
    when, parts = split_timestamped_heading(title)
    if when is None:
        return None
    if parts == ["close"]:
        return when, None, None
    if len(parts) == 2 and (m := _CYCLE_RE.match(parts[0])) and parts[1] in OUTCOMES:
        return when, int(m.group(1)), parts[1]
    return None


def parse(text: str, *, first_line: int = 1, expect_title: bool = True) -> LogDoc:
    """Parse LOG text. To parse only an appended tail, pass it with its `first_line` and `expect_title=False`."""
    lines = decode_lines(text)
    preamble, sections = split_sections(lines, 2, first_line)
    problems: list[Problem] = []
    if expect_title:
        problems += title_problem(preamble, TITLE, first_line)
    entries: list[LogEntry] = []
    for section, (when, cycle, outcome) in headed(
            sections, parse_heading, problems, code="GM306", marker="##", what="LOG",
            hint="use `## YYYY-MM-DD HH:MM TZ · cycle N · built|published|no-build` or `## … · close`"):
        entries.append(LogEntry(when, cycle, outcome, section.body, section.line, section.end,
                                parse_fields(section.body, section.body_start)))
    return LogDoc(tuple(preamble), tuple(entries), tuple(problems))


def render(doc: LogDoc) -> str:
    parts = ["\n".join(strip_trailing_blank(doc.preamble)) or TITLE]
    parts.extend(entry.render() for entry in doc.entries)
    return "\n\n".join(parts) + "\n"


def append_entry(text: str, entry: LogEntry) -> str:
    """Append bytes only: the result starts with `text` exactly (GM301), plus a separating blank line."""
    if not text:
        text = TITLE + "\n"
    if not text.endswith("\n"):
        text += "\n"
    return text + "\n" + entry.render() + "\n"


def tail(text: str, count: int) -> LogDoc:
    """Parse only the last `count` entries, scanning backwards: cost follows the tail, not the history."""
    chunk, first_line = tail_text(text, count)
    return parse(chunk, first_line=first_line, expect_title=False)


def tail_text(text: str, count: int) -> tuple[str, int]:
    """The text of the last `count` `## ` entries and the 1-based line where it starts."""
    if count <= 0:
        # Nothing asked for: an empty chunk that starts after the last line (not the whole history).
        return "", text.count("\n") + 1
    position = len(text)
    found = 0
    start = 0
    while found < count:
        index = text.rfind("\n## ", 0, position)
        if index < 0:
            start = 0 if text.startswith("## ") else _after_title(text)
            break
        start = index + 1
        position = index
        found += 1
    return text[start:], text.count("\n", 0, start) + 1


def _after_title(text: str) -> int:
    index = text.find("\n")
    return len(text) if index < 0 else index + 1


def last_cycle_number(text: str) -> int:
    """The highest cycle number among the last entries (a close entry may be last)."""
    for size in (4, 16, 64):
        cycles = [e.cycle for e in tail(text, size).entries if e.cycle is not None]
        if cycles:
            return max(cycles)
    cycles = [e.cycle for e in parse(text).entries if e.cycle is not None]
    return max(cycles, default=0)


def outcome_reason(entry: LogEntry) -> str | None:
    value = entry.get("Result")
    return value.strip() if value and value.strip() else None
