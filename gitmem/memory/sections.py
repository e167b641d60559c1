"""Headings and the sections they open: a heading's level and parts (timestamp, ID, title), a file's lines
split into sections, and the sections whose heading parses."""
from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from itertools import compress, count, repeat
from typing import TypeVar

from gitmem import codes
from gitmem.codes import Code
from gitmem.memory.digits import parses_with_ascii_digits
from gitmem.memory.fences import FENCE_MARKS
from gitmem.memory.problems import Problem
from gitmem.memory.timestamps import Timestamp, parse_timestamp
from gitmem.records import built_whole, record

T = TypeVar("T")

# The canonical heading separator is U+00B7; humans may type " - " or " | " instead.
SEP = " · "
# Linear on any line: a match may start only at the first space of a run, and the run is taken whole
# (possessive), so a long run of spaces is read once, never again from each of its spaces.
_SEP_RE = re.compile(r"(?<! ) ++(?:·|-|\|) +")
# The timestamp a dated heading starts with (a LOG entry's, a NOW block's), as `parse_timestamp` reads it.
_TS_PREFIX_RE = re.compile(r"^[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2} (?:UTC|[+-][0-9]{2}:[0-9]{2})")


def split_heading(title: str, maxsplit: int = -1) -> list[str]:
    """Split a heading on any accepted separator; `maxsplit` as in str.split."""
    return _SEP_RE.split(title.strip(), maxsplit=maxsplit if maxsplit >= 0 else 0)


def split_timestamped_heading(title: str) -> tuple[Timestamp | None, list[str]]:
    """`<timestamp> · a · b` -> (timestamp, ["a", "b"]); the timestamp's own dashes are not separators."""
    match = _TS_PREFIX_RE.match(title.strip())
    if not match:
        return None, []
    rest = title.strip()[match.end():]
    parts = _SEP_RE.split(rest)
    if not parts or parts[0] != "":
        return None, []
    return parse_timestamp(match.group(0)), [p.strip() for p in parts[1:]]


def split_id_heading(title: str, id_re: re.Pattern[str]) -> tuple[str, str] | None:
    """`D-0042 · title` -> ("D-0042", "title") when the ID matches `id_re` and a title follows."""
    parts = split_heading(title, 1)
    if len(parts) != 2 or not id_re.match(parts[0]) or not parts[1].strip():
        return None
    return parts[0], parts[1].strip()


def heading_level(line: str) -> int:
    """2 for `## x`; 0 when the line is not an ATX heading."""
    if not line.startswith("#"):
        return 0
    level = len(line) - len(line.lstrip("#"))
    if level > 6 or (len(line) > level and line[level] != " "):
        return 0
    return level


def has_title(preamble: list[str] | tuple[str, ...]) -> bool:
    """A `# ` title before the first entry. Any title will do: `# NOW` in NOW.md, `# ESTADO` in ESTADO.md."""
    return any(heading_level(line) == 1 for line in preamble)


def title_problem(preamble: list[str] | tuple[str, ...], title: str, line: int = 1) -> list[Problem]:
    """GM907 when the lines before the first entry hold no `# ` title."""
    if has_title(preamble):
        return []
    role = title.lstrip("# ")
    return [Problem.of(codes.TITLE_MISSING, line, role=role, title=title)]


# Section and Field: a parse builds one per heading and per field line, so each has an __init__ of its own that
# stores its fields straight into the instance's dict. That is faster than the standard decorator's compiled one
# (a whole LOG parses ~5% slower with a record's generic one), and nothing is compiled when the class is built
# (the standard decorator's exec() cost the pre-commit path 1.4 ms). tests/memory/test_section_and_field_records.py
# holds each __init__'s parameters to the class's fields.
@record(frozen=True)
class Section:
    """A heading and its body. `line` is the heading's line; `end` its last non-blank line (1-based, inclusive)."""

    title: str
    line: int
    end: int          # the last non-blank line of the section (the heading's line when the body is empty)
    body: tuple[str, ...]

    def __init__(self, title: str, line: int, end: int, body: tuple[str, ...]) -> None:
        stored = self.__dict__          # frozen: the fields are set once, here
        stored["title"], stored["line"], stored["end"], stored["body"] = title, line, end, body

    @property
    def body_start(self) -> int:
        return self.line + 1


def split_sections(lines: tuple[str, ...] | list[str], level: int, first_line: int = 1, *,
                   in_fence: bool = False) -> tuple[list[str], list[Section]]:
    """Split at headings of exactly `level`; headings of a higher level also end a section.

    Returns the lines before the first heading and the sections. Fenced code is skipped so a `## `
    inside a code block is not taken for a heading (`gitmem.memory.fences`); `in_fence` is the fence
    state where `lines` start, for a reader that parses the tail of a file.

    Only the lines that start with `#` or a fence mark can end a section or change the fence state: they are
    picked out at C speed (`_marked`), and the lines between them are taken as slices (DECISIONS is 32,000
    lines at 100x, and every cycle parses it whole).
    """
    preamble: list[str] = []
    sections: list[Section] = []
    title: str | None = None
    start = body_start = run_start = 0     # the heading's line; where its body starts; where the preamble's run does
    deeper = "#" * (level + 1)             # a deeper heading, or no heading at all: never a section's end
    for index in _marked(lines):
        line = lines[index]
        if line[0] != "#":                 # a fence line
            in_fence = not in_fence
            continue
        if in_fence or line.startswith(deeper):
            continue
        found = heading_level(line)
        if not found:
            continue
        if title is not None:
            sections.append(_section(title, start, lines[body_start:index]))
            title, run_start = None, index
        if found == level:
            # A heading above `level` that ended a section stays in the preamble's run, with the lines after it.
            preamble += lines[run_start:index]
            title, start, body_start = line[level + 1:].strip(), first_line + index, index + 1
    if title is not None:
        sections.append(_section(title, start, lines[body_start:]))
    else:
        preamble += lines[run_start:]
    return preamble, sections


_MARKS = ("#", *FENCE_MARKS)


def _marked(lines: tuple[str, ...] | list[str]) -> Iterator[int]:
    """The indexes of the lines starting with `#` or a fence mark, found without a Python step per line."""
    return compress(count(), map(str.startswith, lines, repeat(_MARKS)))


def _section(title: str, start: int, body: tuple[str, ...] | list[str]) -> Section:
    # `end` is the last non-blank line, so a section never claims the blank lines that separate it
    # from the next one (or the phantom line after the file's final newline).
    kept = len(body)
    while kept and not body[kept - 1].strip():
        kept -= 1
    return built_whole(Section, {"title": title, "line": start, "end": start + kept, "body": tuple(body)})


def headed(sections: list[Section], parse_heading: Callable[[str], T | None], problems: list[Problem], *,
           code: Code, marker: str, what: str) -> Iterator[tuple[Section, T]]:
    """The sections whose heading parses; a `code` problem is recorded for each one that does not."""
    for section in sections:
        parsed = parse_heading(section.title)
        if parsed is None:
            variant = "digits" if parses_with_ascii_digits(section.title, parse_heading) else ""
            problems.append(Problem.of(code, section.line, variant, what=what, marker=marker, title=section.title))
            continue
        yield section, parsed
