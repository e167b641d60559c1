"""JSON with comments (JSONC), as the agent CLIs read their settings: read, and edited without losing a comment.

Gemini CLI (and its fork Qwen Code) reads `settings.json` through strip-json-comments, OpenCode reads
`opencode.json` through jsonc-parser with trailing commas allowed: `//` and `/* */` comments, and a comma before a
closing bracket. A user's comments are theirs, so `gitmem init --agent` never rewrites such a file whole: it adds
what is missing where it belongs (`edited`), the bytes around it kept, and a change it cannot make without losing
a comment (a value holding one replaced, a key removed) is refused with the line it would touch.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from gitmem.config.nesting import loads_json


class LossyEdit(ValueError):
    """The change would lose a comment or rewrite the user's text: `line` (1-based) is where."""

    def __init__(self, line: int, what: str) -> None:
        super().__init__(f"line {line}: {what}")
        self.line = line


class UnfaithfulEdit(ValueError):
    """The edited text would not read back as the settings meant (no comment is involved): nothing is written."""


# What a JSONC reader meets, left to right: a run of what stays (text, strings whole, a lone `/`, a comma that is not
# trailing) then one thing to blank, a comment or a trailing comma (a comma with nothing but blanks and comments
# before a closing bracket), or the end. Each group is atomic, so the engine never backtracks into a string, a
# comment or the run: one pass over the text, Python only once per comment or trailing comma.
_STRING = r'"[^"\\]*(?:\\[\s\S][^"\\]*)*(?:"|\\?\Z)'
_COMMENT = r'//[^\n]*|/\*[\s\S]*?(?:\*/|\Z)'
_TRAILING = r'(?=(?>\s|//[^\n]*|/\*[\s\S]*?\*/)*[}\]])'
_KEPT = rf'(?>(?:[^"/,]+|{_STRING}|/(?![/*])|,(?!{_TRAILING}))*)'
_TOKENS = re.compile(rf'{_KEPT}(?:(?P<comment>{_COMMENT})|(?P<comma>,)|\Z)')
_NOT_LINE_END = re.compile(r"[^\r\n]")


@lru_cache(maxsize=4)      # `gitmem init --agent` reads a file, asks whether it is plain, then edits it: one pass
def blanked(text: str, *, commas: bool = True) -> str:
    """`text` with its comments and (with `commas`) trailing commas turned into spaces, line ends kept: plain JSON
    whose every offset, and so every line number in an error, is the original's."""
    out: list[str] = []
    done = 0
    for found in _TOKENS.finditer(text):
        kind = found.lastgroup
        if kind is None or (kind == "comma" and not commas):
            continue
        start, end = found.span(kind)
        out.append(text[done:start])
        out.append(" " if kind == "comma" else _NOT_LINE_END.sub(" ", found.group(kind)))
        done = end
    if not out:
        return text
    out.append(text[done:])
    return "".join(out)


def loads(text: str) -> Any:
    """The value of a JSONC text (bounded as every JSON gitmem reads); ValueError as `json.loads` raises it, with
    the original's line and column."""
    return loads_json(blanked(text))


def is_plain(text: str) -> bool:
    """Whether `text` is plain JSON: nothing for a rewrite to lose."""
    return blanked(text) == text


_DECODER = json.JSONDecoder()
_BLANKS = re.compile(r"\s*")


@dataclass
class _Node:
    """A value's span in blanked `plain`; its members' spans (an object's by key, an array's by index) are found when
    first asked for, so an edit reads only the containers on its way: a value is skipped at json's own speed."""

    plain: str
    start: int
    end: int
    _members: dict[Any, _Node] | None = field(default=None, repr=False)

    @property
    def members(self) -> dict[Any, _Node]:
        if self._members is None:
            self._members = _members_of(self.plain, self.start) if self.plain[self.start] in "{[" else {}
        return self._members


def _span(plain: str, at: int) -> _Node:
    """The value starting at `at` (after blanks) in blanked `plain`."""
    at = _skip(plain, at)
    _, end = _DECODER.raw_decode(plain, at)
    return _Node(plain, at, end)


def _members_of(plain: str, start: int) -> dict[Any, _Node]:
    """The members of the object or array at `start`: a repeated key is its last one, as json reads it, and stands
    last."""
    members: dict[Any, _Node] = {}
    closing = "}" if plain[start] == "{" else "]"
    at = _skip(plain, start + 1)
    index = 0
    while plain[at] != closing:
        if closing == "}":
            key, at = _DECODER.raw_decode(plain, at)
            at = _skip(plain, at) + 1                        # the colon
        else:
            key, index = index, index + 1
        members.pop(key, None)
        member = members[key] = _span(plain, at)
        at = _skip(plain, member.end)
        if plain[at] == ",":
            at = _skip(plain, at + 1)
    return members


