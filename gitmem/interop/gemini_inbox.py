"""Gemini CLI's memory inbox: the patches its background extraction proposes, held for the human's review.

Where and what (google-gemini/gemini-cli, as the pinned release bundles it): the inbox is
`<project memory dir>/.inbox/<kind>/`, kind `private` (targets: MEMORY.md and sibling `*.md` of the project
memory dir) or `global` (target: ~/.gemini/GEMINI.md) (packages/core/src/services/memoryPatchUtils.ts,
getMemoryPatchRoot and getAllowedMemoryPatchRoots). `/memory inbox` lists every `*.patch` under those folders,
walked recursively (commands/memory.ts, listInboxPatchFiles); the extraction agent writes one canonical
`extraction.patch` per kind (agents/skill-extraction-agent.ts). Each is a unified diff whose `---`/`+++` headers
name absolute target paths (`/dev/null` for a new file) and whose `@@ -a,b +c,d @@` hunks carry ` `, `-` and `+`
lines. Nothing there is applied until the human approves it in Gemini CLI.

So each patch is one proposal of the import's decision, never applied: its text says which file it would change
and the lines it would add and remove. A patch that is not a unified diff with a hunk is GM955 (Gemini CLI drops
it in silence; an import says so, and imports nothing); an empty one is skipped as empty.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import PurePosixPath

from gitmem import codes
from gitmem.checks.violation import Violation
from gitmem.interop.facts import PROPOSAL, Fact
from gitmem.interop.sources import Reader

INBOX = ".inbox"
KINDS = ("private", "global")
_HUNK_RE = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")
_GIT_PREFIX_RE = re.compile(r"^[ab]/")


class NotAPatch(Exception):
    """The text is not a unified diff Gemini CLI could apply; `line` is where it stops being one."""

    def __init__(self, line: int, what: str) -> None:
        super().__init__(what)
        self.line = line
        self.what = what


@dataclass
class FileChange:
    target: str                 # the `+++` path (the `---` path when the file is removed)
    added: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)


def parse_patch(text: str) -> tuple[int, list[FileChange]]:
    """(the line of the first hunk, each target's change) of a unified diff; NotAPatch when it is not one."""
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()             # the text's last line end ends a line; it does not start an empty one
    changes: list[FileChange] = []
    first = 0
    at = 0
    while at < len(lines):
        line = lines[at]
        if line.startswith("--- ") and at + 1 < len(lines) and lines[at + 1].startswith("+++ "):
            old, new = _path(line[4:]), _path(lines[at + 1][4:])
            changes.append(FileChange(old if new == "/dev/null" else new))
            at += 2
            continue
        found = _HUNK_RE.match(line)
        if found is None:
            at += 1             # a preamble line (`diff --git`, `index …`) or blank: not part of a hunk
            continue
        if not changes:
            raise NotAPatch(at + 1, "has a `@@` hunk before any `---`/`+++` file header")
        first = first or at + 1
        old_left = int(found[2]) if found[2] is not None else 1
        new_left = int(found[4]) if found[4] is not None else 1
        at += 1
        while old_left > 0 or new_left > 0:
            if at >= len(lines):
                raise NotAPatch(at, "ends inside a hunk: its `@@` header counts more lines than follow")
            body = lines[at]
            kind, rest = body[:1], body[1:]
            if kind == "+":
                changes[-1].added.append(rest)
                new_left -= 1
            elif kind == "-":
                changes[-1].removed.append(rest)
                old_left -= 1
            elif kind in (" ", ""):
                old_left, new_left = old_left - 1, new_left - 1
            elif kind != "\\":  # `\ No newline at end of file`
                raise NotAPatch(at + 1, f"has a line starting with {kind!r} inside a hunk")
            at += 1
    if not first:
        raise NotAPatch(1, "is not a unified diff: it has no `@@` hunk")
    return first, changes


def _path(header: str) -> str:
    """A header's path: before a tab (the timestamp some tools add), without git's `a/`/`b/`, as Gemini CLI
    strips them."""
    return _GIT_PREFIX_RE.sub("", header.split("\t", 1)[0].strip())


def shown_target(target: str, root: str) -> str:
    """A target as the proposal names it: relative to the memory folder when inside it, else its file name."""
    path, base = PurePosixPath(target), PurePosixPath(root)
    return path.relative_to(base).as_posix() if path.is_relative_to(base) else path.name


def describe_proposal(changes: list[FileChange], kind: str, root: str) -> str:
    parts = []
    for change in changes:
        said = [f"adds: {' / '.join(line for line in change.added if line.strip())}" if change.added else "",
                f"removes: {' / '.join(line for line in change.removed if line.strip())}" if change.removed else ""]
        parts.append(f"{shown_target(change.target, root)} — {'; '.join(s for s in said if s) or 'no line changed'}")
    return f"Gemini CLI proposes ({kind} memory, not applied): " + " | ".join(parts)


def read_inbox(reader: Reader, source: str, prefix: str) -> list[Fact]:
    """One proposal per patch in the inbox under the reader's directory (a project memory folder)."""
    facts: list[Fact] = []
    for kind in KINDS:
        for rel in reader.named_in(f"{INBOX}/{kind}", ".patch", below=True):
            loaded = reader.read(rel)
            if loaded is None:
                continue
            if not loaded.text.strip():
                facts.append(Fact(source, f"{prefix}/{rel}", 1, "", PROPOSAL, loaded.written))
                continue
            try:
                line, changes = parse_patch(loaded.text)
            except NotAPatch as err:
                reader.problems.append(Violation.of(codes.IMPORT_PATCH_INVALID, reader.shown(rel), err.line,
                                                    what=err.what))
                continue
            facts.append(Fact(source, f"{prefix}/{rel}", line, describe_proposal(changes, kind, str(reader.root)),
                              PROPOSAL, loaded.written))
    return facts
