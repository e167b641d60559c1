"""Plain notes a team keeps in the files the agent CLIs read as the project's instructions: every bullet item and
paragraph outside gitmem's own managed blocks (`<!-- gitmem:begin … -->`), outside Gemini's `## Gemini Added
Memories` section (the `gemini` source reads it) and other than lines of `@path` imports alone. A file that is
one of gitmem's memory files (CLAUDE.md made RULES) is gitmem's own and is never read
(gitmem.interop.sources.Reader). Notes land as proposals.

The files, as each CLI the project supports finds them at the top of the project (a CLI that reads AGENTS.md
needs no name of its own: OpenCode, Codex, Cursor):
- Claude Code: `CLAUDE.md` or `.claude/CLAUDE.md`, and the personal `CLAUDE.local.md` (code.claude.com/docs/en/
  memory, "Determine memory type"), and every `*.md` below `.claude/rules/` (the pinned release's
  `getMemoryFilesForNestedDirectory`: a rule's `paths:` frontmatter says for which files it loads, and each of its
  notes says so: `_instructions`); GitHub Copilot CLI reads `.claude/CLAUDE.md` too;
- Gemini CLI: `GEMINI.md`; Qwen Code: `QWEN.md` (packages/core/src/utils/memory-constants.ts);
- GitHub Copilot CLI: `.github/copilot-instructions.md`, beside AGENTS.md, CLAUDE.md and GEMINI.md (its
  instruction discovery, as the pinned release, agent-cli/copilot, carries it), and every `*.instructions.md` below
  `.github/instructions/` (docs.github.com, "Adding custom instructions for GitHub Copilot CLI": path-specific
  instructions, whose `applyTo:` frontmatter only says when they apply);
- Gemini CLI also loads each name `context.fileName` gives in the project's `.gemini/settings.json` (a name or a
  list, as in the user's settings: gitmem.interop.gemini_places).

A file those import with an `@path` (anywhere in the text, never in code: gitmem.interop.at_imports) is read as
Claude Code and Gemini CLI load it (gitmem.interop.import_follow): a path relative to the importing file, five hops
deep, a markdown file inside the project. What is not read is said beside the plan, why with it (`NotRead`), and
stops nothing: a path at home or outside the project is the user's own and not the project's notes (nothing
outside is read), a markdown name with no file there may be a mention.
"""
from __future__ import annotations

import posixpath
import re
from collections.abc import Mapping
from pathlib import Path

from gitmem import codes, gitio
from gitmem.checks.violation import Violation
from gitmem.interop.facts import PROPOSAL, Fact
from gitmem.interop.gemini import SECTION
from gitmem.interop.gemini_places import context_file_names
from gitmem.interop.import_follow import Following, as_itself, read_with_imports
from gitmem.interop.shapes import frontmatter, import_lines, note_blocks
from gitmem.interop.sources import Reader, SourceFile
from gitmem.workspace import Workspace

NAME = "notes"
GEMINI_FOLDER = ".gemini"     # the project's Gemini CLI settings folder
WHAT = "notes in the agent CLIs' instruction files (CLAUDE.md, AGENTS.md, GEMINI.md, .claude/rules/, …)"
FILES = ("CLAUDE.md", ".claude/CLAUDE.md", "CLAUDE.local.md", "AGENTS.md", "GEMINI.md", "QWEN.md",
         ".github/copilot-instructions.md")


def default_roots(workspace: Workspace, environ: Mapping[str, str], home: Path) -> list[Path]:
    return [workspace.root]


# The folders whose markdown files a CLI loads below them, each with the frontmatter key that says for which of the
# project's files it loads one (its scope): Claude Code's rules (`paths:`), GitHub Copilot CLI's path-specific
# instructions (`applyTo:`).
FOLDERS = ((".claude/rules", ".md", "paths"), (".github/instructions", ".instructions.md", "applyTo"))
# A scope of every file: the rule loads for the whole project.
_EVERYWHERE = frozenset({"**", "**/*"})
# The names a CLI loads in the project's folders too: Claude Code's CLAUDE.md when it works there, Codex's and
# Copilot CLI's AGENTS.md, Gemini CLI's GEMINI.md (or its context.fileName), Qwen Code's QWEN.md.
NESTED = ("CLAUDE.md", "AGENTS.md", "GEMINI.md", "QWEN.md")


