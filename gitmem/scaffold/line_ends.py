"""A file's own line ends, kept through an edit made on its text with `\\n` ends.

`gitmem init` edits a user's file (settings, instructions) on its text read with CRLF as LF, so that one edit
serves both. Written back, each line the file had keeps the end it had, a line the edit changed the end of the line
it replaces, and a line the edit adds the end of the line before it: a file with CRLF on some lines and LF on
others comes back as it was but for the edit.
"""
from __future__ import annotations

from difflib import SequenceMatcher

CRLF, LF = "\r\n", "\n"


def with_own_line_ends(old: str, new: str) -> str:
    """`new`, an edit of `old` made with `old`'s CRLF read as LF, with its lines' ends as `old` had them."""
    if CRLF not in old:
        return new
    if LF not in old.replace(CRLF, ""):          # every line CRLF: so is every line of the edit
        return new.replace(LF, CRLF)
    pieces = old.split(LF)
    old_ends = [CRLF if piece.endswith("\r") else LF for piece in pieces[:-1]]
    old_lines = [piece[:-1] if end == CRLF else piece for piece, end in zip(pieces, old_ends, strict=False)]
    old_lines.append(pieces[-1])
    new_lines = new.split(LF)
    ends: list[str] = []
    for tag, old_at, old_to, new_at, new_to in _opcodes(old_lines, new_lines):
        if tag == "equal":
            ends += [old_ends[at] if at < len(old_ends) else LF for at in range(old_at, old_to)]
        else:   # changed lines keep the ends of the lines they replace, in order; added ones the end above them
            had = old_ends[old_at:min(old_to, len(old_ends))] or \
                [old_ends[old_at - 1] if 0 < old_at <= len(old_ends) else old_ends[0]]
            ends += [had[min(at, len(had) - 1)] for at in range(new_to - new_at)]
    return "".join(line + end for line, end in zip(new_lines[:-1], ends, strict=False)) + new_lines[-1]


def _opcodes(old: list[str], new: list[str]) -> list[tuple[str, int, int, int, int]]:
    """difflib's opcodes of `old` into `new`, the lines both start and end with matched first: an edit of a large
    file touches a few lines, and only those between are compared."""
    head = 0
    while head < min(len(old), len(new)) and old[head] == new[head]:
        head += 1
    tail = 0
    while tail < min(len(old), len(new)) - head and old[-1 - tail] == new[-1 - tail]:
        tail += 1
    found: list[tuple[str, int, int, int, int]] = [("equal", 0, head, 0, head)] if head else []
    middle = SequenceMatcher(None, old[head:len(old) - tail], new[head:len(new) - tail], autojunk=False)
    found += [(tag, a + head, b + head, c + head, d + head) for tag, a, b, c, d in middle.get_opcodes()]
    if tail:
        found.append(("equal", len(old) - tail, len(old), len(new) - tail, len(new)))
    return found
