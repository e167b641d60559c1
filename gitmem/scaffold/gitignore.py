"""Merging the template's .gitignore into an existing one: missing patterns are appended, nothing else moves."""
from __future__ import annotations

from pathlib import Path

from gitmem.confined import files

HEADER = "# Local clutter that must never reach the agent's memory (added by gitmem init)"


def _patterns(data: bytes) -> list[bytes]:
    return [line.strip() for line in data.splitlines() if line.strip() and not line.lstrip().startswith(b"#")]


def merge_gitignore(existing: Path, template: Path) -> bool:
    """Append the template's patterns that `existing` lacks, under one comment line; False when none lack.

    Every existing byte stays: git reads .gitignore as bytes, so this does too (any encoding, a BOM, CRLF
    line ends, a last line without a newline). A pattern counts as present when the same line is there,
    with or without the slash that marks a directory, so `.venv` is not added again as `.venv/`.
    """
    raw = files.read_bytes(existing.parent, existing.name) or b""
    have = {pattern.rstrip(b"/") for pattern in _patterns(raw)}
    wanted = [p for p in _patterns(template.read_bytes()) if p.rstrip(b"/") not in have]
    if not wanted:
        return False
    newline = b"\r\n" if b"\r\n" in raw else b"\n"
    addition = (b"" if not raw or raw.endswith(b"\n") else newline) + (newline if raw.strip() else b"")
    addition += newline.join([HEADER.encode("utf-8"), *wanted]) + newline
    files.write_bytes(existing.parent, existing.name, raw + addition)     # never through a link
    return True
