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
  notes says so: `_below_frontmatter`); GitHub Copilot CLI reads `.claude/CLAUDE.md` too;
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

from gitmem import gitio
from gitmem.interop.facts import PROPOSAL, Fact
from gitmem.interop.gemini import SECTION
from gitmem.interop.gemini_places import context_file_names
from gitmem.interop.import_follow import Following, as_itself, read_with_imports
from gitmem.interop.shapes import frontmatter, import_lines, note_blocks, shown_as_written
from gitmem.interop.sources import NotRead, Reader, SourceFile
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
# The names of Claude Code's instruction files, wherever in the project: it cuts their frontmatter.
_CLAUDE_NAMES = frozenset({"CLAUDE.md", "CLAUDE.local.md"})
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
            facts += read_with_imports(reader, prefix, rel, seen, 1, _following(rel))
    for name in below:       # the walk refused every link among them
        facts += read_with_imports(reader, prefix, name, seen, 1, _following(name))
    return facts


def _following(rel: str) -> Following:
    return _CUT if _cuts_frontmatter(rel) else _WRITTEN


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


def _cuts_frontmatter(rel: str) -> bool:
    """Whether a frontmatter atop `rel`, an instruction file of the project, is the file's settings and not its
    text: Claude Code cuts it off a CLAUDE.md (at the top, in `.claude/` or in a folder), CLAUDE.local.md and its
    rules before its model sees them (the pinned release's `processMemoryFile`; Copilot CLI, which loads CLAUDE.md
    too, shows it raw, but the file is Claude Code's). A path-specific `.instructions.md`'s is its settings by
    GitHub's format (`applyTo:`, when Copilot CLI loads it), though the pinned Copilot CLI passes it to its model
    raw with the rest when it loads the file. Codex (AGENTS.md), Gemini CLI (GEMINI.md, the names
    `context.fileName` gives, and the files they import), Qwen Code (QWEN.md) and Copilot CLI's own
    `copilot-instructions.md` show the file to their model as written, `---` lines and all, and nothing defines
    settings there. A file several CLIs load by one name (CLAUDE.md a link to AGENTS.md, read as AGENTS.md) is read
    as the one it is read as."""
    return (posixpath.basename(rel) in _CLAUDE_NAMES
            or any(rel.startswith(f"{folder}/") for folder, _, _ in FOLDERS))


def _below_frontmatter(reader: Reader, loaded: SourceFile, prefix: str) -> tuple[list[Fact], list[tuple[int, str]]]:
    """The notes and `@path` imports of a file whose frontmatter is its settings (`_cuts_frontmatter`), or of a file
    it imports, below that frontmatter (`---` … `---` at the top).

    The frontmatter is never notes: Claude Code neither shows it to its model nor finds an import in it. Only a rule's
    `paths:` (Claude Code) or an instructions file's `applyTo:` (Copilot CLI) changes what the CLI does: each note
    says that scope (`(for tests/**) Run the suite …`), as it holds only there. The other keys (a `description:`, a
    CLAUDE.md's `paths:`, which loads it for every file anyway) change nothing and are left out.

    A frontmatter that does not parse (not YAML, not a mapping) is left out too, and the text below it read: Claude
    Code hides those lines from its model and loads the rest (checked end to end), so stopping the whole import over
    them (GM951, as for a topic file, whose frontmatter is the memory's name and type) would keep from the user
    every note their CLI does use, over text it does not. What was left out is said under `not_read`
    (`./CLAUDE.md:1: frontmatter (lines 1-3) not read, …`), so nothing is lost unsaid; a rule's notes then say no
    scope, as none could be read."""
    split = frontmatter(loaded.text)
    if split.problem is not None:
        _, what = split.problem
        reader.not_read.append(NotRead(
            f"{prefix}/{loaded.rel}", 1, f"1-{split.body_line - 1}",
            f"{what.removeprefix('has ')}: left out as the file's settings, not its notes; the text below it is "
            "read", kind="frontmatter"))
    scope = _scope(loaded.rel, split.meta)
    return _notes_and_imports(split.body, split.body_line, loaded, prefix, scope)


def _as_written(reader: Reader, loaded: SourceFile, prefix: str) -> tuple[list[Fact], list[tuple[int, str]]]:
    """The notes and `@path` imports of a file whose CLI shows it to its model as written (`_cuts_frontmatter`), or of
    a file it imports: the lines between a `---` at the top and the next are read as the rest is, notes and imports
    alike (`---` / `Use pnpm, never npm.` / `---` is a note; an `@docs/x.md` there is followed: shapes'
    `shown_as_written`)."""
    return _notes_and_imports(shown_as_written(loaded.text), 1, loaded, prefix, "")


def _notes_and_imports(text: str, first_line: int, loaded: SourceFile, prefix: str,
                       scope: str) -> tuple[list[Fact], list[tuple[int, str]]]:
    """The notes of `text`, the part of `loaded` a CLI shows its model (from `first_line`), each with its `scope`
    said, and its `@path` imports, each with its line in the whole file."""
    notes = [Fact(NAME, f"{prefix}/{loaded.rel}", block.line, scope + block.text, PROPOSAL, loaded.written)
             for block in note_blocks(text, section=SECTION, first_line=first_line)]
    imports = [(at + first_line - 1, target) for at, target in import_lines(text, section=SECTION)]
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


# How each file is read, and so each file it imports: a file is loaded with the one that imports it, by that CLI.
_CUT = Following(_below_frontmatter, "the project")
_WRITTEN = Following(_as_written, "the project")
