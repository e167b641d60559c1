"""Fenced code and the heading lines outside it: the one place that decides which `## ` lines are headings.

A line starting with three backticks or `~~~` opens a fence, and the next such line closes it (docs/format.md).
Inside a fence nothing is a heading, so a fenced example of `## Resolved` or of a LOG heading is text. Every
reader that looks for headings without a full parse (the tail of LOG, the top of NOW, the Resolved cut of
DECISIONS, the current ROADMAP section) asks this module, and the parser (`sections.split_sections`) uses the same
test, so a reader that starts in the middle of a file agrees with a parse of the whole file: the fence state
(open or closed) where it starts is part of what it starts from.

Everything here is a scan with `find`, `count` or one regex, linear in the text, and works on `str` and
`bytes` alike. The fence state is evidence (it decides which lines are entries), so no reader takes it from a
cache: it is counted from the bytes each time, and `count_marks` makes that one C-speed pass (over LOG's old
lines once per process: bytes found equal to lines it counted, by memcmp, are not counted again).
"""
from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Iterator
from typing import AnyStr

FENCE_MARKS = ("```", "~~~")
FENCE_BYTE_MARKS = tuple(mark.encode() for mark in FENCE_MARKS)
# A fence line after the first: a line end, then a mark. One alternation is one pass over the text, where
# `count` per mark is two (and "\n```" is a slow needle for `count`: its bloom skip collides with spaces).
_MARK_AFTER_NEWLINE = re.compile("\\n(?:" + "|".join(re.escape(m) for m in FENCE_MARKS) + ")")
_MARK_AFTER_NEWLINE_BYTES = re.compile(_MARK_AFTER_NEWLINE.pattern.encode())
# Below this span two `count` calls cost less than starting the regex.
_LONG_SPAN = 4096


def is_fence(line: str) -> bool:
    """Whether `line` opens or closes a fence."""
    return line.startswith(FENCE_MARKS)


def _marks(data: AnyStr) -> tuple[AnyStr, ...]:
    return FENCE_BYTE_MARKS if isinstance(data, bytes) else FENCE_MARKS


def _newline(data: AnyStr) -> AnyStr:
    return b"\n" if isinstance(data, bytes) else "\n"


def _hits(data: AnyStr, prefix: AnyStr, start: int, end: int) -> Iterator[int]:
    """Line starts in data[start:end] that begin with `prefix`, by `find`: one C-speed call per hit, lazily (a
    reader that wants the first heading reads no further)."""
    if data.startswith(prefix, start, end):
        yield start
    needle = _newline(data) + prefix
    at = data.find(needle, start, end)
    while at >= 0:
        yield at + 1
        at = data.find(needle, at + 1, end)


def count_marks(data: AnyStr, start: int = 0, end: int | None = None) -> int:
    """How many line ends in data[start:end] are followed by a fence mark, the mark inside the span too: the
    fence lines after the first line of the span. One C-speed pass (a 75 MB LOG in about 50 ms)."""
    end = len(data) if end is None else end
    if end - start < _LONG_SPAN:
        newline = _newline(data)
        return sum(data.count(newline + mark, start, end) for mark in _marks(data))
    if isinstance(data, bytes):
        return _counted_from_start(data, end) if start == 0 and end >= _REMEMBERED_FROM else \
            len(_MARK_AFTER_NEWLINE_BYTES.findall(data, start, end))
    return len(_MARK_AFTER_NEWLINE.findall(data, start, end))


# The last long spans counted from a LOG's start: (bytes, end, marks in bytes[:end]). LOG is append-only, and a
# cycle's steps each ask the fence state at (nearly) the end of the same old lines, in one copy of LOG or
# another (HEAD's, the work tree's before and after the agent): 75 MB at 100x. Bytes that start with a counted
# span (`startswith`, a memcmp at C speed) are counted from its end on, or back to a point a little before it.
# Nothing is taken on trust: the span is found equal byte for byte in the bytes asked about, and the count of
# equal bytes is the same.
_COUNTED: list[tuple[bytes, int, int]] = []
_COUNTED_KEPT = 1
_REMEMBERED_FROM = 4 << 20    # shorter spans count in a few ms (and readers of a file in 1 MB blocks ask many)
_MARK_LENGTH = 4              # a line end and a three-character mark


