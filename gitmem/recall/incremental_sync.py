"""Keep the index in step with the memory files in the work tree, cheaply.

Recall indexes the work tree, not HEAD: an agent writes memory during a cycle and commits at the end,
and what it wrote ten minutes ago must be findable before that commit.

Each file is watched by size and mtime. When they change, or when the file was written so recently that
mtime cannot be trusted (the "racy" window), its content is checked:
- LOG is append-only (GM301): if the indexed prefix is still in place, only the bytes after the last
  indexed entry are parsed (that entry is re-read too, in case lines were appended to it).
- NOW grows at the top: if the indexed blocks are still the file's tail, only the new top is parsed.
  NOW lines are stored counted from the end of the file, so old blocks keep valid line numbers.
- DECISIONS, LESSONS and RULES are hashed whole; a changed file is re-parsed and only changed entries
  are rewritten.
"Still in place" is checked by hashing the first 4 KiB and the last WINDOW bytes of the indexed part: a
whole-file proof for files up to 1 MiB, and a constant cost beyond. Anything else re-reads the whole file.
The one blind spot, by design: an in-place edit of LOG or NOW text that is more than 1 MiB from the
growing end, in a file that also grew. GM301 rejects such a LOG edit at commit; a history rewrite
rebuilds the index anyway; `gitmem recall --rebuild` forces a rebuild by hand. Until then the new words
are not found, but the old ones are never shown: every hit is read again from its file (recall.hit_proof).
"""
from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import time
from pathlib import Path
from typing import Any

from gitmem.config.nesting import loads_json
from gitmem.confined import files
from gitmem.memory import log
from gitmem.memory.decoding import UNDECODABLE_NAMED, undecodable
from gitmem.recall import corpus, sync_state_proof
from gitmem.recall.database import Span, delete_docs, insert_docs, replace_file_docs

WINDOW = 1 << 20
HEAD = 4096
State = dict[str, Any]          # what a file's sync remembers between runs (JSON in `sources.state`)
Synced = tuple[bool, int, State]  # (the index changed, the file's line count, the new state)


def _sha(data: bytes) -> str:
    return hashlib.sha1(data).hexdigest()


class _Source:
    """One memory file, opened only as a regular file inside the work tree (`gitmem.confined.files`)."""

    def __init__(self, root: Path, rel: str) -> None:
        self.root, self.rel = root, rel

    def stat(self) -> os.stat_result | None:
        handle = files.open_read(self.root, self.rel)
        if handle is None:
            return None
        with handle:
            return os.fstat(handle.fileno())

    def read_bytes(self) -> bytes:
        return files.read_bytes(self.root, self.rel) or b""


def _read(source: _Source, start: int, size: int) -> bytes:
    handle = files.open_read(source.root, source.rel)
    if handle is None:
        return b""
    with handle:
        handle.seek(start)
        return handle.read(size)


def as_text(data: bytes) -> str:
    # Invalid UTF-8 is GM902 for `gitmem check`; recall still indexes what it can read.
    return data.decode("utf-8", errors="replace")


def _text_and_undecodable(data: bytes) -> tuple[str, list[tuple[int, str]]]:
    """`as_text(data)`, and where it replaced bytes that are not UTF-8 (`undecodable`): one decode when none."""
    try:
        return data.decode("utf-8"), []
    except UnicodeDecodeError:
        return as_text(data), undecodable(data)


def undecodable_lines(state: State | None) -> list[tuple[int, int, str]]:
    """(line, byte, why) of the lines of an indexed LOG that are not UTF-8, as its sync state keeps them: recall
    says so. The state is the agent's to write: only well-formed items are taken, and they only name lines."""
    kept = state.get("undecodable") if isinstance(state, dict) else None
    return [(item[0], item[1], item[2]) for item in kept if isinstance(item, list) and len(item) == 3
            and isinstance(item[0], int) and isinstance(item[1], int) and isinstance(item[2], str)] \
        if isinstance(kept, list) else []


def _line_offset(data: bytes, lines_down: int) -> int:
    """Byte offset of the line `lines_down` lines below the start of `data`.

    Counts from whichever end is nearer: the wanted line is the top NOW block or the last LOG entry.
    """
    newlines = data.count(b"\n")
    if lines_down <= newlines // 2:
        offset = 0
        for _ in range(lines_down):
            offset = data.index(b"\n", offset) + 1
        return offset
    end = len(data)
    for _ in range(newlines - lines_down + 1):
        end = data.rindex(b"\n", 0, end)
    return end + 1


