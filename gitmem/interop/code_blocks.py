"""Which lines of a markdown text are code, or an HTML comment: the one rule the notes (gitmem.interop.shapes) and
the `@path` imports (gitmem.interop.at_imports) share, so a line is code to both or to neither.

As CommonMark reads them (and Claude Code's markdown lexer, marked, with it): a fence of ``` or `~~~` opens a block
that closes on a fence of its own character at least as long with nothing after it, or where the list item that
opened it ends (the next line indented less than the item's text); a line indented four or more opens an indented
block, except where it continues a paragraph; inside a list item both are counted from the item's text (an item's
code is indented four past it). The fence lines are code too. A line that opens with `<!--` opens a comment that
runs to the line holding `-->`, or where its list item ends; a fence inside a comment opens nothing.
"""
from __future__ import annotations

import re

_FENCE_RE = re.compile(r"^(`{3,}|~{3,})")
_ITEM_RE = re.compile(r"^( *)([-*+]|\d{1,9}[.)])(?: +|$)")
_HEADING_RE = re.compile(r"^#{1,6}(?: |$)")
_COMMENT = "<!--"


CODE, COMMENT, TEXT = "code", "comment", "text"


def line_kinds(lines: list[str]) -> list[str]:
    """For each of `lines`, what it is: CODE (a fenced or an indented block's), COMMENT (an HTML comment's that opens
    at the line's start) or TEXT."""
    kinds = []
    fence, floor = "", 0           # the open fence (```, ~~~~) or "<!--", and the item's column that bounds it
    item: int | None = None        # the column of the open list item's text
    paragraph = False              # the line above is a paragraph's: an indented line continues it
    for line in lines:
        expanded = line.expandtabs(4)
        stripped = expanded.strip()
        indent = len(expanded) - len(expanded.lstrip())
        if fence and stripped and indent < floor:
            fence = ""                                  # the list item ended, and the block it held with it
        if fence == _COMMENT:
            fence = "" if "-->" in line else fence
            kinds.append(COMMENT)
            continue
        if fence:
            closing = _FENCE_RE.match(stripped)
            if closing and closing.group(1)[0] == fence[0] and len(closing.group(1)) >= len(fence) \
                    and not stripped.strip(fence[0]):
                fence = ""
            kinds.append(CODE)
            continue
        if not stripped:
            kinds.append(TEXT)
            paragraph = False
            continue
        if item is not None and indent < item and not paragraph:
            item = None
        base = item or 0
        if not paragraph and indent >= base + 4:
            kinds.append(CODE)                          # an indented code block
            continue
        if (opened := _FENCE_RE.match(stripped)) and indent < base + 4:   # deeper, it goes on a paragraph
            fence, floor, paragraph = opened.group(1), base, False
            kinds.append(CODE)
            continue
        if stripped.startswith(_COMMENT) and indent < base + 4:
            fence = "" if "-->" in stripped else _COMMENT
            floor, paragraph = base, False
            kinds.append(COMMENT)
            continue
        if marker := _ITEM_RE.match(expanded):
            item, paragraph = len(marker.group(0)), True
        else:
            paragraph = not _HEADING_RE.match(stripped)
        kinds.append(TEXT)
    return kinds
