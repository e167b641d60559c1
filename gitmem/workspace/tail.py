"""Read the head or the tail of a big memory file from disk, at a cost that does not grow with the file.

`read_head` reads from the start in doubling blocks until the caller has what it needs (the top NOW block,
DECISIONS Pending). `FileSource` lets `gitmem.memory.log.tail_entries` read LOG backwards from its end.

Line numbers of a tail need the count of lines before it, and its headings the fence state where it starts
(a code fence left open higher up hides them: `gitmem.memory.fences`). Both mean reading the whole file, so
they are cached in the state directory (`lines.json`) as (byte offset, lines and fence lines before it, hash
of the 4 KB before it). LOG is append-only (GM301), so when those 4 KB are unchanged, only the bytes between
the cached offset and the new one are counted. A rewritten LOG changes the hash and is counted once from the
start. The cache is disposable: deleting it costs one full count; an unwritable `.git` just means no cache.
"""
from __future__ import annotations

import hashlib
import os
from collections.abc import Callable
from pathlib import Path
from typing import IO, BinaryIO

from gitmem.memory import fences, log
from gitmem.memory.text import decode
from gitmem.nofollow import files
from gitmem.workspace.statedir import read_cache, write_cache

FIRST_BLOCK = 16 * 1024
PROBE = 4096
LINES_CACHE = "lines.json"
_FENCE_NEEDLES = tuple(b"\n" + mark for mark in fences.FENCE_BYTE_MARKS)


def read_head(root: Path, rel: str, cut: Callable[[str], int | None]) -> str:
    """The file's text from its start up to `cut(text)`, reading more while `cut` returns None."""
    handle = files.open_read(root, rel)
    if handle is None:
        return ""
    with handle:
        data = b""
        block = FIRST_BLOCK
        while True:
            more = handle.read(block - len(data))
            data += more
            whole = len(data) < block or not more
            end = len(data) if whole else data.rfind(b"\n") + 1   # whole lines: no UTF-8 character split
            text = decode(data[:end]).text
            where = cut(text)
            if where is not None:
                return text[:where]
            if whole:
                return text
            block *= 2


def second_heading(text: str) -> int | None:
    """For read_head: where the second `## ` heading outside fenced code starts (the end of the top block)."""
    found = fences.headings(text, log.HEADING)
    next(found, None)
    return next(found, None)


def read_end(root: Path, rel: str, size: int,
             fence_open_at: Callable[[int], bool] | None = None) -> tuple[bytes, int]:
    """The last whole entries of LOG within about `size` bytes, and the byte offset where they start. The
    window doubles until it holds a heading outside fenced code: one entry longer than `size` (written before
    GM307) is read whole. `fence_open_at(offset)` gives the fence state at a line start (default: counted
    from the file's start, with the line cache)."""
    handle = files.open_read(root, rel)
    if handle is None:
        return b"", 0
    with handle:
        end = handle.seek(0, os.SEEK_END)
        state = fence_open_at or FileSource(root, rel, None).fence_open_at
        while True:
            start = max(0, end - size)
            handle.seek(start)
            data = handle.read()
            if not start:
                return data, 0
            skip = data.find(b"\n") + 1       # the first whole line, then the first real heading from there
            cut = fences.first_heading(data, log.HEADING.encode(), skip, open_=state(start + skip)) if skip else None
            if cut is not None:
                return data[cut:], start + cut
            size *= 2


class FileSource:
    """A LOG file on disk for `log.tail_entries`: blocks read from its end, lines and fences counted with the
    cache."""

    def __init__(self, root: Path, rel: str, state_dir: Path | None, *, numbered: bool = True,
                 end: int | None = None) -> None:
        """`end` reads the file as if it ended there (the committed part of a LOG that grew since)."""
        self.root, self.rel, self.state_dir, self.numbered = root, rel, state_dir, numbered
        self._counted: dict[int, tuple[int, int]] = {}
        self._size = files.size(root, rel) or 0
        if end is not None:
            self._size = min(self._size, end)

    def size(self) -> int:
        return self._size

    def _open(self) -> BinaryIO:
        handle = files.open_read(self.root, self.rel)
        if handle is None:
            raise FileNotFoundError(f"{self.rel} disappeared while it was read")
        return handle

    def text_from(self, start: int) -> tuple[str, int]:
        if not self._size:
            return "", 0
        with self._open() as handle:
            handle.seek(start)
            data = handle.read(self._size - start)
        if start > 0:                       # begin at a line start: whole lines, whole characters
            skip = data.find(b"\n") + 1
            data, start = (data[skip:], start + skip) if skip else (b"", self._size)
        # Forgiving, as every tail reader: an undecodable byte is replaced, never the end of the read
        # (`gitmem check` reports it); the parse turns line ends into LF.
        text = data.decode("utf-8", "replace")
        return (text.removeprefix("\ufeff") if start == 0 else text), start

    def line_at(self, offset: int) -> int:
        if offset == 0 or not self.numbered:
            return 1
        return self._counts(offset)[0] + 1

    def fence_open_at(self, offset: int) -> bool:
        return offset > 0 and self._counts(offset)[1] % 2 == 1

    def _counts(self, offset: int) -> tuple[int, int]:
        if offset not in self._counted:
            with self._open() as handle:
                self._counted[offset] = _counts_before(self.state_dir, self.rel, handle, offset, self._size)
        return self._counted[offset]


