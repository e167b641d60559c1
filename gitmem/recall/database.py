"""The SQLite side of the recall index: schema, connections, and adding or dropping documents.

The index is a disposable cache under `.git/gitmem/`: nothing in it is ever the only copy of anything.
"""
from __future__ import annotations

import functools
import sqlite3
from collections.abc import Iterable
from pathlib import Path

from gitmem.errors import GitmemError
from gitmem.recall.corpus import Doc

# Bump when the schema or what a document holds changes; an index from another version is rebuilt.
SCHEMA_VERSION = 11
TOKENIZER = "porter unicode61 remove_diacritics 2"

_SCHEMA = f"""
CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE sources(path TEXT PRIMARY KEY, workspace TEXT NOT NULL, role TEXT NOT NULL, size INTEGER NOT NULL,
                     mtime INTEGER NOT NULL, checked INTEGER NOT NULL, lines INTEGER NOT NULL, state TEXT NOT NULL);
CREATE TABLE docs(id INTEGER PRIMARY KEY AUTOINCREMENT, workspace TEXT NOT NULL, kind TEXT NOT NULL,
                  ident TEXT NOT NULL, key TEXT NOT NULL, ts REAL, date TEXT NOT NULL, path TEXT NOT NULL,
                  line INTEGER NOT NULL, end_line INTEGER NOT NULL, rel INTEGER NOT NULL, digest TEXT NOT NULL,
                  start INTEGER NOT NULL, stop INTEGER NOT NULL);
CREATE INDEX docs_by_path ON docs(path, line);
CREATE INDEX docs_by_scope ON docs(workspace, kind, ts);
CREATE VIRTUAL TABLE fts USING fts5(title, body, tokenize='{TOKENIZER}');
CREATE TABLE gone(id INTEGER PRIMARY KEY);
"""
# `start`, `stop`: the bytes of a LOG entry or NOW block in its file (NOW's counted from the end, as its lines),
# where a hit is read again before it is returned (gitmem.recall.hit_proof). 0, 0 for the others.
# Document ids are never reused (AUTOINCREMENT), and every deleted id is noted in `gone` until the vector
# store (vectors.py) has dropped its rows: so a vector row can never be taken for another document.


class RecallError(GitmemError):
    """Recall cannot work here (no FTS5 in this SQLite, an unwritable .git); the message says what to do."""


@functools.cache
def require_fts5() -> None:
    try:
        probe = sqlite3.connect(":memory:")
        probe.execute("CREATE VIRTUAL TABLE probe USING fts5(x)")
        probe.close()
    except sqlite3.OperationalError:
        raise RecallError(f"this Python's SQLite {sqlite3.sqlite_version} lacks FTS5; "
                          "install a Python built with a full SQLite to use recall") from None


def connect(path: Path) -> sqlite3.Connection:
    # A first vector build holds the write lock for minutes on a large memory: wait for it rather than fail.
    conn = sqlite3.connect(str(path), timeout=600, isolation_level=None)
    # WAL: readers never wait for the writer; NORMAL skips the fsync per commit (a torn cache is rebuilt).
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=NORMAL")
    return conn


def create(conn: sqlite3.Connection, fingerprint: str) -> None:
    conn.executescript(_SCHEMA)
    conn.executemany("INSERT INTO meta(key, value) VALUES (?, ?)",
                     [("schema", str(SCHEMA_VERSION)), ("fingerprint", fingerprint), ("head", ""), ("docs", "0")])


def is_current(conn: sqlite3.Connection, fingerprint: str) -> bool:
    """False for an index from another schema or config; sqlite3.DatabaseError when the file is not a database."""
    names = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    if not {"meta", "sources", "docs", "fts", "gone"} <= names:
        return False
    meta = dict(conn.execute("SELECT key, value FROM meta").fetchall())
    return meta.get("schema") == str(SCHEMA_VERSION) and meta.get("fingerprint") == fingerprint


def get_meta(conn: sqlite3.Connection, key: str) -> str:
    row = conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
    return row[0] if row else ""


def set_meta(conn: sqlite3.Connection, key: str, value: str) -> None:
    conn.execute("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", (key, value))


Span = tuple[int, int]


def _stored(span: Span, size: int) -> Span:
    return (size - span[0], size - span[1]) if size else span


