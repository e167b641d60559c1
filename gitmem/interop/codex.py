"""Codex's Memories: `$CODEX_HOME/memories/` (default `~/.codex/memories/`).

The layout is Codex's own (openai/codex, codex-rs/core/templates/memories/read_path.md, "Memory layout"):
`memory_summary.md` (a compact map, loaded into every prompt), `MEMORY.md` (the searchable registry),
`raw_memories.md` (the merged stage-1 memories, latest first) and `rollout_summaries/<thread>.md` (a recap per
session). Each is markdown whose bullet items are the memories; they are what Codex learned while working
(first steps that worked, failure modes, pivots: consolidation.md), so each lands as a lesson, except:
- the summary's lines, a map of the others, which land as proposals, its `## User Profile` paragraphs too;
- what the user prefers (MEMORY.md's and the summary's `## User preferences`, a raw memory's `Preference
  signals:`), a fact about the user, not a mistake: a proposal;
- MEMORY.md's index of each task, `### rollout_summary_files` (the recaps it came from, with their paths and
  thread ids) and `### keywords` (words to grep for), which is no memory and is not imported.
(The formats as the pinned release, agent-cli/codex, prompts its memory agents to write them: "`MEMORY.md` FORMAT
(STRICT)", "`raw_memory` FORMAT (STRICT)", "`memory_summary.md` FORMAT (STRICT)".)
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


ROUTING = ("rollout_summary_files", "keywords")
PREFERENCES = ("User preferences", "Preference signals:")
PROFILE = "User Profile"


def read(reader: Reader, prefix: str) -> list[Fact]:
    names = [name for name in reader.markdown_in() if name in FILES] + reader.markdown_in(ROLLOUTS)
    facts = []
    for name in names:
        loaded = reader.read(name)
        if loaded is None:
            continue
        label, heading = None, None       # the `Label:` paragraph a raw memory's bullets stand under
        for block in blocks(loaded.text):
            if block.heading != heading:
                label, heading = None, block.heading
            if not block.bullet:
                last = block.text.rsplit("\n", 1)[-1]       # a label may end a paragraph (`task: …` above it)
                label = last if last.endswith(":") else None
                if name == SUMMARY and block.heading == PROFILE:
                    facts.append(Fact(NAME, f"{prefix}/{name}", block.line, block.text, PROPOSAL, loaded.written))
                continue
            if block.heading in ROUTING:
                continue
            kind = PROPOSAL if name == SUMMARY or block.heading in PREFERENCES or label in PREFERENCES else LESSON
            facts.append(Fact(NAME, f"{prefix}/{name}", block.line, block.text, kind, loaded.written))
    return facts
