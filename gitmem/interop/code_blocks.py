"""Which lines of a markdown text are code, or an HTML comment: the one rule the notes (gitmem.interop.shapes) and
the `@path` imports (gitmem.interop.at_imports) share, so a line is code to both or to neither.

As CommonMark reads them (and Claude Code's markdown lexer, marked, with it): a fence of ``` or `~~~` opens a block
that closes on a fence of its own character at least as long with nothing after it, or where the list item that
opened it ends (the next line indented less than the item's text); a line indented four or more opens an indented
block, except where it continues a paragraph; inside a list item both are counted from the item's text (an item's
code is indented four past it). The fence lines are code too. Only a paragraph's text goes on a list item when it
is indented less than the item's text (a lazy line): a fence, a comment, a heading or an item there ends the item
first, so a fence at column 0 under an item opens a block of the file's own, which only its closing fence ends. A
line that opens with `<!--` opens a comment that runs to the line holding `-->`, or where its list item ends; a
fence inside a comment opens nothing. What follows the `-->` on its line is text (`<!-- off --> see @x.md`, a
multi-line comment's `-->  @x.md`): Claude Code, which drops a comment standing as a block of its own (outside a
list) from what its model reads, keeps that text and follows an import there (its `stripHtmlComments`), and so does
Gemini CLI, so it is text to the imports and the notes alike. A comment inside a paragraph is the paragraph's, in
its note as both CLIs show it to their model; it hides an import (gitmem.interop.at_imports), as Claude Code's
extractor skips it. It is no paragraph, though (CommonMark keeps it in the comment's HTML block): an
indented line under it opens an indented block, where Claude Code follows no import.
"""
from __future__ import annotations

import re

_FENCE_RE = re.compile(r"^(`{3,}|~{3,})")
_ITEM_RE = re.compile(r"^( *)([-*+]|\d{1,9}[.)])(?: +|$)")
_HEADING_RE = re.compile(r"^#{1,6}(?: |$)")
_COMMENT = "<!--"
_COMMENT_END = "-->"


def line_texts(lines: list[str]) -> list[str | None]:
    """For each of `lines`, its text: the line itself, or what follows the `-->` that closes a comment on it
    (stripped); None for a line that is code (a fenced or an indented block's) or an HTML comment's only (one that
    opens at the line's start)."""
    texts: list[str | None] = []
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
            if _COMMENT_END in line:
                fence, paragraph = "", False
            texts.append(_after_comment(line))
            continue
        if fence:
            closing = _FENCE_RE.match(stripped)
            if closing and closing.group(1)[0] == fence[0] and len(closing.group(1)) >= len(fence) \
                    and not stripped.strip(fence[0]):
                fence = ""
            texts.append(None)
            continue
        if not stripped:
            texts.append(line)
            paragraph = False
            continue
        if item is not None and indent < item and (not paragraph or _opens_block(stripped)):
            item = None                                 # a lazy line goes on the item's paragraph; a block never
        base = item or 0
        if not paragraph and indent >= base + 4:
            texts.append(None)                          # an indented code block
            continue
        if (opened := _FENCE_RE.match(stripped)) and indent < base + 4:   # deeper, it goes on a paragraph
            fence, floor, paragraph = opened.group(1), base, False
            texts.append(None)
            continue
        if stripped.startswith(_COMMENT) and indent < base + 4:
            floor, paragraph = base, False
            fence = "" if _COMMENT_END in stripped else _COMMENT
            texts.append(_after_comment(stripped))
            continue
        if marker := _ITEM_RE.match(expanded):
            item, paragraph = len(marker.group(0)), True
        else:
            paragraph = not _HEADING_RE.match(stripped)
        texts.append(line)
    return texts


def _after_comment(line: str) -> str | None:
    """What follows the `-->` that closes a comment on `line`, stripped; None when nothing does, or the comment
    goes on past the line (the line is the comment's only)."""
    if _COMMENT_END not in line:
        return None
    return line[line.index(_COMMENT_END) + len(_COMMENT_END):].strip() or None


def _opens_block(stripped: str) -> bool:
    """Whether a line opens a block of its own (a fence, a comment, a heading, a list item), so it can never go on
    a paragraph as a lazy line: one less indented than a list item's text ends the item there."""
    return bool(_FENCE_RE.match(stripped) or stripped.startswith(_COMMENT) or _HEADING_RE.match(stripped)
                or _ITEM_RE.match(stripped))
