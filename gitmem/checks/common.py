"""Helpers shared by the rule families: decoded views of one file in the old and new snapshots."""
from __future__ import annotations

from gitmem.checks import CheckInput
from gitmem.memory.text import decode
from gitmem.snapshot import same_blob


def texts(inp: CheckInput, role: str, skip: set[str]) -> tuple[str, str | None, str | None] | None:
    """(path, old text, new text) for a changed, decodable file; None when there is nothing to check."""
    path = inp.config.path(role)
    if path in skip or same_blob(inp.old, inp.new, path):
        return None
    new_bytes = inp.new.read(path)
    if new_bytes is None:
        return None
    old_bytes = inp.old.read(path) if inp.old is not None else None
    old_text = decode(old_bytes).text if old_bytes is not None else None
    return path, old_text, decode(new_bytes).text


def unchanged(inp: CheckInput, *roles: str) -> bool:
    return all(same_blob(inp.old, inp.new, inp.config.path(role)) for role in roles)
