"""The structure inside an entry's body, read with mistune: list items and their text without markup.

The line scanners in `sections.py` and `fields.py` find entries and `- Key:` fields with exact line numbers, which
mistune cannot give. Inside an entry, mistune reads what a scanner would get wrong: emphasis, links, code spans,
lazy continuation lines, nested lists. Search indexes this plain text, so `**hello**` is found as `hello`
and a link is found by its words. mistune loads only here, never on the pre-commit check path.
"""
from __future__ import annotations

import re
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


# Bodies made only of `- item` lines and indented continuations, with no markup, need no parser: their
# plain text is the items themselves (a property test holds the two paths equal). Most LOG entries are
# like that, and mistune costs ~0.15 ms an entry when indexing 200,000 of them.
_INLINE_MARKUP = re.compile(r"[*_`\[\]<>!&\\|~]|\S {2,}$")
_BLOCK_START = re.compile(r"^(?:[-*+>#=]|[0-9]+[.)]|$)")


def _simple_items(body: str) -> list[str] | None:
    if _INLINE_MARKUP.search(body):
        return None
    items: list[str] = []
    for line in body.split("\n"):
        if not line.strip():
            continue
        if line.startswith("- "):
            content = line[2:].strip()
            if _BLOCK_START.match(content):
                return None
            items.append(" ".join(content.split()))
        elif line.startswith("  ") and items:
            content = line.strip()
            if _BLOCK_START.match(content) or line.startswith("    ") and not line.strip():
                return None
            items[-1] += " " + " ".join(content.split())
        else:
            return None
    return items


def plain_lines(body: str) -> list[str]:
    """One line per list item or paragraph, markup removed, nesting kept as indentation."""
    simple = _simple_items(body)
    if simple is not None:
        return [line for line in simple if line.strip()]
    lines: list[str] = []
    _blocks(_parser()(body), 0, lines)
    return [line for line in lines if line.strip()]


def plain_text(body: str) -> str:
    return "\n".join(plain_lines(body))
