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

- a sealed LOG volume (rules 6) never changes: its row says which blob was indexed (recall.volume_sync). The
  proof kept for it is [its blob id, the hash of its documents], so a new process checks every volume with one
  read of the documents' digests and no volume read; without a proof, the volume's last indexed entry is checked
  against its bytes in git, as LOG's is.

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
    return [hashlib.sha1(data).hexdigest(), _hash(digests)]


def _proofs_file(root: Path) -> Path:
    return proofs.proofs_file(root, PROOFS)


def _proven(root: Path) -> dict[str, Any]:
    """The proofs kept for this work tree: path -> the proof of its last check that passed."""
    return proofs.read_proofs(root, PROOFS, max_bytes=1 << 20)


def _remember(root: Path, path: str, proof: list[str]) -> None:
    """Keep the proof; a cache: a failure to write it only costs the next process the check."""
    _remember_all(root, {path: proof})


def _remember_all(root: Path, found: dict[str, list[str]]) -> None:
    proofs.keep_proofs(root, PROOFS, {**_proven(root), **found})


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


def volumes_proven(conn: sqlite3.Connection, root: Path, folder: str, found: dict[str, str]) -> set[str]:
    """The volumes among `found` (path -> git blob id, all in `folder`) whose documents the index holds as they
    were when a check last passed: the proof kept for each ([its blob id, the hash of its documents]) matches.
    One read of the documents' digests for the folder, no volume read: a warm query pays no more at 100x."""
    proven = _proven(root)
    wanted = {path for path, blob in found.items() if isinstance(proven.get(path), list) and proven[path][:1] == [blob]}
    if not wanted:
        return set()
    digests = _folder_digests(conn, folder)
    return {path for path in wanted if proven[path] == [found[path], _hash(digests.get(path, []))]}


def volume_holds(conn: sqlite3.Connection, path: str, data: bytes) -> bool:
    """Whether the index holds volume `path` (its bytes `data`, read from git) whole, checked as LOG's state is
    (`_log_holds`): the last indexed entry ends where only blank bytes follow, and parsed alone gives the document
    the index holds. A volume never changes, so an entry the index misses at its end is all a stale row could hide."""
    row = conn.execute("SELECT start, stop, digest FROM docs WHERE path = ? AND rel = 0 ORDER BY stop DESC LIMIT 1",
                       (path,)).fetchone()
    if row is None:
        return False
    start, stop, digest = row
    if not (0 <= start < stop <= len(data)) or data[stop:].strip():
        return False
    return digest in {doc.digest for doc in corpus.log_docs(_text(data[start:stop]), path, expect_title=False)}


def remember_volumes(conn: sqlite3.Connection, root: Path, folder: str, found: dict[str, str]) -> None:
    """Keep the proof of each volume in `found` (path -> blob id) as the index holds it now: after this process
    indexed it, or checked it (`volume_holds`)."""
    if not found:
        return
    digests = _folder_digests(conn, folder)
    _remember_all(root, {path: [blob, _hash(digests.get(path, []))] for path, blob in found.items()})


def _folder_digests(conn: sqlite3.Connection, folder: str) -> dict[str, list[str]]:
    """path -> the sorted digests of its documents, for every path in `folder` ('/' sorts just below '0')."""
    grouped: dict[str, list[str]] = {}
    for path, digest in conn.execute("SELECT path, digest FROM docs WHERE path > ? AND path < ? ORDER BY path, digest",
                                     (f"{folder}/", f"{folder}0")):
        grouped.setdefault(path, []).append(digest)
    return grouped


def _hash(digests: list[str]) -> str:
    """The hash of a file's documents, by their sorted digests: what a proof compares."""
    return hashlib.sha1("\n".join(digests).encode()).hexdigest()


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
