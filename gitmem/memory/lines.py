"""Blank lines trimmed and counted, and a value collapsed or shortened to one line."""
from __future__ import annotations


def nonblank_count(lines: tuple[str, ...] | list[str]) -> int:
    return sum(1 for line in lines if line.strip())


def strip_trailing_blank(lines: list[str] | tuple[str, ...]) -> list[str]:
    out = list(lines)
    while out and not out[-1].strip():
        out.pop()
    return out


def one_line(value: str) -> str:
    """Collapse whitespace so a value fits a single canonical line."""
    return " ".join(value.split())


def shortened(text: str, limit: int = 100) -> str:
    """`text` on one line of at most `limit` characters; a cut is marked with `…`, so nothing is shortened
    silently (the close's report, the status dashboard)."""
    text = one_line(text)
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"
