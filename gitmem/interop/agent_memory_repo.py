"""An Agent Memory Repo: a repository whose entry point `MEMORY.md` holds an `## Index` of one-line bullet
entries, each with `[source: …; added: YYYY-MM-DD]` metadata and, for the entries with details, a `[[path]]` link.
Every bullet of MEMORY.md is an entry; its `added` date is the day it was written, its link names it across edits.
Entries land as proposals. The spec names no place on disk, so `--from` names the repository.
"""
from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import date
from pathlib import Path

from gitmem import codes
from gitmem.checks.violation import Violation
from gitmem.interop.facts import PROPOSAL, Fact
from gitmem.interop.shapes import blocks
from gitmem.interop.sources import Reader
from gitmem.workspace import Workspace

NAME = "agent-memory-repo"
WHAT = "Agent Memory Repo"
ENTRY = "MEMORY.md"
_META_RE = re.compile(r"\s*\[source: *([^;\]]*?) *; *added: *([0-9]{4}-[0-9]{2}-[0-9]{2}) *\]")
_LINK_RE = re.compile(r"\[\[([^\]]+)\]\]")


def default_roots(workspace: Workspace, environ: Mapping[str, str], home: Path) -> list[Path]:
    return []


def _day(text: str) -> date | None:
    try:
        return date.fromisoformat(text)
    except ValueError:
        return None


def read(reader: Reader, prefix: str) -> list[Fact]:
    loaded = reader.read(ENTRY)
    if loaded is None:
        return []
    facts = []
    for block in blocks(loaded.text):
        if not block.bullet:
            continue
        meta = _META_RE.search(block.text)
        link = _LINK_RE.search(block.text)
        text = _META_RE.sub("", block.text).strip()
        written = (_day(meta.group(2)) if meta else None) or loaded.written
        if link is not None and not _confined(reader, link.group(1)):
            continue
        facts.append(Fact(NAME, f"{prefix}/{ENTRY}", block.line, text, PROPOSAL, written,
                          anchor=link.group(1) if link else None))
    return facts


def _confined(reader: Reader, target: str) -> bool:
    """A `[[path]]` that leaves the repository, or is a link, is a problem: its details are not read from outside."""
    rel = target if target.endswith(".md") else f"{target}.md"
    if rel.startswith("/") or ".." in Path(rel).parts:
        reader.problems.append(Violation.of(
            codes.IMPORT_SOURCE_UNREADABLE, reader.shown(ENTRY), 1, what=f"links [[{target}]] out of the repository",
            fix="link only files inside the memory repository"))
        return False
    try:
        linked = (reader.root / rel).is_symlink()
    except OSError as err:    # a name the file system refuses (too long): named, not followed
        reader.problems.append(Violation.of(
            codes.IMPORT_SOURCE_UNREADABLE, reader.shown(ENTRY), 1,
            what=f"links [[{target[:80]}]], which cannot be read ({err.strerror or err})",
            fix="link only files inside the memory repository"))
        return False
    if linked:
        reader.read(rel)      # names the link as a problem
        return False
    return True
