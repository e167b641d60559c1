"""Where a memory file makes an `@path` import, as Claude Code and Gemini CLI find one: anywhere in its text (inside
a sentence, several on a line), never in code.

- Claude Code (the pinned release's bundle, agent-cli/claude-code: its extractor of include paths) cuts off a
  frontmatter, lexes the file as markdown (marked, `gfm: false`), skips the `code` tokens (fenced and indented
  blocks), the `codespan` tokens and HTML comments, and matches `/(?:^|\\s)@((?:[^\\s\\\\]|\\\\ )+)/` in
  every text token; a text token also starts after an emphasis opener or a link's `[`. It cuts the path at `#`,
  unescapes `\\ `, and keeps a path that starts with `./`, `~/`, `/` (not `/` alone) or a letter, digit, `.`, `_`
  or `-` (so `@@name` is none).
- Gemini CLI (google-gemini/gemini-cli, packages/core/src/utils/memoryImportProcessor.ts, `findImports` and
  `findCodeRegions`) takes an `@` at the start or after whitespace, the path running to the next whitespace and
  starting with `.`, `/` or a letter, and skips what lies between matching runs of backticks (inline code, ```).

So an `@` inside a word (`dana@example.com`) is neither's import. What is found here is what either reads, outside
what CommonMark reads as code (a ``` or `~~~` fence, an indented block: gitmem.interop.code_blocks, the notes' rule
too; a code span): an `@secret.md` shown in code is never followed, though Gemini CLI, seeing only backticks as
code, loads one in an indented block or a `~~~` fence (tests/e2e/test_cli_memory_imports.py runs both CLIs). Nor is
one in an HTML comment, which Claude Code skips: Gemini CLI would follow it, but a commented-out import is one its
author switched off. A comment that opens a line runs to its `-->` or to the end of its list item, as the notes
read it too (gitmem.interop.code_blocks), and a fence inside it opens nothing; what follows its `-->` on that line
is text, where both CLIs follow an import; one opened inside a line is hidden with the code spans, and never
closed is text. Whether a path names a file either would read is the follower's
question (gitmem.interop.import_follow): `@types/node` has a path's shape and names no file.
"""
from __future__ import annotations

import bisect
import re

from gitmem.interop.code_blocks import line_texts

_TICKS_RE = re.compile(r"`+")
_BLANK_LINE_RE = re.compile(r"\n[ \t]*(?=\n)")
# Claude Code's rule, at the start of a line, after whitespace, after a link's `[` or an emphasis opener.
_IMPORT_RE = re.compile(r"(?:^|(?<=\s)|(?<=\[))(?P<opener>[*_]{1,3})?@(?P<path>(?:[^\s\\]|\\ )+)", re.MULTILINE)
_PATH_START_RE = re.compile(r"[a-zA-Z0-9._-]")
# Gemini CLI's rule: at the start or after its whitespace, the path running to the next, and starting with `.`,
# `/` or a letter.
_GEMINI_IMPORT_RE = re.compile(r"(?:^|(?<=[ \t\r\n]))@(?P<path>[./a-zA-Z][^ \t\r\n]*)", re.MULTILINE)


def at_imports(text: str, *, gemini_only: bool = False) -> list[tuple[int, str]]:
    """Each `@path` import of `text` outside code and comments, in the order they stand: its line (1-based) and the
    path, by Claude Code's rule or Gemini CLI's, its `#fragment` cut and its escaped spaces unescaped. `gemini_only`:
    a file only Gemini CLI loads (its global memory), whose imports are those its rule finds, paths as written."""
    prose = _without_spans("\n".join(line or "" for line in line_texts(text.split("\n"))))
    line_of = _LineOf(prose)
    if gemini_only:
        return [(line_of(found.start()), found.group("path")) for found in _GEMINI_IMPORT_RE.finditer(prose)]
    imports = []
    for found in _IMPORT_RE.finditer(prose):
        path = found.group("path")
        if (opener := found.group("opener")) and opener in path:
            path = path[:path.index(opener)]          # the emphasis closes there: `**@x.md**`
        if found.start() > 0 and prose[found.start() - 1] == "[":
            path = path.split("]")[0]                 # the link's text ends there: `[@x.md](…)`
        path = path.split("#")[0].replace("\\ ", " ")
        if _is_path(path):
            imports.append((line_of(found.start()), path))
    return imports


class _LineOf:
    """The line (1-based) of an offset of `text`, for offsets asked in order: counted on from the last, so a file of
    many imports is read once, not once an import."""

    def __init__(self, text: str) -> None:
        self.text, self.offset, self.line = text, 0, 1

    def __call__(self, offset: int) -> int:
        self.line += self.text.count("\n", self.offset, offset)
        self.offset = offset
        return self.line


def _without_spans(text: str) -> str:
    """`text` with its code spans and HTML comments blanked, newlines kept: whichever opens first, as CommonMark
    reads them; a span closes on the next run of as many backticks in its paragraph, else its backticks are text.
    One pass over the runs, whatever the file holds (an agent writes it: no run is searched for twice)."""
    breaks = [found.start() for found in _BLANK_LINE_RE.finditer(text)]
    runs = [(found.start(), found.end(), bisect.bisect(breaks, found.start())) for found in _TICKS_RE.finditer(text)]
    closer: list[int | None] = [None] * len(runs)
    later: dict[tuple[int, int], int] = {}          # (length, paragraph) -> the next run of them
    for at in range(len(runs) - 1, -1, -1):
        start, end, paragraph = runs[at]
        closer[at] = later.get((end - start, paragraph))
        later[end - start, paragraph] = at
    hidden = []
    at, offset, comment = 0, 0, text.find("<!--")
    while True:
        while at < len(runs) and runs[at][0] < offset:
            at += 1
        if comment != -1 and comment < offset:
            comment = text.find("<!--", offset)
        if at < len(runs) and (comment == -1 or runs[at][0] < comment):
            close = closer[at]
            if close is None:
                offset = runs[at][1]
            else:
                hidden.append((runs[at][0], runs[close][1]))
                offset = runs[close][1]
            continue
        if comment == -1:
            break
        end = text.find("-->", comment + 4)
        if end == -1:
            comment = -1                             # a comment never closed is text, and so is every `<!--` after
            continue
        hidden.append((comment, end + 3))
        offset = end + 3
    pieces, kept = [], 0
    for start, end in hidden:
        pieces += [text[kept:start], re.sub(r"[^\n]", " ", text[start:end])]
        kept = end
    return "".join([*pieces, text[kept:]])


def _is_path(path: str) -> bool:
    """Whether Claude Code takes `path` (what follows the `@`) for a file's path."""
    if path.startswith(("./", "~/")) or (path.startswith("/") and path != "/"):
        return True
    return bool(_PATH_START_RE.match(path))
