"""Gemini CLI's memories, in both forms.

- the global memory file `~/.gemini/GEMINI.md`, which Gemini CLI loads in every session. Releases with the
  `save_memory` tool appended each fact there as a bullet under `## Gemini Added Memories` (google-gemini/gemini-cli,
  docs/tools/memory.md; MEMORY_SECTION_HEADER in packages/core/src/tools/memoryTool.ts); later ones have no such
  tool, and the model edits the file directly, anywhere in it ("Global Personal Memory … There is no `save_memory`
  tool": `toolUsageRememberingFacts` in the pinned release, agent-cli/gemini-cli). So every bullet and paragraph
  of it is a memory, outside gitmem's managed blocks and lines of `@path` imports alone. The files it imports are
  read too, found as Gemini CLI finds them (gitmem.interop.at_imports; never in code) and followed as it loads them
  (gitmem.interop.import_follow): inside `~/.gemini` only, five hops deep (Gemini CLI goes on to a repository
  holding `~/.gemini`; why gitmem does not, there); an import of anything else is said under `not_read`. A
  project's own GEMINI.md may hold the same section, which is read here; the rest of it is the project's notes
  (gitmem.interop.notes).
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
from gitmem.interop.gemini_places import DEFAULT_CONTEXT_FILE, context_file_names, project_memory_dir
from gitmem.interop.import_follow import Following, read_with_imports
from gitmem.interop.shapes import blocks, import_lines, note_blocks, section, shown_as_written
from gitmem.interop.sources import Reader, SourceFile
from gitmem.workspace import Workspace

NAME = "gemini"
WHAT = "Gemini CLI memories"
CONTEXT_FILE = DEFAULT_CONTEXT_FILE     # the project's, and the global one unless the settings name others
SECTION = "Gemini Added Memories"


def default_roots(workspace: Workspace, environ: Mapping[str, str], home: Path) -> list[Path]:
    gemini = Path(environ.get("GEMINI_CLI_HOME") or home) / ".gemini"
    return [gemini, project_memory_dir(gemini, workspace.root), workspace.root]


def added_memories(reader: Reader, prefix: str, rel: str = CONTEXT_FILE) -> list[Fact]:
    """The bullets and paragraphs of the `## Gemini Added Memories` section of the project's own GEMINI.md (notes
    reads the rest of it)."""
    loaded = reader.read(rel)
    found = section(loaded.text, SECTION) if loaded is not None else None
    if loaded is None or found is None:
        return []
    body, first = found
    return [Fact(NAME, f"{prefix}/{rel}", block.line, block.text, PROPOSAL, loaded.written)
            for block in blocks(body, first)]


def _memories(reader: Reader, loaded: SourceFile, prefix: str) -> tuple[list[Fact], list[tuple[int, str]]]:
    """Every bullet and paragraph of a global memory file, or of a file it imports, the section's and the rest,
    outside gitmem's managed blocks and lines of `@path` imports alone: the model writes its memories anywhere. Its
    imports are those Gemini CLI, the one CLI that loads it, finds. Gemini CLI cuts no frontmatter: the lines between
    `---`s at the top are memories and imports as the rest are (`shown_as_written`)."""
    text = shown_as_written(loaded.text)
    return ([Fact(NAME, f"{prefix}/{loaded.rel}", block.line, block.text, PROPOSAL, loaded.written)
             for block in note_blocks(text)], import_lines(text, gemini_only=True))


# The global memory's imports, followed as Gemini CLI follows them: inside its own folder only (import_follow).
_GLOBAL = Following(_memories, "Gemini CLI's own folder")


def read(reader: Reader, prefix: str) -> list[Fact]:
    if prefix == ".":           # the project's GEMINI.md: its section (notes reads the rest)
        return added_memories(reader, prefix)
    names = context_file_names(reader.root)
    seen = set(names)           # each context file is read as itself, never again as another's import
    facts = [fact for name in names for fact in read_with_imports(reader, prefix, name, seen, 1, _GLOBAL)]
    if (reader.root / topic_files.INDEX).exists():
        facts += topic_files.read_topic_files(reader, NAME, prefix)
    facts += gemini_inbox.read_inbox(reader, NAME, prefix)
    return facts
