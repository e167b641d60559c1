"""Gemini CLI's memories, in both forms.

- `save_memory` appends each fact as a bullet under `## Gemini Added Memories` in the global context file
  `~/.gemini/GEMINI.md` (google-gemini/gemini-cli, docs/tools/memory.md; MEMORY_SECTION_HEADER in
  packages/core/src/tools/memoryTool.ts); a project's own GEMINI.md may hold the same section.
- the project's private memory folder, a `MEMORY.md` index with topic files in Claude Code's shape
  (gitmem.interop.topic_files), found as Gemini CLI finds it (gitmem.interop.gemini_places), or the folder
  `--from` names;
- that folder's inbox of proposed patches (gitmem.interop.gemini_inbox), each a proposal, never applied.
Gemini's facts are preferences and project details, not corrections: they land as proposals.
"""
from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from gitmem.interop import gemini_inbox, topic_files
from gitmem.interop.facts import PROPOSAL, Fact
from gitmem.interop.gemini_places import project_memory_dir
from gitmem.interop.shapes import blocks, section
from gitmem.interop.sources import Reader
from gitmem.workspace import Workspace

NAME = "gemini"
WHAT = "Gemini CLI memories"
CONTEXT_FILE = "GEMINI.md"
SECTION = "Gemini Added Memories"


def default_roots(workspace: Workspace, environ: Mapping[str, str], home: Path) -> list[Path]:
    gemini = Path(environ.get("GEMINI_CLI_HOME") or home) / ".gemini"
    return [gemini, project_memory_dir(gemini, workspace.root), workspace.root]


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
        facts += topic_files.read_topic_files(reader, NAME, prefix)
    if prefix != ".":
        facts += gemini_inbox.read_inbox(reader, NAME, prefix)
    return facts