def read_log_tail(root: Path, rel: str, count: int, *, state_dir: Path | None = None,
                  numbered: bool = True) -> log.Tail:
    """The last `count` entries, and more if needed to include the last cycle entry (close entries skipped)."""
    want = max(count, 1)
    found = log.tail_entries(FileSource(root, rel, state_dir, numbered=numbered),
                             lambda entries: len(entries) >= want and log.has_cycle(entries))
    entries = found.entries
    begin = len(entries) - count if len(entries) >= count else 0
    last_cycle = max((i for i, entry in enumerate(entries) if entry.cycle is not None), default=None)
    if last_cycle is not None:
        begin = min(begin, last_cycle)
    return log.Tail(entries[begin:], found.first_line, found.whole)


def fence_open_at_end(root: Path, rel: str, state_dir: Path | None) -> bool:
    """Whether the file ends inside a code fence, counted on from the cache without moving it (the cache
    stays where the cycle's tail read keeps it, so the two never undo each other's work); with no usable
    cache, the whole count is cached."""
    handle = files.open_read(root, rel)
    if handle is None:
        return False
    with handle:
        size = handle.seek(0, os.SEEK_END)
        return _counts_before(state_dir, rel, handle, size, size, move=False)[1] % 2 == 1


def _counts_before(state_dir: Path | None, rel: str, handle: IO[bytes], offset: int, size: int, *,
                   move: bool = True) -> tuple[int, int]:
    """(newlines, fence lines) in the file before `offset` (a line start), using and refreshing the cache
    (with `move=False`, a usable cache entry is left where it is)."""
    cache_path = state_dir / LINES_CACHE if state_dir is not None else None
    cache = read_cache(cache_path) if rel else {}
    entry = cache.get(rel)
    counts: tuple[int, int] | None = None
    if isinstance(entry, dict) and isinstance(entry.get("offset"), int) and isinstance(entry.get("fences"), int) \
            and isinstance(entry.get("lines"), int) and 0 <= entry["offset"] <= size:
        if _probe(handle, entry["offset"]) == entry.get("probe"):
            known, lines, fenced = int(entry["offset"]), int(entry["lines"]), int(entry["fences"])
            low, high = sorted((known, offset))
            more_lines, more_fences = _count(handle, low, high)
            sign = 1 if offset >= known else -1
            counts = (lines + sign * more_lines, fenced + sign * more_fences)
    if counts is None:
        counts = _count(handle, 0, offset)
    elif not move:
        return counts
    fresh = {"offset": offset, "lines": counts[0], "fences": counts[1], "probe": _probe(handle, offset)}
    if cache_path is not None and rel and cache.get(rel) != fresh:
        cache[rel] = fresh
        write_cache(cache_path, cache)
    return counts


def cached_fence_state(state_dir: Path | None, rel: str, data: bytes, end: int) -> bool | None:
    """The fence state at `end` (a line start) of `data`, a version of the file `rel`, from the cache when the
    4 KB before the cached offset match; None when the cache cannot tell. Reads the cache, never writes it:
    `gitmem check` uses it for the old LOG, whose bytes it proves to be the start of the new one."""
    entry = read_cache(state_dir / LINES_CACHE if state_dir is not None else None).get(rel)
    if not isinstance(entry, dict) or not all(isinstance(entry.get(k), int) for k in ("offset", "fences")):
        return None
    offset = int(entry["offset"])
    if not 0 <= offset <= end or entry.get("probe") != hashlib.sha1(data[max(0, offset - PROBE):offset]).hexdigest():
        return None
    return fences.open_after(data, offset, end, open_=int(entry["fences"]) % 2 == 1)


def _count(handle: IO[bytes], start: int, end: int) -> tuple[int, int]:
    """(newlines, fence lines starting) in [start, end); `start` and `end` are line starts."""
    lines = fenced = 0
    if start == 0:
        handle.seek(0)
        fenced += handle.read(3) in fences.FENCE_BYTE_MARKS
    # A fence line at L is found as "\n```" at L-1: read from the newline before `start`, and carry the last
    # bytes of each chunk into the next so that no needle is cut in two.
    position = max(start - 1, 0)
    handle.seek(position)
    carry = b""
    while position < end:
        chunk = handle.read(min(end - position, 1 << 20))
        if not chunk:
            break
        if position < start:                 # the newline before `start` belongs to the line above
            lines -= chunk[:start - position].count(b"\n")
        lines += chunk.count(b"\n")
        joined = carry + chunk
        fenced += sum(joined.count(needle) for needle in _FENCE_NEEDLES)
        carry = joined[-3:]
        position += len(chunk)
    return lines, fenced


def _probe(handle: IO[bytes], offset: int) -> str:
    handle.seek(max(0, offset - PROBE))
    return hashlib.sha1(handle.read(min(offset, PROBE))).hexdigest()
