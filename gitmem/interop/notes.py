"""Plain notes a team keeps in the files the agent CLIs read as the project's instructions: every bullet item and
paragraph outside gitmem's own managed blocks (`<!-- gitmem:begin … -->`), outside Gemini's `## Gemini Added
Memories` section (the `gemini` source reads it) and other than `@path` import lines. A file that is one of gitmem's
memory files (CLAUDE.md made RULES) is gitmem's own and is never read (gitmem.interop.sources.Reader). Notes land as
proposals.

The files, as each CLI the project supports finds them at the top of the project (a CLI that reads AGENTS.md
needs no name of its own: OpenCode, Codex, Cursor):
- Claude Code: `CLAUDE.md` or `.claude/CLAUDE.md`, and the personal `CLAUDE.local.md` (code.claude.com/docs/en/
  memory, "Determine memory type"), and every `*.md` below `.claude/rules/` (the pinned release's
  `getMemoryFilesForNestedDirectory`: a rule's `paths:` frontmatter only says when it loads, so its body is read
  either way); GitHub Copilot CLI reads `.claude/CLAUDE.md` too;
- Gemini CLI: `GEMINI.md`; Qwen Code: `QWEN.md` (packages/core/src/utils/memory-constants.ts);
- GitHub Copilot CLI: `.github/copilot-instructions.md`, beside AGENTS.md, CLAUDE.md and GEMINI.md (its
  instruction discovery, as the pinned release, agent-cli/copilot, carries it).
"""
from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from gitmem import codes
from gitmem.checks.violation import Violation
from gitmem.interop.facts import PROPOSAL, Fact
from gitmem.interop.gemini import SECTION
from gitmem.interop.shapes import blocks, frontmatter, outside_managed
from gitmem.interop.sources import Reader
from gitmem.workspace import Workspace

NAME = "notes"
WHAT = "notes in the agent CLIs' instruction files (CLAUDE.md, AGENTS.md, GEMINI.md, .claude/rules/, …)"
FILES = ("CLAUDE.md", ".claude/CLAUDE.md", "CLAUDE.local.md", "AGENTS.md", "GEMINI.md", "QWEN.md",
         ".github/copilot-instructions.md")


def default_roots(workspace: Workspace, environ: Mapping[str, str], home: Path) -> list[Path]:
    return [workspace.root]


RULES = ".claude/rules"


def read(reader: Reader, prefix: str) -> list[Fact]:
    facts = []
    for name in FILES:
        loaded = reader.read(name)
        if loaded is not None:
            facts += [Fact(NAME, f"{prefix}/{name}", block.line, block.text, PROPOSAL, loaded.written)
                      for block in blocks(outside_managed(loaded.text, section=SECTION))]
    for name in reader.named_in(RULES, ".md", below=True):
        loaded = reader.read(name)
        if loaded is None:
            continue
        split = frontmatter(loaded.text)
        if split.problem is not None:
            at, what = split.problem
            reader.problems.append(Violation.of(codes.IMPORT_FRONTMATTER_INVALID, reader.shown(name), at, what=what))
            continue
        facts += [Fact(NAME, f"{prefix}/{name}", block.line, block.text, PROPOSAL, loaded.written)
                  for block in blocks(outside_managed(split.body, section=SECTION), split.body_line)]
    return facts
