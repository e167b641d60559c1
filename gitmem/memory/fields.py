"""`- Key: value` fields: read from an entry's body (all, or one key's alone), rendered, looked up, dropped; and
the field lookup and rendering every entry shares."""
from __future__ import annotations

import re
from collections.abc import Iterator
from itertools import compress, count, repeat

from gitmem.memory.lines import strip_trailing_blank
from gitmem.records import built_whole, record

_FIELD_RE = re.compile(r"^[-*] ([A-Z][A-Za-z ]{0,30}?):(?: (.*)|)$")


@record(frozen=True)
class Field:
    """A `- Key: value` line; continuation lines (indented) are joined to `value` with newlines."""

    key: str
    value: str
    line: int
    end: int

    def __init__(self, key: str, value: str, line: int, end: int) -> None:
        stored = self.__dict__          # frozen: the fields are set once, here (memory.sections.Section says why)
        stored["key"], stored["value"], stored["line"], stored["end"] = key, value, line, end


def parse_fields(body: tuple[str, ...] | list[str], first_line: int) -> tuple[Field, ...]:
    """The `- Key: value` fields of `body`, whose first line is `first_line`. Each line is matched at C speed;
    only the fields' own lines take a Python step (a whole DECISIONS holds 24,000 fields at 100x)."""
    fields: list[Field] = []
    matches = list(map(_FIELD_RE.match, body))
    for index in compress(count(), matches):
        key, value, after = _field_at(body, index, matches[index])  # type: ignore[arg-type]
        fields.append(built_whole(Field, {"key": key, "value": value, "line": first_line + index,
                                          "end": first_line + after - 1}))
    return tuple(fields)


def first_field_value(body: tuple[str, ...] | list[str], key: str) -> str | None:
    """`field_value(parse_fields(body, n), key)` without building the other fields: a close asks each of 4,000
    decisions (100x) for its Answered line alone. Only a line that starts as that field's line can be it, and the
    fields before it do not move it (a continuation line is indented, and no indented line is a field line)."""
    for index, match in _key_lines(body, key):
        return _field_at(body, index, match)[1]
    return None


def fields_keyed(body: tuple[str, ...] | list[str], first_line: int, key: str) -> tuple[Field, ...]:
    """`fields_named(parse_fields(body, first_line), key)` without building the other fields (as
    `first_field_value`): the close's gates ask 1,300 lessons (100x) for their Happened, Confirmed and Status
    lines alone."""
    found: list[Field] = []
    for index, match in _key_lines(body, key):
        _, value, after = _field_at(body, index, match)
        found.append(built_whole(Field, {"key": key, "value": value, "line": first_line + index,
                                         "end": first_line + after - 1}))
    return tuple(found)


def field_line_starts(key: str) -> tuple[str, str]:
    """How a line of the `key` field starts (`- Key:` or `* Key:`, `_FIELD_RE`): a line that does not start so is
    no line of that field, which a reader can tell at C speed before it matches anything."""
    return f"- {key}:", f"* {key}:"


def _key_lines(body: tuple[str, ...] | list[str], key: str) -> Iterator[tuple[int, re.Match[str]]]:
    """The field lines of `key` in `body`, in order, with their match; the lines that may be one are picked out
    at C speed."""
    for index in compress(count(), map(str.startswith, body, repeat(field_line_starts(key)))):
        match = _FIELD_RE.match(body[index])
        if match is not None and match.group(1) == key:
            yield index, match


def _field_at(body: tuple[str, ...] | list[str], index: int, match: re.Match[str]) -> tuple[str, str, int]:
    """The key and value of the field line `body[index]` (`match`), and the index after its last line."""
    key, value = match.group(1, 2)
    value = value.strip() if value else ""
    after = index + 1
    total = len(body)
    # Indented, non-blank lines continue the value; any other line ends it (a field line, too, starts a new
    # one: it is never indented).
    if after < total and body[after].startswith("  ") and body[after].strip():
        parts = [value]
        while after < total and body[after].startswith("  ") and body[after].strip():
            parts.append(body[after].strip())
            after += 1
        value = "\n".join(parts)
    return key, value, after


def render_field(key: str, value: str) -> list[str]:
    """`- Key: value` plus indented continuation lines, in the form `parse_fields` reads back unchanged.

    Lines are trimmed and blank continuation lines dropped: a blank line would end the field, and
    the rest of the value would silently fall out of it.
    """
    first, *rest = [line.strip() for line in value.split("\n")] if value else [""]
    head = f"- {key}: {first}" if first else f"- {key}:"
    return [head, *(f"  {line}" for line in rest if line)]


def field_value(fields: tuple[Field, ...], key: str) -> str | None:
    for field in fields:
        if field.key == key:
            return field.value
    return None


def fields_named(fields: tuple[Field, ...], key: str) -> list[Field]:
    return [field for field in fields if field.key == key]


def without_fields(lines: list[str], keys: tuple[str, ...]) -> list[str]:
    """`lines` without the `- Key:` lines of `keys` and their indented continuation lines, which would otherwise
    join the field above."""
    kept: list[str] = []
    dropping = False
    for line in lines:
        if any(line.startswith(f"- {key}:") for key in keys):
            dropping = True
            continue
        if dropping and line.startswith("  ") and line.strip():
            continue
        dropping = False
        kept.append(line)
    return kept


class Entry:
    """What every heading-plus-body entry shares: field lookup and canonical rendering.

    Subclasses are frozen dataclasses with `body` and `fields`, and say how their heading reads.
    """

    def heading(self) -> str:
        raise NotImplementedError

    def get(self, key: str) -> str | None:
        return field_value(self.fields, key)  # type: ignore[attr-defined]

    def line_of(self, key: str) -> int:
        """The line of the `- Key:` field, where a diagnostic about it points; the heading's when there is none."""
        found = fields_named(self.fields, key)  # type: ignore[attr-defined]
        return found[0].line if found else int(self.line)  # type: ignore[attr-defined]

    def render(self) -> str:
        return "\n".join([self.heading(), *strip_trailing_blank(self.body)])  # type: ignore[attr-defined]


class IdEntry(Entry):
    """An entry named by an ID and a title (decisions, lessons)."""

    def content(self) -> str:
        """The entry as written, independent of where it sits in the file: what rewrite checks compare."""
        return "\n".join([self.id, self.title, *strip_trailing_blank(self.body)])  # type: ignore[attr-defined]
