"""Following the `@path` imports of a memory file the agent CLIs load, as Claude Code and Gemini CLI load them: a
path relative to the importing file, IMPORT_HOPS deep (code.claude.com/docs/en/memory, "Import additional files";
Gemini CLI's `processImports`, maxDepth 5), each file once, and only inside the folder the CLI allows: the project
for the project's files; `~/.gemini` for Gemini CLI's global memory.

There gitmem stops short of Gemini CLI on purpose. The pinned release bounds the global memory's imports by the
nearest folder above `~/.gemini` that holds a `.git` (packages/core/src/utils/memoryImportProcessor.ts,
`findProjectRoot` and `validateImportPath`), `~/.gemini` itself only when none does: so in a home kept as a
repository (dotfiles), or under a `.git` some tool left higher up, it loads `@../notes/x.md` from anywhere in it.
That bound is an accident of where a `.git` happens to be, not a place the user chose for Gemini's memory; what
lies there is the rest of their home, which `gitmem import gemini` would propose as Gemini's memories. So the
import reads `~/.gemini` only, whatever is above it, and names each import outside it under `not_read`: the user
sees what was left and can import that folder with `--from`.

What is not read is said (`NotRead`) and stops nothing: a path at home or outside that folder (nothing outside is
read), a file that is not markdown, a markdown file that is not there. A name that looks like a path yet names
neither a file nor a markdown file (`@types/node`, `@dana`, a folder's `@src`) is a mention: the CLIs look for
it and read nothing, and so is it here, unsaid.
"""
from __future__ import annotations

import os
import posixpath
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from gitmem.interop.facts import Fact
from gitmem.interop.sources import NotRead, Reader, SourceFile

IMPORT_HOPS = 5      # how deep Claude Code and Gemini CLI follow an imported file's own imports


# What a source reads in one of its files, given the source's prefix: the facts, and the `@path` imports (each line
# and path); a file it cannot read (a frontmatter that does not parse) is a problem the reader holds.
FileReading = Callable[[Reader, SourceFile, str], tuple[list[Fact], list[tuple[int, str]]]]


@dataclass(frozen=True)
class Following:
    """How one source reads its memory files and the files they import."""

    read: FileReading
    place: str                                           # where an import must stay: "the project"


def read_with_imports(reader: Reader, prefix: str, rel: str, seen: set[str], hop: int,
                      following: Following) -> list[Fact]:
    """The facts of the file `rel`, and of the files its imports name (`hop` the depth of those); a link or a file
    that cannot be read is a problem, as any source file's."""
    loaded = reader.read(rel)
    if loaded is None:
        return []
    facts, imports = following.read(reader, loaded, prefix)
    return [*facts, *follow_imports(reader, prefix, rel, imports, seen, hop, following)]


def follow_imports(reader: Reader, prefix: str, name: str, imports: list[tuple[int, str]], seen: set[str],
                   hop: int, following: Following) -> list[Fact]:
    """The facts of the files `name`'s `imports` name, and of those their own imports name, IMPORT_HOPS deep; each
    file once (`seen`). What is not read goes to `reader.not_read`."""
    facts = []
    for line, target in imports:
        named, why = _target(name, target, following.place)
        if named is not None and named in seen:
            continue
        if named is not None and not named.endswith(".md"):
            where = reader.root / named
            if not (os.path.isfile(where) or os.path.islink(where)):
                continue        # a mention shaped like a path (`@types/node`, `@src`): no CLI reads a thing there
            named, why = None, "not a markdown file: notes are read from markdown only"
        elif named is not None and not os.path.lexists(reader.root / named):
            named, why = None, f"no such file in {following.place}"
        elif named is not None and hop > IMPORT_HOPS:
            named, why = None, f"more than {IMPORT_HOPS} imports deep; Claude Code and Gemini CLI stop there too"
        if named is None:
            reader.not_read.append(NotRead(f"{prefix}/{name}", line, target, why))
            continue
        rel = as_itself(reader.root, named, seen)
        if rel is None:
            continue
        seen.add(rel)
        facts += read_with_imports(reader, prefix, rel, seen, hop + 1, following)
    return facts


def _target(name: str, target: str, place: str) -> tuple[str | None, str]:
    """The file an import in `name` names, relative to the source's directory; or None and why it is not read."""
    if target.startswith("~") or posixpath.isabs(target) or ":" in target.split("/")[0]:
        return None, f"outside {place} (a path at home or an absolute one)"
    rel = posixpath.normpath(posixpath.join(posixpath.dirname(name), target))
    if rel == ".." or rel.startswith("../"):
        return None, f"outside {place}"
    return rel, ""


def as_itself(root: Path, name: str, seen: set[str]) -> str | None:
    """The file to read for `name`: `name` itself; or, when it is a link to a file of the source (CLAUDE.md a
    link to AGENTS.md, as a project keeps one file for every CLI), that file, None when it is read as itself
    anyway. Any other link is `name` still, which the reader refuses as it refuses every link."""
    if not os.path.islink(root / name):
        return name
    inside = _linked_file(root, name)
    if inside is None:
        return name
    if inside in seen:
        return None
    seen.add(inside)
    return inside


def _linked_file(root: Path, name: str) -> str | None:
    """The source's regular file the link `name` leads to, by a relative path that stays inside the source and
    meets no other link on the way (`name`'s own folders included); None for any other link."""
    try:
        target = os.readlink(root / name)
    except OSError:
        return None
    inside = posixpath.normpath(posixpath.join(posixpath.dirname(name), target))
    if posixpath.isabs(target) or inside == ".." or inside.startswith("../"):
        return None
    for path in (posixpath.dirname(name), inside):
        steps = [step for step in path.split("/") if step not in ("", ".")]
        if any(os.path.islink(root.joinpath(*steps[:at])) for at in range(1, len(steps) + 1)):
            return None
    return inside if (root / inside).is_file() else None
