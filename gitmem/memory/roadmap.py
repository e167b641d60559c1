"""ROADMAP.md (optional): the current section is the first `## ` marked `(current)` or holding an open `- [ ]`."""
from __future__ import annotations

from gitmem.memory.fences import is_fence
from gitmem.memory.text import Section, decode_lines, split_sections


def _open_items(section: Section) -> list[str]:
    """The `- [ ]` lines of a section outside fenced code (an example of a checklist is no plan)."""
    found, fenced = [], False
    for line in section.body:
        if is_fence(line):
            fenced = not fenced
        elif not fenced and line.lstrip().startswith("- [ ]"):
            found.append(line.lstrip()[5:].strip())
    return found


def current_section(text: str) -> Section | None:
    _, sections = split_sections(decode_lines(text), 2)
    for section in sections:
        if "(current)" in section.title or _open_items(section):
            return section
    return None


def first_open_item(text: str) -> str | None:
    section = current_section(text)
    items = _open_items(section) if section is not None else []
    return items[0] if items else None


def open_items(text: str) -> list[str]:
    """The open `- [ ]` items of the current section, in order."""
    section = current_section(text)
    return _open_items(section) if section is not None else []
