"""A reader for the plain YAML that gitmem.yaml nearly always is, so `gitmem check` need not load ruamel.yaml.

It reads block mappings of plain keys, plain scalars, and block lists of plain scalars, with comments, and
resolves scalars as YAML 1.2's core schema does (null, booleans, decimal integers and floats, strings).
Anything else (quotes, flow style, anchors, tags, block scalars, dates, tabs, odd numbers, duplicate keys)
returns None: the caller then parses with ruamel.yaml, whose answer is authoritative. A property test holds
the two equal on everything this reader accepts.
"""
from __future__ import annotations

import re
from typing import Any

_KEY = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.\-]*\Z")
_INT = re.compile(r"-?(?:0|[1-9][0-9]{0,17})\Z")
_FLOAT = re.compile(r"-?(?:0|[1-9][0-9]{0,17})\.[0-9]{1,17}\Z")
_NULL = ("", "~", "null", "Null", "NULL")
_TRUE, _FALSE = ("true", "True", "TRUE"), ("false", "False", "FALSE")
# Plain scalars that another YAML type, a YAML 1.1 reading or YAML syntax could claim: leave them to the
# full parser. Numbers other than the plain forms above (dates, 1_000, 0x1f, 1e3, .5, +1) start this way.
_UNSURE = re.compile(r"""^[-+0-9?:,\[\]{}#&*!|>%@`]|^\.(?:[0-9]|inf|nan)|: |:\Z|\A(?:y|n|yes|no|on|off)\Z""",
                     re.IGNORECASE)


class _Unsupported(Exception):
    """The text uses YAML this reader leaves to ruamel.yaml."""


def load_plain_yaml(text: str) -> Any:
    """The data of `text` when it is plain YAML as described above; None when it is not (or is empty)."""
    try:
        lines = list(_lines(text))
        if not lines:
            return None
        value, read = _block(lines, 0, lines[0][0])
    except (_Unsupported, RecursionError):     # nested past what this reader recurses: ruamel.yaml says why
        return None
    return value if read == len(lines) else None


def _lines(text: str) -> list[tuple[int, str]]:
    """(indentation, content) of each line that holds something, comments removed."""
    found = []
    for raw in text.split("\n"):
        line = raw.rstrip("\r")
        stripped = line.lstrip(" ")
        if not stripped or stripped.startswith("#"):
            continue
        cut = stripped.find(" #")
        content = (stripped[:cut] if cut >= 0 else stripped).rstrip(" ")
        if "\t" in line[:len(line) - len(stripped)] or any(mark in content for mark in "\t'\"") \
                or content.startswith(("---", "...", "%")):
            raise _Unsupported
        found.append((len(line) - len(stripped), content))
    return found


def _block(lines: list[tuple[int, str]], start: int, indent: int) -> tuple[Any, int]:
    """The mapping or list starting at `lines[start]` (at `indent`); returns it and how far it read."""
    if lines[start][1].startswith("- ") or lines[start][1] == "-":
        return _sequence(lines, start, indent)
    mapping: dict[str, Any] = {}
    index = start
    while index < len(lines) and lines[index][0] == indent:
        content = lines[index][1]
        key, sep, value = content.partition(":")
        if not sep or not _KEY.match(key) or key in mapping or (value and not value.startswith(" ")):
            raise _Unsupported
        value = value.strip()
        index += 1
        if value:
            mapping[key] = _scalar(value)
        elif index < len(lines) and (lines[index][0] > indent or
                                     (lines[index][0] == indent and lines[index][1].startswith("-"))):
            mapping[key], index = _block(lines, index, lines[index][0])
        else:
            mapping[key] = None
    if index < len(lines) and lines[index][0] > indent:
        raise _Unsupported
    return mapping, index


def _sequence(lines: list[tuple[int, str]], start: int, indent: int) -> tuple[list[Any], int]:
    items: list[Any] = []
    index = start
    while index < len(lines) and lines[index][0] == indent and (lines[index][1].startswith("- ")
                                                                 or lines[index][1] == "-"):
        value = lines[index][1][1:].strip()
        if not value or ": " in value or value.endswith(":"):
            raise _Unsupported           # nested blocks and mappings in lists: the full parser's job
        items.append(_scalar(value))
        index += 1
    if index < len(lines) and lines[index][0] > indent:
        raise _Unsupported
    return items, index


def _scalar(text: str) -> Any:
    if text in _NULL:
        return None
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    if _INT.match(text):
        return int(text)
    if _FLOAT.match(text):
        return float(text)
    if _UNSURE.search(text):
        raise _Unsupported
    return text
