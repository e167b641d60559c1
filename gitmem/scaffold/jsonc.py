"""JSON with comments (JSONC), as the agent CLIs read their settings: read, and edited without losing a comment.

Gemini CLI (and its fork Qwen Code) reads `settings.json` through strip-json-comments, OpenCode reads
`opencode.json` through jsonc-parser with trailing commas allowed: `//` and `/* */` comments, and a comma before a
closing bracket. A user's comments are theirs, so `gitmem init --agent` never rewrites such a file whole: it adds
what is missing where it belongs (`edited`), the bytes around it kept, and a change it cannot make without losing
a comment (a value holding one replaced, a key removed) is refused with the line it would touch.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from gitmem.config.nesting import loads_json


class LossyEdit(ValueError):
    """The change would lose a comment or rewrite the user's text: `line` (1-based) is where."""

    def __init__(self, line: int, what: str) -> None:
        super().__init__(f"line {line}: {what}")
        self.line = line


def blanked(text: str, *, commas: bool = True) -> str:
    """`text` with its comments and (with `commas`) trailing commas turned into spaces, line ends kept: plain JSON
    whose every offset, and so every line number in an error, is the original's."""
    out = list(text)
    at, in_string = 0, False
    last_comma: int | None = None
    while at < len(text):
        char = text[at]
        if in_string:
            if char == "\\":
                at += 2
                continue
            in_string = char != '"'
        elif char == '"':
            in_string, last_comma = True, None
        elif text.startswith(("//", "/*"), at):
            line_comment = text[at + 1] == "/"
            end = text.find("\n" if line_comment else "*/", at + 2)
            end = len(text) if end < 0 else end if line_comment else end + 2
            for inside in range(at, end):
                out[inside] = text[inside] if text[inside] in "\r\n" else " "
            at = end
            continue
        elif char == ",":
            last_comma = at
        elif char in "}]" and last_comma is not None and commas:
            out[last_comma] = " "
            last_comma = None
        elif not char.isspace():
            last_comma = None
        at += 1
    return "".join(out)


def loads(text: str) -> Any:
    """The value of a JSONC text (bounded as every JSON gitmem reads); ValueError as `json.loads` raises it, with
    the original's line and column."""
    return loads_json(blanked(text))


def is_plain(text: str) -> bool:
    """Whether `text` is plain JSON: nothing for a rewrite to lose."""
    return blanked(text) == text


@dataclass
class _Node:
    start: int
    end: int
    members: dict[Any, _Node] = field(default_factory=dict)     # an object's by key, an array's by index


def _span(text: str, at: int) -> tuple[_Node, int]:
    """The value starting at `at` (after blanks) in blanked `text`, with its members' spans; the offset after it."""
    decoder = json.JSONDecoder()
    at = _skip(text, at)
    if text[at] not in "{[":
        _, end = decoder.raw_decode(text, at)
        return _Node(at, end), end
    node, closing = _Node(at, at), "}" if text[at] == "{" else "]"
    at = _skip(text, at + 1)
    index = 0
    while text[at] != closing:
        if closing == "}":
            key, at = decoder.raw_decode(text, at)
            at = _skip(text, at) + 1                        # the colon
        else:
            key, index = index, index + 1
        node.members.pop(key, None)         # a repeated key is its last one, as json reads it, and stands last
        node.members[key], at = _span(text, at)
        at = _skip(text, at)
        if text[at] == ",":
            at = _skip(text, at + 1)
    node.end = at + 1
    return node, node.end


def _skip(text: str, at: int) -> int:
    while at < len(text) and text[at].isspace():
        at += 1
    return at


def _line(text: str, at: int) -> int:
    return text.count("\n", 0, at) + 1


def edited(text: str, old: Any, new: Any) -> str:
    """`text` (JSONC whose value is `old`) changed to hold `new`, its comments and layout kept: keys and array
    items `new` adds are inserted before their object's or array's closing bracket, in its indent; a value that
    changed is rewritten in place when it holds no comment. LossyEdit for anything else."""
    plain = blanked(text)
    root, _ = _span(plain, 0)
    edits: list[_Edit] = []
    _diff(text, plain, root, old, new, edits)
    # From the end backwards, so each offset still holds; of two inserts at one offset the later one first, so the
    # earlier (a comma) ends up before it.
    for start, _, end, insert in sorted(((e.start, order, e.end, e.insert) for order, e in enumerate(edits)),
                                        reverse=True):
        text = text[:start] + insert + text[end:]
    if loads(text) != new:          # the user's file is never left unreadable or saying other than was meant
        raise LossyEdit(1, "the edit would not read back as the settings meant; nothing was changed")
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
        with_commas = blanked(text, commas=False)
        if with_commas[_skip(with_commas, last.end)] != ",":      # a trailing comma the user wrote stays
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
