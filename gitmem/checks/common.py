"""Helpers shared by the rule families: decoded views of one file in the old and new snapshots."""
from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from gitmem.checks import CheckInput
from gitmem.checks.violation import Violation
from gitmem.codes import Code
from gitmem.memory import fences
from gitmem.memory.text import decode_text


def texts(inp: CheckInput, role: str, skip: set[str]) -> tuple[str, str | None, str] | None:
    """(path, old text, new text) for a changed, decodable file; None when there is nothing to check."""
    path = inp.config.path(role)
    if path in skip:
        return None
    new_bytes = inp.new.read(path)
    if new_bytes is None:
        return None
    old_bytes = inp.old.read(path) if inp.old is not None else None
    old_text = decode_text(old_bytes) if old_bytes is not None else None
    return path, old_text, decode_text(new_bytes)


def changed_span(old: bytes | None, new: bytes) -> tuple[int, int]:
    """The byte range [start, end) of NEW that still needs checking, given that OLD was valid.

    LOG grows at the end and NOW at the top, so an append leaves only its tail (from the start of OLD's last
    line) and a prepend only its head (through NEW's preamble and new blocks). Anything else: all of NEW.
    Cost is a memcmp over OLD, never a decode or a parse of the history.
    """
    if old is None:
        return 0, len(new)
    if new.startswith(old):
        return old.rfind(b"\n") + 1, len(new)
    first_block = fences.first_heading(old, b"## ")        # NOW's top block: the first heading outside fences
    if first_block is not None and new.endswith(memoryview(old)[first_block:]):
        return 0, len(new) - (len(old) - first_block)
    return 0, len(new)


def span_against(inp: CheckInput, path: str, new: bytes) -> tuple[int, int]:
    """`changed_span` against the old snapshot, using its prefix proof so the old LOG is never copied."""
    if inp.old is None or (inp.old.oid(path) is None and not inp.old.exists(path)):
        return 0, len(new)
    size = inp.old.prefix_length(path, new)
    if size is not None:
        return new.rfind(b"\n", 0, size) + 1, len(new)
    return changed_span(inp.old.read(path), new)


def line_at(data: bytes, offset: int) -> int:
    """1-based line number of byte `offset`. Counting is O(offset): call it only to report a problem."""
    return data.count(b"\n", 0, offset) + 1


def duplicate_ids(path: str, items: Iterable[Any], code: Code, next_id: str) -> list[Violation]:
    """Every entry whose ID was already used above it (the first use is the real one)."""
    seen: set[str] = set()
    found: list[Violation] = []
    for item in items:
        if item.id in seen:
            found.append(Violation.of(code, path, item.line, id=item.id, next_id=next_id))
        seen.add(item.id)
    return found
