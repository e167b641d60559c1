"""Whether a memory file's remembered sync state is true of the index, judged from the file itself.

The index's `sources` rows (size, mtime, and the sync state of incremental_sync.py: how far a file was indexed) live in
`.git/gitmem/`, which the agent can write, so they are a claim. A row rewritten to match the file's current
size, mtime and hashes would make a refresh skip the file and hide its new text from recall. Any claim gitmem
could check without reading the file, the agent could compute too (it can run gitmem), so the check compares
the index's documents with the file's bytes, at the cost of one short read:

- LOG grows at the end: the state says entries are indexed up to `size` and the last one starts at `offset`.
  The last indexed entry must start there, its bytes parsed alone must give the document the index holds,
  and only blank bytes may follow it up to `size`; what comes after `size` the refresh reads anyway;
- NOW grows at the top: the state says the indexed blocks are the file's last `suffix` bytes. The top
  indexed block must start there and give the document the index holds, and the bytes above it must hold
  no block unless the file grew (then the refresh parses them anyway);
- DECISIONS, LESSONS and RULES are hashed whole by the refresh, and a digest that matches would skip them:
  they are parsed, and their documents must be the ones the index holds.

A state that fails is dropped, and the file is read whole again, as the first time. A process checks each
state once while neither it nor the file changes (`trusted`): parsing DECISIONS on every query of a
long-lived process (an agent session, `gitmem mcp`) would cost more than the query. A whole-hashed file's
check is remembered across processes too, as a proof: the hash of the file's bytes and the hash of the
documents the index holds for it, both as they were when the check passed. A new process that finds both
hashes equal (C speed: no markdown is parsed) has the same file and the same documents, so the same answer.
The proof lives under the user's cache directory (`gitio.cache_home`), outside the repository: the sandboxed
agent, whose HOME is private, cannot reach it (without the sandbox it is as strong as the refs backup's
folder: the same uid can find it). A forged index row changes the documents' hash, so it is checked again.
"""
from __future__ import annotations

import hashlib
import os
import sqlite3
from collections import Counter
from pathlib import Path
from typing import Any

from gitmem.confined import files
from gitmem.recall import corpus
from gitmem.workspace import proofs

PROOFS = "recall-fresh"

_CHECKED: dict[tuple[str, str], Any] = {}     # (root, path) -> the (state, file stamp) last found true


def trusted(conn: sqlite3.Connection, root: Path, role: str, path: str, state: dict[str, Any], seen: Any) -> bool:
    """`holds`, asked once per process for each `seen`: the state's text and the file's stamp (inode, size,
    mtime, ctime). Either changing asks again; the memory is this process's, which the agent cannot write."""
    place = (str(root), path)
    if _CHECKED.get(place) == seen:
        return True
    proof = _proof(conn, root, path) if role not in ("log", "now") else None
    if proof is None or _proven(root).get(path) != proof:
        if not holds(conn, root, role, path, state):
            _CHECKED.pop(place, None)
            return False
        if proof is not None:
            _remember(root, path, proof)
    if len(_CHECKED) > 256:
        _CHECKED.clear()
    _CHECKED[place] = seen
    return True


def _proof(conn: sqlite3.Connection, root: Path, path: str) -> list[str] | None:
    """[hash of the file's bytes, hash of the documents the index holds for it]; None when it cannot be read."""
    data = files.read_bytes(root, path)
    if data is None:
        return None
    digests = sorted(row[0] for row in conn.execute("SELECT digest FROM docs WHERE path = ?", (path,)))
    return [hashlib.sha1(data).hexdigest(), hashlib.sha1("\n".join(digests).encode()).hexdigest()]


def _proofs_file(root: Path) -> Path:
    return proofs.proofs_file(root, PROOFS)


def _proven(root: Path) -> dict[str, Any]:
    """The proofs kept for this work tree: path -> the proof of its last check that passed."""
    return proofs.read_proofs(root, PROOFS, max_bytes=1 << 20)


def _remember(root: Path, path: str, proof: list[str]) -> None:
    """Keep the proof; a cache: a failure to write it only costs the next process the check."""
    proofs.keep_proofs(root, PROOFS, {**_proven(root), path: proof})


def holds(conn: sqlite3.Connection, root: Path, role: str, path: str, state: dict[str, Any]) -> bool:
    """Whether `state`, what the index remembers of `path`, is true of the index's documents and the file."""
    try:
        if role == "log":
            return _log_holds(conn, root, path, int(state["size"]), int(state["offset"]))
        if role == "now":
            return _now_holds(conn, root, path, int(state["size"]), int(state["suffix"]))
    except (KeyError, TypeError, ValueError, OverflowError):
        return False
    data = files.read_bytes(root, path) or b""
    found = Counter(doc.digest for doc in corpus.iter_docs(role, _text(data), path))
    return found == Counter(row[0] for row in conn.execute("SELECT digest FROM docs WHERE path = ?", (path,)))


def _log_holds(conn: sqlite3.Connection, root: Path, path: str, upto: int, offset: int) -> bool:
    row = conn.execute("SELECT start, stop, digest FROM docs WHERE path = ? AND rel = 0 ORDER BY stop DESC LIMIT 1",
                       (path,)).fetchone()
    handle = files.open_read(root, path)
    if handle is None:
        return False
    with handle:
        size = os.fstat(handle.fileno()).st_size
        if row is None:                   # no entry indexed: so the indexed part holds none
            return offset == 0 and upto <= size and not corpus.log_docs(_text(handle.read(upto)), path)
        start, stop, digest = row
        if not (start == offset and 0 <= start < stop <= upto <= size):
            return False
        handle.seek(start)
        entry = handle.read(stop - start)
        if handle.read(upto - stop).strip():
            return False                  # text after the last indexed entry that the state claims is indexed
    return digest in {doc.digest for doc in corpus.log_docs(_text(entry), path, expect_title=False)}


def _now_holds(conn: sqlite3.Connection, root: Path, path: str, then: int, suffix: int) -> bool:
    row = conn.execute("SELECT start, stop, digest FROM docs WHERE path = ? AND rel = 1 ORDER BY start DESC LIMIT 1",
                       (path,)).fetchone()
    handle = files.open_read(root, path)
    if handle is None:
        return False
    with handle:
        size = os.fstat(handle.fileno()).st_size
        if not 0 <= suffix <= min(then, size):
            return False
        above = handle.read(size - suffix)
        if size <= then and corpus.now_docs(_text(above), path):
            return False                  # a block the state claims is indexed, with none indexed for it
        if row is None:
            return suffix == 0
        if row[0] != suffix or not 0 <= row[1] < row[0]:
            return False
        block = handle.read(row[0] - row[1])
    return row[2] in {doc.digest for doc in corpus.now_docs(_text(block), path)}


def _text(data: bytes) -> str:
    return data.decode("utf-8", errors="replace")
