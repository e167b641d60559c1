"""Read the head or the tail of a big memory file from disk, at a cost that grows with the file only where
the answer is evidence.

`read_head` reads from the start in doubling blocks until the caller has what it needs (the top NOW block,
DECISIONS Pending). `FileSource` lets `gitmem.memory.log.tail_entries` read LOG backwards from its end.

A tail needs two facts about the text before it: the fence state where it starts (a code fence left open
higher up hides its headings: `gitmem.memory.fences`), and the count of lines before it. They differ in kind.

The fence state decides which `## ` lines are entries, and so the cycle a write gets, whether `log add` closes
a fence, and `check`'s verdict on an append. It is therefore counted from the file's own bytes every time,
never taken from `.git/gitmem`: the agent runs as the same user, and that directory is writable even inside
the sandbox, so whatever is stored there is the agent's to write. Nothing stored beside it could make a claimed
state trustworthy either: a content key (HEAD's blob id) proves the bytes but not the count claimed for them,
a hash the reader can recompute the writer can recompute too, and history (the state at the parent's end plus
the appended bytes) needs a trusted state somewhere back, which is this count again. So the count is made
cheap: one regex pass over the bytes before the offset (`fences.count_marks`, about 50 ms for a 75 MB LOG),
read in blocks, and remembered only in the process's memory, by the file's identity and change time, where
moving on to another offset counts just the bytes between the two.

Line numbers are presentation: they say where a diagnostic or a recall hit is, never whether something is
accepted. They are cached in the state directory (`lines.json`) as (byte offset, lines before it, hash of
the 4 KB before it); LOG is append-only (GM301), so when those 4 KB are unchanged only the bytes between the
cached offset and the new one are counted. A rewritten LOG changes the hash and is counted once from the
start. The cache is disposable: deleting it costs one full count; an unwritable `.git` just means no cache;
a planted one can move a line number, and a line number only.
"""
from __future__ import annotations

import hashlib
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO, BinaryIO

from gitmem.confined import files
from gitmem.memory import fences, log
from gitmem.memory.decoding import decode_text, undecodable
from gitmem.workspace.statedir import read_cache, write_cache

FIRST_BLOCK = 16 * 1024
PROBE = 4096
LINES_CACHE = "lines.json"
BLOCK = 1 << 20


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
            text = decode_text(data[:end])
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
    """A LOG file on disk for `log.tail_entries`: blocks read from its end, fences counted from its bytes, lines
    counted with the cache."""

    def __init__(self, root: Path, rel: str, state_dir: Path | None, *, numbered: bool = True,
                 end: int | None = None) -> None:
        """`end` reads the file as if it ended there (the committed part of a LOG that grew since)."""
        self.root, self.rel, self.state_dir, self.numbered = root, rel, state_dir, numbered
        self._lines: dict[int, int] = {}
        self._counted: Counted = {}      # fences counted by this reader (see _fence_lines_before)
        # Bytes this reader read that are not UTF-8 (offset -> why), one a line: what it replaced, for a caller
        # to name (`gitmem status`), at no cost beyond the decode it makes anyway.
        self.undecodable: dict[int, str] = {}
        self._size = files.file_size(root, rel) or 0
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
        # (`gitmem check` reports it, and the reader keeps where it was); the parse turns line ends into LF.
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            self.undecodable.update((start + at, why) for at, why in undecodable(data))
            text = data.decode("utf-8", "replace")
        return (text.removeprefix("\ufeff") if start == 0 else text), start

    def line_at(self, offset: int) -> int:
        if offset == 0 or not self.numbered:
            return 1
        if offset not in self._lines:
            with self._open() as handle:
                self._lines[offset] = _lines_before(self.state_dir, self.rel, handle, offset, self._size)
        return self._lines[offset] + 1

    def fence_open_at(self, offset: int) -> bool:
        """The fence state at the line start `offset`, from the bytes before it (see the module doc)."""
        if offset <= 0:
            return False
        with self._open() as handle:
            # The file's bytes, when this process holds them (a settled read): counted there, where the other
            # readers of the same bytes count (`fences.count_marks`), not read again in blocks.
            kept = files.kept_bytes(self.root, self.rel, os.fstat(handle.fileno()))
            if kept is not None and offset <= len(kept):
                return fences.open_after(kept, 0, offset)
            return _fence_lines_before(handle, offset, self._counted) % 2 == 1

    def appended(self, handle: IO[bytes], before: os.stat_result) -> None:
        """This process has just appended to the file, open as `handle`, which stood as `before` when the append
        began: the bytes up to `before.st_size` are the ones this reader counted fences in, so its count holds
        for the file as it is now, and the next reader (the close writes an entry a day, and reads the tail
        before each) counts only from there instead of the whole 75 MB again. The appender holds the write
        lock, so no gitmem writer changed the file in between. Kept in this process only, like every count; no
        verdict reads it (the checks count fences from the bytes they judge)."""
        known = self._counted.get(files.file_identity(before))
        if known is None or known[0] > before.st_size:
            return
        _remember(files.file_identity(os.fstat(handle.fileno())), known)


