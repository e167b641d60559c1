"""GM1xx: NOW blocks are short, well headed, and newest first."""
from __future__ import annotations

from gitmem.checks import CheckInput
from gitmem.checks.common import texts
from gitmem.checks.violation import Violation, from_problem
from gitmem.memory import now
from gitmem.memory.text import nonblank_count


def _new_top(old: str | None, new: str) -> tuple[str, int | None]:
    """When NEW is blocks prepended to OLD's blocks, only the new blocks plus the old top need checking.

    Returns the text to check and how many blocks to parse (None: all of them).
    """
    if old is None:
        return new, None
    start = old.find("\n## ")
    if start < 0:
        return new, None
    old_blocks = old[start + 1:]
    if not new.endswith(old_blocks):
        return new, None
    prefix = new[: len(new) - len(old_blocks)]
    return new, prefix.count("\n## ") + (1 if prefix.startswith("## ") else 0) + 1


def check(inp: CheckInput, skip: set[str]) -> list[Violation]:
    loaded = texts(inp, "now", skip)
    if loaded is None:
        return []
    path, old, new = loaded
    text, blocks = _new_top(old, new)
    doc = now.parse(text, max_blocks=blocks)
    found = [from_problem(path, p) for p in doc.problems]
    limit = inp.config.limits.now_block_lines
    for block in doc.blocks:
        count = nonblank_count(block.body)
        if count > limit:
            found.append(Violation(path, block.line, "GM101",
                                   f"NOW block has {count} non-blank lines; the limit is {limit}",
                                   "keep Did / Human / Next short; details belong in LOG"))
    for newer, older in zip(doc.blocks, doc.blocks[1:]):
        if newer.when.moment < older.when.moment:
            found.append(Violation(path, older.line, "GM103",
                                   f"block {older.when} is newer than the block above it ({newer.when}); "
                                   "NOW is newest first", "put new blocks on top"))
    return found