def spans(data: bytes, base: int, base_line: int, docs: list[corpus.Doc]) -> dict[int, Span]:
    """Each doc's bytes in the file, by its first line: `data` is the file's bytes from `base`, where line
    `base_line` starts. One walk down the lines."""
    wanted = sorted({n for doc in docs for n in (doc.line - base_line, doc.end - base_line + 1)})
    starts: dict[int, int] = {}
    at = line = 0
    for want in wanted:
        while line < want and at < len(data):
            found = data.find(b"\n", at)
            at, line = (found + 1, line + 1) if found >= 0 else (len(data), want)
        starts[want] = at if line >= want else len(data)
    return {doc.line: (base + starts[doc.line - base_line], base + starts[doc.end - base_line + 1]) for doc in docs}


def sync_file(conn: sqlite3.Connection, root: Path, workspace: str, role: str, path: str) -> bool:
    """Bring one memory file's documents up to date; True when the index changed."""
    full = _Source(root, path)
    row = conn.execute("SELECT size, mtime, checked, state FROM sources WHERE path = ?", (path,)).fetchone()
    stat = full.stat()
    if stat is None:
        if row is None:
            return False
        replace_file_docs(conn, workspace, path, [])
        conn.execute("DELETE FROM sources WHERE path = ?", (path,))
        return True
    # The row is the agent's to write: it speeds the work up only once the file itself shows that it is true
    # of the index (gitmem.recall.sync_state_proof); otherwise the file is read whole, as the first time.
    state = remembered(row[3]) if row is not None else None
    if state is not None and not sync_state_proof.trusted(conn, root, role, path, state, (row[3], _stamp(stat))):
        state = None
    if state is not None and (row[0], row[1]) == (stat.st_size, stat.st_mtime_ns) \
            and row[2] - row[1] > files.SETTLED_NS:
        return False
    handler = {"log": _sync_log, "now": _sync_now}.get(role, _sync_whole)
    try:
        changed, lines, state = handler(conn, full, workspace, role, path, stat.st_size, state)
    except (KeyError, TypeError, ValueError):
        if state is None:
            raise
        # The index lives in .git/gitmem, which an agent can write: a state of another shape is a cache to
        # rebuild, never a reason to fail. Without it the file is read whole, as the first time.
        changed, lines, state = handler(conn, full, workspace, role, path, stat.st_size, None)
    conn.execute("INSERT OR REPLACE INTO sources(path, workspace, role, size, mtime, checked, lines, state)"
                 " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                 (path, workspace, role, stat.st_size, stat.st_mtime_ns, time.time_ns(), lines, json.dumps(state)))
    return changed


def _stamp(stat: os.stat_result) -> tuple[int, ...]:
    """What changes with any write to the file: ctime cannot be set back by its writer."""
    return stat.st_ino, stat.st_size, stat.st_mtime_ns, stat.st_ctime_ns


def remembered(text: str) -> State | None:
    """A file's remembered sync state; None (read the file whole) for anything but a JSON object within the
    nesting bound (gitmem.config.nesting)."""
    try:
        state = loads_json(text)
    except (TypeError, ValueError):
        return None
    return state if isinstance(state, dict) else None


def _sync_whole(conn: sqlite3.Connection, full: _Source, workspace: str, role: str, path: str, size: int,
                state: State | None) -> Synced:
    data = full.read_bytes()
    digest = _sha(data)
    lines = data.count(b"\n") + 1
    if state is not None and state.get("digest") == digest:
        return False, lines, state
    docs = list(corpus.iter_docs(role, as_text(data), path))
    replace_file_docs(conn, workspace, path, docs, spans=spans(data, 0, 1, docs))
    return True, lines, {"digest": digest}


def _anchors(full: _Source, start: int, size: int) -> dict[str, str]:
    """Hashes that prove bytes [start, start+size) unchanged: the first 4 KiB and the last WINDOW bytes."""
    window = max(start, start + size - WINDOW)
    return {"head": _sha(_read(full, start, min(HEAD, size))),
            "window": _sha(_read(full, window, start + size - window))}


def _intact(full: _Source, start: int, size: int, state: dict[str, Any]) -> bool:
    return start >= 0 and _anchors(full, start, size) == {"head": state["head"], "window": state["window"]}


def _sync_log(conn: sqlite3.Connection, full: _Source, workspace: str, role: str, path: str, size: int,
              state: State | None) -> Synced:
    if state is not None and size >= state["size"] and _intact(full, 0, state["size"], state):
        if size == state["size"]:
            return False, state["lines"], state
        base, base_line = state["offset"], state["line"]
        tail = _read(full, base, size - base)
        stale = [r[0] for r in conn.execute("SELECT id FROM docs WHERE path = ? AND line >= ?", (path, base_line))]
        stale += _amended_ids(conn, path, tail, base_line, base == 0)
        delete_docs(conn, stale)
        text, bad = _text_and_undecodable(tail)
        docs = corpus.log_docs(text, path, first_line=base_line, expect_title=base == 0)
        insert_docs(conn, workspace, docs, spans=spans(tail, base, base_line, docs))
        earlier = [list(item) for item in undecodable_lines(state) if item[0] < base_line]
    else:
        tail = full.read_bytes()
        base, base_line = 0, 1
        text, bad = _text_and_undecodable(tail)
        docs = corpus.log_docs(text, path)
        replace_file_docs(conn, workspace, path, docs, spans=spans(tail, 0, 1, docs))
        earlier = []
    # The lines the index holds with U+FFFD for bytes that were not UTF-8, for recall to name (GM902).
    found = earlier + [[base_line + tail.count(b"\n", 0, at), base + at, why] for at, why in bad]
    lines = base_line + tail.count(b"\n")
    # Next time, re-read from the start of the last entry: lines may still be appended to it.
    if docs:
        base, base_line = base + _line_offset(tail, docs[-1].line - base_line), docs[-1].line
    state = {"size": size, "offset": base, "line": base_line, "lines": lines, **_anchors(full, 0, size),
             "undecodable": found[:UNDECODABLE_NAMED]}
    return True, lines, state


def _amended_ids(conn: sqlite3.Connection, path: str, tail: bytes, first_line: int, titled: bool) -> list[int]:
    """The indexed entries above `first_line` that an amendment in the new `tail` supersedes: an amendment
    is read in their place (`gitmem.memory.log.live`)."""
    if log.AMENDS.encode() not in tail:
        return []
    lines = log.superseded(log.parse(as_text(tail), first_line=first_line, expect_title=titled).entries)
    gone = sorted(line for line in lines if line < first_line)
    if not gone:
        return []
    marks = ",".join("?" * len(gone))
    return [r[0] for r in conn.execute(f"SELECT id FROM docs WHERE path = ? AND line IN ({marks})", (path, *gone))]


def _sync_now(conn: sqlite3.Connection, full: _Source, workspace: str, role: str, path: str, size: int,
              state: State | None) -> Synced:
    """New blocks go on top, so the indexed blocks stay the file's last `suffix` bytes."""
    suffix = state["suffix"] if state is not None else 0
    if state is not None and size >= suffix and _intact(full, size - suffix, suffix, state):
        if size == state["size"]:
            return False, state["lines"], state
        head = _read(full, 0, size - suffix)
        lines = head.count(b"\n") + state["suffix_newlines"] + 1
        # Parsing the head alone gives line numbers from the top, which are right for the new blocks.
        docs = corpus.now_docs(as_text(head), path)[::-1]
        insert_docs(conn, workspace, docs, lines=lines, spans=spans(head, 0, 1, docs), size=size)
    else:
        head = full.read_bytes()
        lines = head.count(b"\n") + 1
        # Oldest first, so that row ids grow with time in NOW as in LOG (recency of last resort, see rank.py).
        docs = corpus.now_docs(as_text(head), path)[::-1]
        replace_file_docs(conn, workspace, path, docs, lines=lines, spans=spans(head, 0, 1, docs), size=size)
    first = conn.execute("SELECT min(line) FROM docs WHERE path = ?", (path,)).fetchone()[0]
    if first is None:
        suffix, newlines = 0, 0
    else:
        top_line = first + lines                       # stored lines count back from the end
        offset = _line_offset(head, top_line - 1) if top_line - 1 <= head.count(b"\n") else size - suffix
        suffix = size - offset
        newlines = lines - top_line
    state = {"size": size, "suffix": suffix, "suffix_newlines": newlines, "lines": lines,
             **_anchors(full, size - suffix, suffix)}
    return True, lines, state
