"""Codex's Memories: `$CODEX_HOME/memories/` (default `~/.codex/memories/`).

The layout is Codex's own (openai/codex, codex-rs/core/templates/memories/read_path.md, "Memory layout"):
`memory_summary.md` (a compact map, loaded into every prompt), `MEMORY.md` (the searchable registry),
`raw_memories.md` (the merged stage-1 memories, latest first) and `rollout_summaries/<thread>.md` (a recap per
session). Each is markdown whose bullet items are the memories; they are what Codex learned while working
(first steps that worked, failure modes, pivots: consolidation.md), so each lands as a lesson, except the summary's
lines, a map of the others, which land as proposals.
"""
from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from gitmem.interop.facts import LESSON, PROPOSAL, Fact
from gitmem.interop.shapes import blocks
from gitmem.interop.sources import Reader
from gitmem.workspace import Workspace

NAME = "codex"
WHAT = "Codex memories"
FILES = ("MEMORY.md", "memory_summary.md", "raw_memories.md")
SUMMARY = "memory_summary.md"
ROLLOUTS = "rollout_summaries"


def default_roots(workspace: Workspace, environ: Mapping[str, str], home: Path) -> list[Path]:
    return [Path(environ.get("CODEX_HOME", "").strip() or home / ".codex") / "memories"]


def read(reader: Reader, prefix: str) -> list[Fact]:
    names = [name for name in reader.markdown_in() if name in FILES] + reader.markdown_in(ROLLOUTS)
    facts = []
    for name in names:
        loaded = reader.read(name)
        if loaded is None:
            continue
        kind = PROPOSAL if name == SUMMARY else LESSON
        facts += [Fact(NAME, f"{prefix}/{name}", block.line, block.text, kind, loaded.written)
                  for block in blocks(loaded.text) if block.bullet]
    return facts
