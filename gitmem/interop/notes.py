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
  instruction discovery, as the pinned release, agent-cli/copilot, carries it), and every `*.instructions.md` below
  `.github/instructions/` (docs.github.com, "Adding custom instructions for GitHub Copilot CLI": path-specific
  instructions, whose `applyTo:` frontmatter only says when they apply);
- Gemini CLI also loads each name `context.fileName` gives in the project's `.gemini/settings.json` (a name or a
  list, as in the user's settings: gitmem.interop.gemini_places).

A file those name on an `@path` line is read as they are, where Claude Code and Gemini CLI load it: a path relative
to the naming file, IMPORT_HOPS deep (code.claude.com/docs/en/memory, "Import additional files"), a markdown file
inside the project. What is not read is said beside the plan, why with it (`NotRead`), and stops nothing: a path
at home or outside the project is the user's own and not the project's notes (nothing outside is read), a name
with no file there may be a mention.
"""
from __future__ import annotations

import posixpath
from collections.abc import Mapping
from datetime import date
from pathlib import Path

from gitmem import codes
from gitmem.checks.violation import Violation
from gitmem.interop.facts import PROPOSAL, Fact
from gitmem.interop.gemini import SECTION
from gitmem.interop.gemini_places import context_file_names
from gitmem.interop.shapes import blocks, frontmatter, import_lines, outside_managed
from gitmem.interop.sources import NotRead, Reader
from gitmem.workspace import Workspace

NAME = "notes"
GEMINI_FOLDER = ".gemini"     # the project's Gemini CLI settings folder
WHAT = "notes in the agent CLIs' instruction files (CLAUDE.md, AGENTS.md, GEMINI.md, .claude/rules/, …)"
FILES = ("CLAUDE.md", ".claude/CLAUDE.md", "CLAUDE.local.md", "AGENTS.md", "GEMINI.md", "QWEN.md",
         ".github/copilot-instructions.md")


def default_roots(workspace: Workspace, environ: Mapping[str, str], home: Path) -> list[Path]:
    return [workspace.root]


# The folders whose markdown files a CLI loads below them, each with a frontmatter that only says when it applies:
# Claude Code's rules (`paths:`), GitHub Copilot CLI's path-specific instructions (`applyTo:`).
FOLDERS = ((".claude/rules", ".md"), (".github/instructions", ".instructions.md"))
IMPORT_HOPS = 5      # how deep Claude Code follows an imported file's own imports


def read(reader: Reader, prefix: str) -> list[Fact]:
    facts: list[Fact] = []
    gemini_named = [name for name in context_file_names(reader.root / GEMINI_FOLDER) if name not in FILES]
    files = [*FILES, *gemini_named]
    named = [name for name in files if (reader.root / name).exists() or (reader.root / name).is_symlink()]
    below = [name for folder, suffix in FOLDERS for name in reader.named_in(folder, suffix, below=True)]
    seen = {posixpath.normpath(name) for name in [*named, *below]}     # each read once, as itself
    for name in files:
        loaded = reader.read(name)
        if loaded is not None:
            facts += _notes(loaded.text, name, prefix, loaded.written)
            facts += _imported(reader, prefix, name, import_lines(loaded.text, section=SECTION), seen, 1)
    for name in below:
        loaded = reader.read(name)
        if loaded is None:
            continue
        split = frontmatter(loaded.text)
        if split.problem is not None:
            at, what = split.problem
            reader.problems.append(Violation.of(codes.IMPORT_FRONTMATTER_INVALID, reader.shown(name), at, what=what))
            continue
        facts += _notes(split.body, name, prefix, loaded.written, split.body_line)
        lines = [(at + split.body_line - 1, target) for at, target in import_lines(split.body, section=SECTION)]
        facts += _imported(reader, prefix, name, lines, seen, 1)
    return facts


def _notes(text: str, name: str, prefix: str, written: date | None, first_line: int = 1) -> list[Fact]:
    return [Fact(NAME, f"{prefix}/{name}", block.line, block.text, PROPOSAL, written)
            for block in blocks(outside_managed(text, section=SECTION), first_line)]


def _imported(reader: Reader, prefix: str, name: str, lines: list[tuple[int, str]], seen: set[str],
              hop: int) -> list[Fact]:
    """The notes of the files `name`'s import `lines` name, and of those their own imports name, IMPORT_HOPS
    deep; each file once (`seen`). What is not read goes to `reader.not_read`."""
    facts = []
    for line, target in lines:
        rel, why = _target(name, target)
        if rel is None or rel in seen:
            if why:
                reader.not_read.append(NotRead(f"{prefix}/{name}", line, target, why))
            continue
        if hop > IMPORT_HOPS:
            reader.not_read.append(NotRead(f"{prefix}/{name}", line, target,
                                           f"more than {IMPORT_HOPS} imports deep; Claude Code stops there too"))
            continue
        if not ((reader.root / rel).exists() or (reader.root / rel).is_symlink()):
            reader.not_read.append(NotRead(f"{prefix}/{name}", line, target, "no such file in the project"))
            continue
        seen.add(rel)
        loaded = reader.read(rel)    # a link or a file that cannot be read is a problem, as any source file's
        if loaded is not None:
            facts += _notes(loaded.text, rel, prefix, loaded.written)
            facts += _imported(reader, prefix, rel, import_lines(loaded.text, section=SECTION), seen, hop + 1)
    return facts


def _target(name: str, target: str) -> tuple[str | None, str]:
    """The file an import in `name` names, relative to the source's directory, or None and why it is not read
    (an empty reason: nothing to say)."""
    if target.startswith("~") or posixpath.isabs(target) or ":" in target.split("/")[0]:
        return None, "outside the project (a path at home or an absolute one): the user's own"
    rel = posixpath.normpath(posixpath.join(posixpath.dirname(name), target))
    if rel == ".." or rel.startswith("../"):
        return None, "outside the project"
    if not rel.endswith(".md"):
        return None, "not a markdown file: notes are read from markdown only"
    return rel, ""
