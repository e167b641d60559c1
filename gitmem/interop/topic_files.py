"""A `MEMORY.md` index with one topic file per memory, each opening with a YAML frontmatter: Claude Code's auto
memory keeps this shape, and Gemini CLI's private memory follows it.

Claude Code's topic files (docs: code.claude.com/docs/en/memory, "Auto memory"; its memory types are `user`,
`feedback`, `project` and `reference`) carry `name`, `description` and `type` (at the top, or under `metadata:`
as later releases write it). A `feedback` memory is a correction of how to work, with `**Why:**` and
`**How to apply:**` lines: it lands as a lesson. The others are facts about the user, the project or where to
look: they land as proposals. An index line that links a topic file there is that file's entry, not a second fact.
"""
from __future__ import annotations

import posixpath
import re
from datetime import date

from gitmem import codes
from gitmem.checks.violation import Violation
from gitmem.interop.facts import LESSON, PROPOSAL, Fact
from gitmem.interop.shapes import blocks, frontmatter
from gitmem.interop.sources import Reader

INDEX = "MEMORY.md"
TYPES = ("user", "feedback", "project", "reference")
_LINK_RE = re.compile(r"\]\(([^)\s]+\.md)\)")
_WHY_RE = re.compile(r"^\*\*Why:?\*\*:?\s*(.*)$", re.I)
_HOW_RE = re.compile(r"^\*\*How to apply:?\*\*:?\s*(.*)$", re.I)
_COMMENT_RE = re.compile(r"<!--(?:(?!-->).)*-->")        # one comment on a line of its own


def memory_type(meta: dict[str, object]) -> str | None:
    found = meta.get("type")
    nested = meta.get("metadata")
    if found is None and isinstance(nested, dict):
        found = nested.get("type")
    return str(found).strip().lower() if found is not None else None


def read_topic_files(reader: Reader, source: str, prefix: str, rel_dir: str = ".") -> list[Fact]:
    """The facts of the index and the topic files in `rel_dir` of the reader's directory. `prefix` is how the
    origin names that directory (`~/.claude/projects/…/memory`)."""
    facts: list[Fact] = []
    names = reader.markdown_in(rel_dir)
    index = next((n for n in names if n.rsplit("/", 1)[-1] == INDEX), None)
    if index is not None:
        loaded = reader.read(index)
        if loaded is not None:
            for block in blocks(loaded.text):
                # A line pointing to a topic file here is that file's entry; one linking a web page's `.md`, or a
                # topic file that is gone, holds the only copy of its fact.
                links = [link for link in _LINK_RE.findall(block.text) if posixpath.normpath(link) in names]
                if block.bullet and not links:
                    facts.append(Fact(source, f"{prefix}/{index}", block.line, block.text, PROPOSAL, loaded.written))
    for name in names:
        if name == index:
            continue
        loaded = reader.read(name)
        if loaded is None:
            continue
        fact = _topic(reader, source, f"{prefix}/{name}", name, loaded.text, loaded.written)
        if fact is not None:
            facts.append(fact)
    return facts


def _topic(reader: Reader, source: str, shown: str, rel: str, text: str, written: date | None) -> Fact | None:
    split = frontmatter(text)
    if split.problem is not None:
        at, what = split.problem
        reader.problems.append(Violation.of(codes.IMPORT_FRONTMATTER_INVALID, reader.shown(rel), at, what=what))
        return None
    kind = memory_type(split.meta)
    if kind is not None and kind not in TYPES:
        reader.problems.append(Violation.of(
            codes.IMPORT_FRONTMATTER_INVALID, reader.shown(rel), 2,
            what=f"has the memory type {kind!r}; Claude Code's types are {', '.join(TYPES)}"))
        return None
    body_lines: list[str] = []
    why: str | None = None
    how: str | None = None
    for line in split.body.strip().split("\n"):
        if _COMMENT_RE.fullmatch(line.strip()):
            continue         # a comment is not shown as the memory (an export's marker line)
        if (found := _WHY_RE.match(line.strip())) is not None:
            why = found.group(1).strip() or None
        elif (found := _HOW_RE.match(line.strip())) is not None:
            how = found.group(1).strip() or None
        else:
            body_lines.append(line)
    body = "\n".join(body_lines).strip() or str(split.meta.get("description") or "").strip()
    if not body:
        return None          # an empty topic file holds no fact
    offset = next((i for i, line in enumerate(split.body.split("\n")) if line.strip()), 0)
    name = str(split.meta.get("name") or rel.rsplit("/", 1)[-1].removesuffix(".md"))
    return Fact(source, shown, split.body_line + offset, body, LESSON if kind == "feedback" else PROPOSAL, written,
                anchor=name, why=why, how=how)
