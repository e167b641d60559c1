"""Read the head or the tail of a big memory file from disk, at a cost that does not grow with the file.

`read_head` reads from the start in doubling blocks until the caller has what it needs (the top NOW block,
DECISIONS Pending). `FileSource` lets `gitmem.memory.log.tail_entries` read LOG backwards from its end.

Line numbers of a tail need the count of lines before it. Counting means reading the whole file, so the
count is cached in the state directory (`lines.json`) as (byte offset, lines before it, hash of the 4 KB
before it). LOG is append-only (GM301), so when those 4 KB are unchanged, only the bytes between the cached
offset and the new one are counted. A rewritten LOG changes the hash and is counted once from the start.
The cache is disposable: deleting it costs one full count; an unwritable `.git` just means no cache.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any, BinaryIO

from gitmem.memory import log
from gitmem.memory.text import decode
from gitmem.workspace import files

FIRST_BLOCK = 16 * 1024
PROBE = 4096
CACHE_NAME = "lines.json"
_HEADING = re.compile(r"^## ", re.M)


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
    """For read_head: where the second `## ` heading starts (the end of the top block)."""
    found = _HEADING.finditer(text)
    next(found, None)
    second = next(found, None)
    return second.start() if second else None


def read_end(root: Path, rel: str, size: int) -> tuple[bytes, int]:
    """The last whole entries of LOG within about `size` bytes, and the byte offset where they start. The
    window doubles until it holds a heading: one entry longer than `size` (written before GM307) is read whole."""
    handle = files.open_read(root, rel)
    if handle is None:
        return b"", 0
    with handle:
        end = handle.seek(0, os.SEEK_END)
        while True:
            start = max(0, end - size)
            handle.seek(start)
            data = handle.read()
            cut = data.find(b"\n## ") + 1 if start else 0
            if cut or not start:
                return data[cut:], start + cut
            size *= 2


class FileSource:
    """A LOG file on disk for `log.tail_entries`: blocks read from its end, lines counted with the cache."""

    def __init__(self, root: Path, rel: str, state_dir: Path | None, *, numbered: bool = True,
                 end: int | None = None) -> None:
        """`end` reads the file as if it ended there (the committed part of a LOG that grew since)."""
        self.root, self.rel, self.state_dir, self.numbered = root, rel, state_dir, numbered
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
        return decode(data).text, start

    def line_at(self, offset: int) -> int:
        if offset == 0 or not self.numbered:
            return 1
        with self._open() as handle:
            return _lines_before(self.state_dir, self.rel, handle, offset, self._size) + 1


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


def _lines_before(state_dir: Path | None, rel: str, handle: IO[bytes], offset: int, size: int) -> int:
    """Newlines in the file before `offset`, using and refreshing the cache."""
    cache_path = state_dir / CACHE_NAME if state_dir is not None else None
    cache = _load(cache_path)
    entry = cache.get(rel)
    count: int | None = None
    if isinstance(entry, dict) and isinstance(entry.get("offset"), int) and entry["offset"] <= size:
        if _probe(handle, entry["offset"]) == entry.get("probe"):
            known = int(entry["offset"])
            lines = int(entry.get("lines", 0))
            count = lines + _count(handle, known, offset) if offset >= known else lines - _count(handle, offset, known)
    if count is None:
        count = _count(handle, 0, offset)
    fresh = {"offset": offset, "lines": count, "probe": _probe(handle, offset)}
    if cache_path is not None and cache.get(rel) != fresh:
        cache[rel] = fresh
        _save(cache_path, cache)
    return count


def _count(handle: IO[bytes], start: int, end: int) -> int:
    handle.seek(start)
    total, left = 0, end - start
    while left > 0:
        chunk = handle.read(min(left, 1 << 20))
        if not chunk:
            break
        total += chunk.count(b"\n")
        left -= len(chunk)
    return total


def _probe(handle: IO[bytes], offset: int) -> str:
    handle.seek(max(0, offset - PROBE))
    return hashlib.sha1(handle.read(min(offset, PROBE))).hexdigest()


def _load(path: Path | None) -> dict[str, Any]:
    if path is None:
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return data if isinstance(data, dict) else {}
    except (OSError, ValueError):
        return {}


def _save(path: Path, data: dict[str, Any]) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps(data), encoding="utf-8")
        os.replace(tmp, path)
    except OSError:
        pass   # a read-only .git only costs a recount next time
