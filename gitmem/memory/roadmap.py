"""ROADMAP.md (optional): the current section is the first `## ` marked `(current)` or holding an open `- [ ]`."""
from __future__ import annotations

from gitmem.memory.decoding import decode_lines
from gitmem.memory.fences import is_fence
from gitmem.memory.sections import Section, split_sections


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


class NoSuchItem(LookupError):
    """No open item of the current section is the one named, or more than one is: the message says which."""


def tick(text: str, wanted: str) -> tuple[str, str]:
    """(ROADMAP with the open item `wanted` of the current section ticked `- [x]`, that item's text).

    `wanted` is the item's text, or a part of it that only one open item holds (case-insensitive): an agent
    names what it finished in its own words, and a wrong guess must not tick another item. Only the box changes.
    """
    section = current_section(text)
    items = _open_items(section) if section is not None else []
    needle = " ".join(wanted.split()).lower()
    if not needle:
        raise NoSuchItem("name the ROADMAP item to tick (its text, or a part only it holds)")
    exact = [item for item in items if item.lower() == needle]
    found = exact or [item for item in items if needle in item.lower()]
    where = f"the current ROADMAP section `{section.title}`" if section is not None else "ROADMAP"
    if len(found) != 1:
        listed = "; ".join(f"`{item}`" for item in items) or "none"
        problem = "matches no open item" if not found else f"matches {len(found)} open items"
        raise NoSuchItem(f"{wanted!r} {problem} of {where} (open items: {listed})")
    assert section is not None
    lines = text.split("\n")
    fenced = False
    for number in range(section.line, section.end):      # the section's body (`line` is its 1-based heading)
        line = lines[number]
        if is_fence(line):
            fenced = not fenced
        elif not fenced and line.lstrip().startswith("- [ ]") and line.lstrip()[5:].strip() == found[0]:
            lines[number] = line.replace("- [ ]", "- [x]", 1)
            return "\n".join(lines), found[0]
    raise NoSuchItem(f"{wanted!r}: the item was not found again in {where}")   # pragma: no cover (parsed above)
