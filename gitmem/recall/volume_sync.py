"""Keep the index in step with LOG's sealed volumes (rules 6): each indexed once, under its own path.

A volume never changes, so its documents are written when it first appears in HEAD's tree and kept while the
tree names the same blob. Only volumes git holds are history (`gitmem.workspace.log_history`): their bytes are
read from git by blob id, so a file planted under `history/`, a link, or an edited copy in the work tree is never
indexed. The `sources` row of a volume (role VOLUME, state `{"blob": id}`) is the index's claim, written where the
agent can write; a refresh believes it only when the documents prove it (`sync_state_proof.volumes_proven`, or
`volume_holds` from the volume's bytes), and indexes the volume again otherwise.
"""
from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from gitmem import gitio
from gitmem.memory import volumes
from gitmem.recall import corpus, sync_state_proof
from gitmem.recall.database import replace_file_docs
from gitmem.recall.incremental_sync import remembered, spans
from gitmem.workspace import log_history

VOLUME = "volume"        # the role of a volume's `sources` row


def sync_volumes(conn: sqlite3.Connection, repo: gitio.Repo, root: Path, workspace: str, log_path: str) -> bool:
    """Index the volumes of `log_path` that HEAD holds and the index does not, drop those it no longer holds;
    True when the index changed. Call it before LOG.md's own sync (`incremental_sync.sync_file`)."""
    folder = volumes.volume_folder(log_path)
    history = log_history.in_repo(repo, root, log_path)
    found = {volume.path: volume for volume in history.volumes}
    rows = {path: remembered(state) for path, state in
            conn.execute("SELECT path, state FROM sources WHERE role = ?", (VOLUME,))
            if volumes.volume_number(log_path, path) is not None}
    claimed = {path: volume.blob for path, volume in found.items()
               if (rows.get(path) or {}).get("blob") == volume.blob}
    proven = sync_state_proof.volumes_proven(conn, root, folder, claimed)
    checked: dict[str, str] = {}
    indexed = False
    for path, volume in found.items():
        if path in proven:
            continue
        data = history.volume_bytes(volume)
        checked[path] = volume.blob
        if path in claimed and sync_state_proof.volume_holds(conn, path, data):
            continue
        docs = corpus.entry_docs(history.volume_entries(volume), path)
        replace_file_docs(conn, workspace, path, docs, spans=spans(data, 0, 1, docs))
        conn.execute("INSERT OR REPLACE INTO sources(path, workspace, role, size, mtime, checked, lines, state)"
                     " VALUES (?, ?, ?, ?, 0, 0, ?, ?)", (path, workspace, VOLUME, len(data), data.count(b"\n") + 1,
                                                         json.dumps({"blob": volume.blob})))
        indexed = True
    gone = rows.keys() - found.keys()
    for path in gone:
        _drop(conn, workspace, path)
    if indexed:
        # A new volume holds entries LOG.md's documents held: LOG.md (short since the seal) is indexed again
        # after it, so that documents stay in the order history was written (recency of last resort, rank.py).
        _drop(conn, workspace, log_path)
    sync_state_proof.remember_volumes(conn, root, folder, checked)
    return indexed or bool(gone)


def _drop(conn: sqlite3.Connection, workspace: str, path: str) -> None:
    replace_file_docs(conn, workspace, path, [])
    conn.execute("DELETE FROM sources WHERE path = ?", (path,))
