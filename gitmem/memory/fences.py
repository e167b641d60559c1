"""Fenced code and the heading lines outside it: the one place that decides which `## ` lines are headings.

A line starting with three backticks or `~~~` opens a fence, and the next such line closes it (docs/format.md).
Inside a fence nothing is a heading, so a fenced example of `## Resolved` or of a LOG heading is text. Every
reader that looks for headings without a full parse (the tail of LOG, the top of NOW, the Resolved cut of
DECISIONS, the current ROADMAP section) asks this module, and the parser (`text.split_sections`) uses the same
test, so a reader that starts in the middle of a file agrees with a parse of the whole file: the fence state
(open or closed) where it starts is part of what it starts from.

Everything here is a scan with `find`, linear in the text, and works on `str` and `bytes` alike.
"""
from __future__ import annotations

from collections.abc import Iterator
from typing import AnyStr

FENCE_MARKS = ("```", "~~~")
_BYTE_MARKS = tuple(mark.encode() for mark in FENCE_MARKS)


def is_fence(line: str) -> bool:
    """Whether `line` opens or closes a fence."""
    return line.startswith(FENCE_MARKS)


def _marks(data: AnyStr) -> tuple[AnyStr, ...]:
    return _BYTE_MARKS if isinstance(data, bytes) else FENCE_MARKS  # type: ignore[return-value]


def _newline(data: AnyStr) -> AnyStr:
    return b"\n" if isinstance(data, bytes) else "\n"  # type: ignore[return-value]


def line_starts(data: AnyStr, prefixes: tuple[AnyStr, ...], start: int = 0, end: int | None = None
                ) -> Iterator[tuple[int, int]]:
    """(offset, index of the prefix) of each line in data[start:end] that begins with one of `prefixes`,
    in order. `start` must be a line start. One `find` per prefix and hit: linear in the text."""
    end = len(data) if end is None else end
    newline = _newline(data)
    needles = [newline + prefix for prefix in prefixes]
    upcoming: list[int] = []
    for which, prefix in enumerate(prefixes):
        if data.startswith(prefix, start, end):
            upcoming.append(start)
        else:
            found = data.find(needles[which], start, end)
            upcoming.append(found + 1 if found >= 0 and found + len(needles[which]) <= end else -1)
    while True:
        live = [(at, which) for which, at in enumerate(upcoming) if at >= 0]
        if not live:
            return
        at, which = min(live)
        yield at, which
        for other, position in enumerate(upcoming):     # a line may match two prefixes: move past it for all
            if position == at:
                found = data.find(needles[other], at, end)
                upcoming[other] = found + 1 if found >= 0 and found + len(needles[other]) <= end else -1


def fence_lines(data: AnyStr, start: int = 0, end: int | None = None) -> Iterator[int]:
    """Offsets of the fence lines in data[start:end] (`start` a line start)."""
    for at, _ in line_starts(data, _marks(data), start, end):
        yield at


def open_after(data: AnyStr, start: int = 0, end: int | None = None, *, open_: bool = False) -> bool:
    """The fence state at `end`, given the state `open_` at the line start `start`."""
    for _ in fence_lines(data, start, end):
        open_ = not open_
    return open_


def unclosed(data: AnyStr, start: int = 0, end: int | None = None, *, open_: bool = False) -> int | None:
    """The offset of the fence line in data[start:end] that is still open at `end`; None when every fence
    opened there is closed. A fence already open at `start` (`open_`) and never closed is not reported here:
    it was opened before `start`."""
    opened: int | None = -1 if open_ else None
    for at in fence_lines(data, start, end):
        opened = None if opened is not None else at
    return opened if opened is not None and opened >= 0 else None


def headings(data: AnyStr, prefix: AnyStr, start: int = 0, end: int | None = None, *,
             open_: bool = False) -> Iterator[int]:
    """Offsets of the lines in data[start:end] that begin with `prefix` outside fenced code, given the fence
    state `open_` at the line start `start`. `prefix` is a heading marker such as `## `."""
    prefixes: tuple[AnyStr, ...] = _marks(data) + (prefix,)
    for at, which in line_starts(data, prefixes, start, end):
        if which < len(prefixes) - 1:
            open_ = not open_
        elif not open_:
            yield at


def first_heading(data: AnyStr, prefix: AnyStr, start: int = 0, end: int | None = None, *,
                  open_: bool = False) -> int | None:
    return next(headings(data, prefix, start, end, open_=open_), None)


def last_heading_before(data: AnyStr, prefix: AnyStr, end: int, *, open_: bool = False) -> int | None:
    """The last heading line starting before `end`, scanning from the file's start (state `open_` there)."""
    found = None
    for at in headings(data, prefix, 0, end, open_=open_):
        found = at
    return found


class FenceState:
    """The fence state at line starts of one text, for readers that move backwards from its end: the first
    question scans from the start, each later one only the span between it and the one before."""

    def __init__(self, data: str | bytes, *, known: int = 0, state: bool = False) -> None:
        """`state` is the fence state at the line start `known`, when the caller already knows it."""
        self.data = data
        self.known, self.state = known, state

    def at(self, offset: int) -> bool:
        low, high = sorted((self.known, offset))
        # The state flips once per fence line between the two offsets, whichever way the reader moves.
        data = self.data
        self.state = (open_after(data, low, high, open_=self.state) if isinstance(data, bytes)
                      else open_after(data, low, high, open_=self.state))
        self.known = offset
        return self.state


class Fenced:
    """Where the fenced code of one text is, for a reader that finds headings with a regex over the whole
    text: `inside(offset)` says whether a match there is code. Built with one scan; asked with a bisect."""

    def __init__(self, data: str | bytes, *, open_: bool = False) -> None:
        import bisect

        self._bisect = bisect.bisect_right
        self.starts: list[int] = []          # alternating: open, close, open, close, ... (line starts)
        if open_:
            self.starts.append(0)
        self.starts.extend(fence_lines(data) if isinstance(data, bytes) else fence_lines(data))

    def inside(self, offset: int) -> bool:
        """Whether the line starting at `offset` is inside a fence (a fence line itself counts as inside)."""
        return self._bisect(self.starts, offset) % 2 == 1