def insert_docs(conn: sqlite3.Connection, workspace: str, docs: Iterable[Doc], *, keys: Iterable[str] | None = None,
                lines: int = 0, spans: dict[int, Span] | None = None, size: int = 0) -> int:
    """Add documents. `lines` > 0 stores line numbers counted from the end of a file of that many lines, and
    `size` the byte spans (by the doc's first line) counted from the end of a file of that many bytes."""
    docs = list(docs)
    count = 0
    for doc, key in zip(docs, list(keys) if keys is not None else [d.key for d in docs], strict=False):
        line, end = (doc.line - lines, doc.end - lines) if lines else (doc.line, doc.end)
        start, stop = _stored((spans or {}).get(doc.line, (0, 0)), size) if spans else (0, 0)
        cursor = conn.execute(
            "INSERT INTO docs(workspace, kind, ident, key, ts, date, path, line, end_line, rel, digest, start, stop)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (workspace, doc.kind, doc.ident, key, doc.ts, doc.date, doc.path, line, end, 1 if lines else 0,
             doc.digest, start, stop))
        conn.execute("INSERT INTO fts(rowid, title, body) VALUES (?, ?, ?)", (cursor.lastrowid, doc.title, doc.body))
        count += 1
    _count(conn, count)
    return count


def _count(conn: sqlite3.Connection, change: int) -> None:
    """Keep the entry count (BM25's N for idf) in meta: count(*) would cost a scan per update."""
    if change:
        conn.execute("UPDATE meta SET value = CAST(value AS INTEGER) + ? WHERE key = 'docs'", (change,))


def delete_docs(conn: sqlite3.Connection, ids: list[int]) -> None:
    for start in range(0, len(ids), 500):
        chunk = ids[start:start + 500]
        marks = ",".join("?" * len(chunk))
        conn.execute(f"DELETE FROM fts WHERE rowid IN ({marks})", chunk)
        conn.executemany("INSERT OR IGNORE INTO gone(id) VALUES (?)", [(doc_id,) for doc_id in chunk])
        _count(conn, -conn.execute(f"DELETE FROM docs WHERE id IN ({marks})", chunk).rowcount)


def unique_keys(docs: list[Doc]) -> list[str]:
    """Entry keys made unique within a file (a hand-edited file may repeat an ID or a cycle)."""
    seen: dict[str, int] = {}
    keys = []
    for doc in docs:
        seen[doc.key] = seen.get(doc.key, 0) + 1
        keys.append(doc.key if seen[doc.key] == 1 else f"{doc.key}#{seen[doc.key]}")
    return keys


def replace_file_docs(conn: sqlite3.Connection, workspace: str, path: str, docs: list[Doc], *,
                      lines: int = 0, spans: dict[int, Span] | None = None, size: int = 0) -> None:
    """Make the documents of `path` equal to `docs`, rewriting full-text rows only for entries that changed.

    Unchanged entries that merely moved keep their row and get their new line numbers and spans.
    """
    old = {key: (doc_id, digest, (line, end, start, stop)) for doc_id, key, digest, line, end, start, stop in
           conn.execute("SELECT id, key, digest, line, end_line, start, stop FROM docs WHERE path = ?", (path,))}
    keys = unique_keys(docs)
    fresh_docs, fresh_keys = [], []
    for doc, key in zip(docs, keys, strict=False):
        line, end = (doc.line - lines, doc.end - lines) if lines else (doc.line, doc.end)
        start, stop = _stored((spans or {}).get(doc.line, (0, 0)), size) if spans else (0, 0)
        found = old.pop(key, None)
        if found is not None and found[1] == doc.digest:
            if found[2] != (line, end, start, stop):
                conn.execute("UPDATE docs SET line = ?, end_line = ?, rel = ?, start = ?, stop = ? WHERE id = ?",
                             (line, end, 1 if lines else 0, start, stop, found[0]))
            continue
        if found is not None:
            old[key] = found            # changed: drop the old row below
        fresh_docs.append(doc)
        fresh_keys.append(key)
    delete_docs(conn, [value[0] for value in old.values()])
    insert_docs(conn, workspace, fresh_docs, keys=fresh_keys, lines=lines, spans=spans, size=size)