def read(reader: Reader, prefix: str) -> list[Fact]:
    facts: list[Fact] = []
    gemini_named = [name for name in context_file_names(reader.root / GEMINI_FOLDER) if name not in FILES]
    files = [*FILES, *gemini_named]
    files += [name for name in _nested(reader.root, [*NESTED, *gemini_named]) if name not in files]
    below = [name for folder, suffix, _ in FOLDERS for name in reader.named_in(folder, suffix, below=True)]
    # Each file is read once, as itself: those named here, and the files links among them lead to.
    seen = {posixpath.normpath(name) for name in [*files, *below]
            if (reader.root / name).is_file() and not (reader.root / name).is_symlink()}
    for name in files:
        rel = as_itself(reader.root, name, seen)
        if rel is not None:
            facts += read_with_imports(reader, prefix, rel, seen, 1, _FOLLOWING)
    for name in below:       # the walk refused every link among them
        facts += read_with_imports(reader, prefix, name, seen, 1, _FOLLOWING)
    return facts


def _nested(root: Path, names: list[str]) -> list[str]:
    """The instruction files below the top of the project, in its folders (a package's own CLAUDE.md or
    AGENTS.md in a monorepo), that git tracks: each CLI loads them when it works there (Gemini CLI at start).
    Git's index names them without walking what it ignores (node_modules, a build). A source read elsewhere
    (`--from` a folder that is no repository's top) has none."""
    try:
        repo = gitio.open_repo(root)
    except gitio.RepoError:
        return []
    top = gitio.work_tree(repo)
    if top is None or top.resolve() != root.resolve():
        return []
    return [path for path in gitio.tracked_named(repo, frozenset(names)) if "/" in path]


def _instructions(reader: Reader, loaded: SourceFile, prefix: str) -> tuple[list[Fact], list[tuple[int, str]]]:
    """The notes of an instruction file, or of a file one imports, and its `@path` imports, below its frontmatter.

    A frontmatter (`---` … `---` at the top) is never notes: Claude Code cuts it off every file it loads, a CLAUDE.md,
    a rule or an import alike, and neither shows it to its model nor finds an import in it (the pinned release's
    `processMemoryFile`); only a rule's `paths:` changes what it does. So does Copilot CLI's `applyTo:` for its
    path-specific instructions: each note of such a file says its scope (`(for tests/**) Run the suite …`), as it
    holds only there. The other keys (a `description:`, a CLAUDE.md's `paths:`, which loads it for every file anyway)
    change nothing a CLI does and are left out, as is the frontmatter the CLIs that show it raw (Gemini CLI, Codex)
    pass on with the rest. One that does not parse is GM951, as a topic file's."""
    split = frontmatter(loaded.text)
    if split.problem is not None:
        at, what = split.problem
        reader.problems.append(Violation.of(codes.IMPORT_FRONTMATTER_INVALID, reader.shown(loaded.rel), at,
                                            what=what))
        return [], []
    scope = _scope(loaded.rel, split.meta)
    notes = [Fact(NAME, f"{prefix}/{loaded.rel}", block.line, scope + block.text, PROPOSAL, loaded.written)
             for block in note_blocks(split.body, section=SECTION, first_line=split.body_line)]
    imports = [(at + split.body_line - 1, target) for at, target in import_lines(split.body, section=SECTION)]
    return notes, imports


def _scope(rel: str, meta: dict[str, object]) -> str:
    """For which of the project's files a CLI loads `rel`, as the key its folder's CLI reads names them
    (`(for tests/**, docs/**) `); "" when it loads the file for every one. A list or a comma-separated string,
    as Claude Code splits `paths:` (a comma inside `{a,b}` is the pattern's own)."""
    key = next((key for folder, _, key in FOLDERS if rel.startswith(f"{folder}/")), None)
    patterns = _patterns(meta.get(key)) if key is not None else []
    if not patterns or set(patterns) <= _EVERYWHERE:
        return ""
    return f"(for {', '.join(patterns)}) "


def _patterns(value: object) -> list[str]:
    if isinstance(value, list):
        return [pattern for item in value for pattern in _patterns(item)]
    if not isinstance(value, str):
        return []
    return [part.strip() for part in re.split(r",(?![^{]*\})", value) if part.strip()]


_FOLLOWING = Following(_instructions, "the project")
