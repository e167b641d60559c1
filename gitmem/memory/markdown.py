"""The structure inside an entry's body, read with mistune: list items and their text without markup.

The line scanner in `text.py` finds entries and `- Key:` fields with exact line numbers, which mistune
cannot give. Inside an entry, mistune reads what a scanner would get wrong: emphasis, links, code spans,
lazy continuation lines, nested lists. Search indexes this plain text, so `**hello**` is found as `hello`
and a link is found by its words. mistune loads only here, never on the pre-commit check path.
"""
from __future__ import annotations

from functools import lru_cache
from typing import Any

# Inline nodes whose text is their `raw`; containers are walked; line breaks become spaces.
_RAW = {"text", "codespan", "inline_html"}
_BREAKS = {"softbreak", "linebreak"}


@lru_cache(maxsize=1)
def _parser() -> Any:
    import mistune

    return mistune.create_markdown(renderer=None)


def _inline(nodes: list[dict[str, Any]]) -> str:
    out: list[str] = []
    for node in nodes:
        kind = node.get("type")
        if kind in _RAW:
            out.append(node.get("raw", ""))
        elif kind in _BREAKS:
            out.append(" ")
        elif "children" in node:
            out.append(_inline(node["children"]))
    return "".join(out)


def _blocks(nodes: list[dict[str, Any]], depth: int, lines: list[str]) -> None:
    for node in nodes:
        kind = node.get("type")
        if kind == "list":
            for item in node.get("children", []):
                _list_item(item, depth, lines)
        elif kind in ("paragraph", "block_text", "heading"):
            lines.append("  " * depth + " ".join(_inline(node.get("children", [])).split()))
        elif kind == "block_code":
            lines.append("  " * depth + " ".join(node.get("raw", "").split()))
        elif kind == "block_quote":
            _blocks(node.get("children", []), depth, lines)


def _list_item(item: dict[str, Any], depth: int, lines: list[str]) -> None:
    children = item.get("children", [])
    text = [c for c in children if c.get("type") in ("block_text", "paragraph")]
    lines.append("  " * depth + " ".join(" ".join(_inline(c.get("children", [])).split()) for c in text))
    _blocks([c for c in children if c not in text], depth + 1, lines)


def plain_lines(body: str) -> list[str]:
    """One line per list item or paragraph, markup removed, nesting kept as indentation."""
    lines: list[str] = []
    _blocks(_parser()(body), 0, lines)
    return [line for line in lines if line.strip()]


def plain_text(body: str) -> str:
    return "\n".join(plain_lines(body))