def _skip(text: str, at: int) -> int:
    found = _BLANKS.match(text, at)
    return found.end() if found is not None else at


def _line(text: str, at: int) -> int:
    return text.count("\n", 0, at) + 1


def edited(text: str, old: Any, new: Any) -> str:
    """`text` (JSONC whose value is `old`) changed to hold `new`, its comments and layout kept: keys and array
    items `new` adds are inserted before their object's or array's closing bracket, in its indent; a value that
    changed is rewritten in place when it holds no comment. LossyEdit for anything else; UnfaithfulEdit when the
    result would not read back as `new`."""
    plain = blanked(text)
    root = _Node(plain, _skip(plain, 0), len(plain.rstrip()))      # the whole text is its value (`old`)
    edits: list[_Edit] = []
    _diff(text, plain, root, old, new, edits)
    # From the end backwards, so each offset still holds; of two inserts at one offset the later one first, so the
    # earlier (a comma) ends up before it.
    for start, _, end, insert in sorted(((e.start, order, e.end, e.insert) for order, e in enumerate(edits)),
                                        reverse=True):
        text = text[:start] + insert + text[end:]
    if loads(text) != new:          # the user's file is never left unreadable or saying other than was meant
        raise UnfaithfulEdit("edited in place, it would not read back as the settings gitmem means")
    return text


@dataclass(frozen=True)
class _Edit:
    start: int
    end: int
    insert: str


def _diff(text: str, plain: str, node: _Node, old: Any, new: Any, edits: list[_Edit]) -> None:
    if old == new:
        return
    if isinstance(old, dict) and isinstance(new, dict):
        for key in old:
            if key not in new:
                raise LossyEdit(_line(text, node.members[key].start), f"`{key}` would be removed")
            _diff(text, plain, node.members[key], old[key], new[key], edits)
        _insert(text, plain, node, [(key, new[key]) for key in new if key not in old], edits)
        return
    if isinstance(old, list) and isinstance(new, list) and new[:len(old)] == old:
        _insert(text, plain, node, [(None, item) for item in new[len(old):]], edits)
        return
    if text[node.start:node.end] != plain[node.start:node.end]:
        raise LossyEdit(_line(text, node.start), "a value holding a comment would be rewritten")
    indent = _indent_of(text, node.start)
    edits.append(_Edit(node.start, node.end, _dumped(new, indent)))


def _insert(text: str, plain: str, node: _Node, added: list[tuple[Any, Any]], edits: list[_Edit]) -> None:
    """`added` members (key, value), or items (None, value), before `node`'s closing bracket."""
    if not added:
        return
    close = node.end - 1
    own_line = text[text.rfind("\n", 0, close) + 1:close].strip() == ""
    if node.members:
        last = list(node.members.values())[-1]
        if "," not in blanked(text[last.end:close], commas=False):      # a trailing comma the user wrote stays
            edits.append(_Edit(last.end, last.end, ","))
        indent = _indent_of(text, last.start) if own_line else ""       # the last member's: its own line
    else:
        indent = (_indent_of(text, node.start) + "  ") if own_line else ""
    parts = []
    for key, value in added:
        head = "" if key is None else json.dumps(key, ensure_ascii=False) + ": "
        parts.append(head + _dumped(value, indent if own_line else None))
    if own_line:
        line_start = text.rfind("\n", 0, close) + 1
        edits.append(_Edit(line_start, line_start, "".join(indent + part + ",\n" for part in parts[:-1])
                           + indent + parts[-1] + "\n"))
    else:
        edits.append(_Edit(close, close, (" " if node.members else "") + ", ".join(parts)))


def _indent_of(text: str, at: int) -> str:
    """The blanks that start the line `at` is on."""
    line_start = text.rfind("\n", 0, at) + 1
    line = text[line_start:]
    return line[:len(line) - len(line.lstrip(" \t"))]


def _dumped(value: Any, indent: str | None) -> str:
    """`value` as JSON: on one line where its neighbours are (`indent` None), else indented by two under `indent`."""
    if indent is None:
        return json.dumps(value, ensure_ascii=False)
    return json.dumps(value, indent=2, ensure_ascii=False).replace("\n", "\n" + indent)