def _counted_from_start(data: bytes, end: int) -> int:
    spans = sorted(((abs(known_end - end), known_end, count, known) for known, known_end, count in _COUNTED
                    if known_end <= len(data)), key=lambda item: item[0])     # the nearest: the least to count
    found = next(((known_end, count) for _, known_end, count, known in spans
                  if known is data or data.startswith(memoryview(known)[:known_end])), None)
    if found is None:
        count = len(_MARK_AFTER_NEWLINE_BYTES.findall(data, 0, end))
        # Only a count from scratch is kept: the first copy of LOG a process counts is the one it holds anyway
        # (the old lines), where a later, longer copy would be kept alive by this list alone.
        _COUNTED[:] = [(data, end, count), *_COUNTED][:_COUNTED_KEPT]
        return count
    # A mark (no two overlap) ends inside data[:n] when it starts before n - 3: those between the two ends are
    # the difference.
    known_end, count = found
    low, high = sorted((known_end, end))
    between = _marks_between(data, max(0, low - _MARK_LENGTH + 1), high)
    return count + between if end >= known_end else count - between


def _marks_between(data: bytes, start: int, end: int) -> int:
    if end - start >= _LONG_SPAN:
        return len(_MARK_AFTER_NEWLINE_BYTES.findall(data, start, end))
    return sum(data.count(b"\n" + mark, start, end) for mark in FENCE_BYTE_MARKS)


def _count(data: AnyStr, start: int, end: int | None, *, last: bool = False) -> tuple[int, int | None]:
    """(number of fence lines in data[start:end], offset of the last one when `last`); one pass."""
    end = len(data) if end is None else end
    newline = _newline(data)
    count = count_marks(data, start, end) + sum(data.startswith(mark, start, end) for mark in _marks(data))
    final = None
    for mark in _marks(data):
        if last:
            found = data.rfind(newline + mark, start, end)
            at = found + 1 if found >= 0 else (start if data.startswith(mark, start, end) else None)
            if at is not None and (final is None or at > final):
                final = at
    return count, final


def fence_lines(data: AnyStr, start: int = 0, end: int | None = None) -> list[int]:
    """Offsets of the fence lines in data[start:end] (`start` a line start), in order."""
    end = len(data) if end is None else end
    return sorted(at for mark in _marks(data) for at in _hits(data, mark, start, end))


def open_after(data: AnyStr, start: int = 0, end: int | None = None, *, open_: bool = False) -> bool:
    """The fence state at `end`, given the state `open_` at the line start `start`."""
    return open_ ^ (_count(data, start, end)[0] % 2 == 1)


def unclosed(data: AnyStr, start: int = 0, end: int | None = None, *, open_: bool = False) -> int | None:
    """The offset of the fence line in data[start:end] that is still open at `end`; None when every fence
    opened there is closed. A fence already open at `start` (`open_`) and never closed is not reported here:
    it was opened before `start`."""
    count, last = _count(data, start, end, last=True)
    # Open at the end means the last fence line opened (or, with none at all, that it was open before).
    return last if open_ ^ (count % 2 == 1) and count else None


def headings(data: AnyStr, prefix: AnyStr, start: int = 0, end: int | None = None, *,
             open_: bool = False) -> Iterator[int]:
    """Offsets of the lines in data[start:end] that begin with `prefix` outside fenced code, given the fence
    state `open_` at the line start `start`. `prefix` is a heading marker such as `## `.

    Lazy and linear: fences are counted only between one heading and the next, so a reader that wants the
    first real heading reads up to it and no further."""
    end = len(data) if end is None else end
    newline = _newline(data)
    needle = newline + prefix
    position = start
    while position <= end:
        if data.startswith(prefix, position, end):
            found = position
        else:
            at = data.find(needle, max(position - 1, start), end)
            if at < 0:
                return
            found = at + 1
        open_ ^= _count(data, position, found)[0] % 2 == 1
        if not open_:
            yield found
        line_end = data.find(newline, found, end)
        if line_end < 0:
            return
        position = line_end + 1


def every_heading(data: AnyStr, prefix: AnyStr, start: int = 0, end: int | None = None, *,
                  open_: bool = False) -> list[int]:
    """`headings`, all of them at once, for a reader of every one: the fence lines of the span are found in one
    pass, and each heading is outside a fence when an even number of them stand before it (a bisection), not
    counted again from the heading before (LESSONS holds 3,000 headings at 100x, and a close reads it at many
    commits)."""
    end = len(data) if end is None else end
    marks = fence_lines(data, start, end)
    return [at for at in _hits(data, prefix, start, end) if not open_ ^ (bisect_left(marks, at) % 2 == 1)]


def line_starting_at(data: AnyStr, at: int) -> AnyStr:
    """The line that starts at `at`, without its line end."""
    end = data.find(_newline(data), at)
    return data[at:len(data) if end < 0 else end]


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
