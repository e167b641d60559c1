"""Gemini CLI's memories, in both forms.

- `save_memory` appends each fact as a bullet under `## Gemini Added Memories` in the global context file
  `~/.gemini/GEMINI.md` (google-gemini/gemini-cli, docs/tools/memory.md; MEMORY_SECTION_HEADER in
  packages/core/src/tools/memoryTool.ts); a project's own GEMINI.md may hold the same section.
- the project's private memory folder, a `MEMORY.md` index with topic files in Claude Code's shape
  (gitmem.interop.topic_files), found as Gemini CLI finds it (`project_memory_dir`), or the folder `--from` names;
- that folder's inbox of proposed patches (gitmem.interop.gemini_inbox), each a proposal, never applied.
Gemini's facts are preferences and project details, not corrections: they land as proposals.

Where the private folder is (packages/core/src/config/storage.ts and projectRegistry.ts, as the pinned release
bundles them): `<gemini>/tmp/<id>/memory`, `<gemini>` being `$GEMINI_CLI_HOME/.gemini` or `~/.gemini`. The `<id>`
of a project is the slug `<gemini>/projects.json` maps its absolute path to (`{"projects": {path: slug}}`, slugs
`[a-z0-9-]+`), trusted only while `<gemini>/tmp/<slug>/.project_root`, when there, names the same path; else the
folder whose `.project_root` names it; else, from releases before the registry, the SHA-256 of the path.
Gemini CLI's project is the folder it was started in: here, the repository's root.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import stat
from collections.abc import Mapping
from pathlib import Path

from gitmem.interop import gemini_inbox, topic_files
from gitmem.interop.facts import PROPOSAL, Fact
from gitmem.interop.shapes import blocks, section
from gitmem.interop.sources import Reader
from gitmem.workspace import Workspace

NAME = "gemini"
WHAT = "Gemini CLI memories"
CONTEXT_FILE = "GEMINI.md"
SECTION = "Gemini Added Memories"


REGISTRY = "projects.json"
OWNER_MARK = ".project_root"
_SLUG_RE = re.compile(r"[a-z0-9-]+")
_MARK_BYTES = 64 * 1024          # a path, not a document: what is read of an owner mark or the registry, at most
_REGISTRY_BYTES = 4 * 1024 * 1024


def default_roots(workspace: Workspace, environ: Mapping[str, str], home: Path) -> list[Path]:
    gemini = Path(environ.get("GEMINI_CLI_HOME") or home) / ".gemini"
    return [gemini, project_memory_dir(gemini, workspace.root), workspace.root]


def project_memory_dir(gemini: Path, project: Path) -> Path:
    """Gemini CLI's private memory folder for `project` (Storage.getProjectMemoryTempDir), found as the CLI
    finds it but never created or registered: this only reads."""
    owner = os.path.abspath(project.resolve())
    temp = gemini / "tmp"
    slug = _registered(gemini / REGISTRY, owner, temp) or _marked(temp, owner)
    return temp / (slug or hashlib.sha256(owner.encode()).hexdigest()) / "memory"


def _registered(registry: Path, owner: str, temp: Path) -> str | None:
    try:
        data = json.loads(_head(registry, _REGISTRY_BYTES))
    except (OSError, ValueError):        # missing or corrupt: Gemini CLI starts an empty registry
        return None
    projects = data.get("projects") if isinstance(data, dict) else None
    slug = projects.get(owner) if isinstance(projects, dict) else None
    if not isinstance(slug, str) or not _SLUG_RE.fullmatch(slug):
        return None
    try:
        marked = _head(temp / slug / OWNER_MARK, _MARK_BYTES).strip()
    except FileNotFoundError:            # no mark yet: the registry's word stands
        return slug
    except (OSError, ValueError):        # a mark that is not a path cannot confirm it
        return None
    return slug if os.path.abspath(marked) == owner else None


def _marked(temp: Path, owner: str) -> str | None:
    try:
        candidates = sorted(entry.name for entry in os.scandir(temp) if _SLUG_RE.fullmatch(entry.name))
    except OSError:
        return None
    for name in candidates:
        try:
            if os.path.abspath(_head(temp / name / OWNER_MARK, _MARK_BYTES).strip()) == owner:
                return name
        except (OSError, ValueError):
            continue
    return None


def _head(path: Path, limit: int) -> str:
    """The start of a small text file of Gemini CLI's, read without following a link at its end."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    with os.fdopen(fd, "rb") as handle:
        if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
            raise OSError(f"{path} is not a regular file")
        return handle.read(limit).decode("utf-8")


def added_memories(reader: Reader, prefix: str, rel: str = CONTEXT_FILE) -> list[Fact]:
    loaded = reader.read(rel)
    found = section(loaded.text, SECTION) if loaded is not None else None
    if loaded is None or found is None:
        return []
    body, first = found
    return [Fact(NAME, f"{prefix}/{rel}", block.line, block.text, PROPOSAL, loaded.written)
            for block in blocks(body, first) if block.bullet]


def read(reader: Reader, prefix: str) -> list[Fact]:
    facts = added_memories(reader, prefix)
    if prefix != "." and (reader.root / topic_files.INDEX).exists():
        facts += topic_files.read(reader, NAME, prefix)
    if prefix != ".":
        facts += gemini_inbox.read(reader, NAME, prefix)
    return facts
