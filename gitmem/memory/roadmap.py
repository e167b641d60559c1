"""ROADMAP.md (optional): the current section is the first `## ` marked `(current)` or holding an open `- [ ]`."""
from __future__ import annotations

from gitmem.memory.text import Section, decode_lines, split_sections


def current_section(text: str) -> Section | None:
    _, sections = split_sections(decode_lines(text), 2)
    for section in sections:
        if "(current)" in section.title or any(line.lstrip().startswith("- [ ]") for line in section.body):
            return section
    return None


def first_open_item(text: str) -> str | None:
    section = current_section(text)
    if section is None:
        return None
    for line in section.body:
        if line.lstrip().startswith("- [ ]"):
            return line.lstrip()[5:].strip()
    return None


def open_items(text: str) -> list[str]:
    """The open `- [ ]` items of the current section, in order."""
    section = current_section(text)
    if section is None:
        return []
    return [line.lstrip()[5:].strip() for line in section.body if line.lstrip().startswith("- [ ]")]