def read_log_tail(root: Path, rel: str, count: int, *, state_dir: Path | None = None,
                  numbered: bool = True) -> log.Tail:
    """The last `count` entries, and more if needed to include the last cycle entry (close entries skipped).
    Numbered, they are the entries readers take: an amended entry gives way to its amendment (`log.live`;
    unnumbered, lines count from the read's start, so the amendments' line numbers cannot be matched)."""
    want = max(count, 1)
    taken = log.live if numbered else tuple
    found = log.tail_entries(FileSource(root, rel, state_dir, numbered=numbered),
                             lambda entries: len(taken(entries)) >= want and log.has_cycle(taken(entries)))
    entries = taken(found.entries)
    begin = len(entries) - count if len(entries) >= count else 0
    last_cycle = max((i for i, entry in enumerate(entries) if entry.cycle is not None), default=None)
    if last_cycle is not None:
        begin = min(begin, last_cycle)
    return log.Tail(entries[begin:], found.first_line, found.whole)


def fence_open_at_end(root: Path, rel: str) -> bool:
    """Whether the file ends inside a code fence, counted from its bytes (see the module doc)."""
    handle = files.open_read(root, rel)
    if handle is None:
        return False
    with handle:
        return _fence_lines_before(handle, handle.seek(0, os.SEEK_END)) % 2 == 1


# Counted fences, in this process's memory only (nothing on disk is asked): file identity
# (`files.file_identity`) -> (a line start, fence lines before it). A change to the file starts a new count; a
# reader moving on in the same file counts only the bytes between two offsets, and the readers of one command
# share one pass. A count made before the file settled (`files.has_settled`) is kept only by the reader that
# made it.
_COUNTED: dict[tuple[int, ...], tuple[int, int]] = {}
_COUNTED_FILES = 8
Counted = dict[tuple[int, ...], tuple[int, int]]


def _fence_lines_before(handle: IO[bytes], offset: int, mine: Counted | None = None) -> int:
    """Fence lines before the line start `offset` of the open file; `mine` is the calling reader's own memo."""
    stat = os.fstat(handle.fileno())
    identity = files.file_identity(stat)
    known, fenced = (mine or {}).get(identity) or _COUNTED.get(identity, (0, 0))
    if offset != known:
        low, high = sorted((known, offset))
        more = _fence_lines(handle, low, high)
        fenced += more if offset > known else -more
    if mine is not None:
        mine.clear()
        mine[identity] = (offset, fenced)
    if files.has_settled(stat, time.time_ns()):
        _remember(identity, (offset, fenced))
    return fenced


def _remember(identity: tuple[int, ...], count: tuple[int, int]) -> None:
    _COUNTED.pop(identity, None)
    _COUNTED[identity] = count
    while len(_COUNTED) > _COUNTED_FILES:
        del _COUNTED[next(iter(_COUNTED))]


def _lines_before(state_dir: Path | None, rel: str, handle: IO[bytes], offset: int, size: int) -> int:
    """Newlines in the file before `offset`, using and refreshing the cache. A cached count is a hint for line
    numbers only; an entry that does not fit the file (past its end, more lines than bytes) is not used."""
    cache_path = state_dir / LINES_CACHE if state_dir is not None else None
    cache = read_cache(cache_path) if rel else {}
    entry = cache.get(rel)
    lines: int | None = None
    known = entry.get("offset") if isinstance(entry, dict) else None
    if isinstance(entry, dict) and isinstance(known, int) and isinstance(entry.get("lines"), int) \
            and 0 <= entry["lines"] <= known <= size and _probe(handle, known) == entry.get("probe"):
        low, high = sorted((known, offset))
        more = _newlines(handle, low, high)
        lines = max(0, int(entry["lines"]) + (more if offset >= known else -more))
    if lines is None:
        lines = _newlines(handle, 0, offset)
    fresh = {"offset": offset, "lines": lines, "probe": _probe(handle, offset)}
    if cache_path is not None and rel and cache.get(rel) != fresh:
        cache[rel] = fresh
        write_cache(cache_path, cache)
    return lines


def _newlines(handle: IO[bytes], start: int, end: int) -> int:
    """Newlines in [start, end)."""
    lines, position = 0, start
    handle.seek(start)
    while position < end:
        chunk = handle.read(min(end - position, BLOCK))
        if not chunk:
            break
        lines += chunk.count(b"\n")
        position += len(chunk)
    return lines


def _fence_lines(handle: IO[bytes], start: int, end: int) -> int:
    """Fence lines starting in [start, end); `start` and `end` are line starts. A fence line at L after `start`
    is a newline at L-1 followed by a mark: each block is read with the 3 bytes after it, so no mark is cut in
    two, and only the newlines inside the block are counted."""
    if end <= start:
        return 0
    handle.seek(start)
    fenced = int(handle.read(3) in fences.FENCE_BYTE_MARKS)
    position = start
    while position < end - 1:                # a newline at end-1 starts the line at `end`: not before it
        span = min(end - 1 - position, BLOCK)
        handle.seek(position)
        block = handle.read(span + 3)
        if not block:
            break
        fenced += fences.count_marks(block, 0, min(len(block), span + 3))
        position += span
    return fenced


def _probe(handle: IO[bytes], offset: int) -> str:
    handle.seek(max(0, offset - PROBE))
    return hashlib.sha1(handle.read(min(offset, PROBE))).hexdigest()
