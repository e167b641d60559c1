"""Read the head or the tail of a big memory file from disk, at a cost that does not grow with the file.

`read_head` reads from the start in doubling blocks until the caller has what it needs (the top NOW block,
DECISIONS Pending). `read_log_tail` seeks to the end of LOG and reads backwards in doubling blocks until
it holds the last N entries.

Line numbers of a tail need the count of lines before it. Counting means reading the whole file, so the
count is cached in `.git/gitmem/lines.json` as (byte offset, lines before it, hash of the 4 KB before it).
LOG is append-only (GM301), so when those 4 KB are unchanged, only the bytes between the cached offset and
the new one are counted. A rewritten LOG changes the hash and is counted once from the start. The cache is
disposable: deleting it costs one full count; an unwritable `.git` just means no cache.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from gitmem.memory import log
from gitmem.memory.text import decode

FIRST_BLOCK = 16 * 1024
PROBE = 4096
_HEADING = re.compile(r"^## ", re.M)
_CYCLE_HEADING = re.compile(r"^## .*\bcycle \d+\b", re.M)
CACHE_NAME = "lines.json"


@dataclass(frozen=True)
class LogTail:
    entries: tuple[log.LogEntry, ...]   # complete entries with absolute line numbers, oldest first
    first_line: int                     # the line where the read text starts


def read_head(path: Path, cut: Callable[[str], int | None]) -> str:
    """The file's text from its start up to `cut(text)`, reading more while `cut` returns None."""
    try:
        handle = path.open("rb")
    except (FileNotFoundError, IsADirectoryError):
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


def read_log_tail(root: Path, rel: str, count: int) -> LogTail:
    """The last `count` entries, and more if needed to include the last cycle entry (close entries skipped)."""
    path = root / rel
    try:
        size = path.stat().st_size
    except (FileNotFoundError, NotADirectoryError):
        return LogTail((), 1)
    with path.open("rb") as handle:
        block = FIRST_BLOCK
        while True:
            start = max(0, size - block)
            handle.seek(start)
            data = handle.read(size - start)
            if start > 0:                       # begin at a line start: whole lines, whole characters
                skip = data.find(b"\n") + 1
                data, start = data[skip:], start + skip
            text = decode(data).text
            # Every `## ` heading in the block starts a complete entry; the lines above the first are skipped.
            heads = [m.start() for m in _HEADING.finditer(text)]
            cycles = [m.start() for m in _CYCLE_HEADING.finditer(text)]
            if start == 0 or (len(heads) >= count and cycles):
                break
            block *= 2
        begin = heads[-count] if len(heads) >= count else 0
        begin = min(begin, cycles[-1]) if cycles else begin
        before = _lines_before(root, rel, handle, start, size) if start else 0
    first_line = before + 1 + text.count("\n", 0, begin)
    return LogTail(log.parse(text[begin:], first_line=first_line, expect_title=False).entries, first_line)


def _lines_before(root: Path, rel: str, handle, offset: int, size: int) -> int:
    """Newlines in the file before `offset`, using and refreshing the cache."""
    cache_path = _cache_path(root)
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


def _count(handle, start: int, end: int) -> int:
    handle.seek(start)
    total, left = 0, end - start
    while left > 0:
        chunk = handle.read(min(left, 1 << 20))
        if not chunk:
            break
        total += chunk.count(b"\n")
        left -= len(chunk)
    return total


def _probe(handle, offset: int) -> str:
    handle.seek(max(0, offset - PROBE))
    return hashlib.sha1(handle.read(min(offset, PROBE))).hexdigest()


def _cache_path(root: Path) -> Path | None:
    dot = root / ".git"
    if dot.is_file():     # a linked worktree: `.git` names the real git dir
        text = dot.read_text(encoding="utf-8", errors="replace").strip()
        if not text.startswith("gitdir:"):
            return None
        dot = Path(text[7:].strip())
        dot = dot if dot.is_absolute() else root / dot
    return dot / "gitmem" / CACHE_NAME if dot.is_dir() else None


def _load(path: Path | None) -> dict:
    if path is None:
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return data if isinstance(data, dict) else {}
    except (OSError, ValueError):
        return {}


def _save(path: Path, data: dict) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps(data), encoding="utf-8")
        os.replace(tmp, path)
    except OSError:
        pass   # a read-only .git only costs a recount next time
