"""A hit is returned only when its source still holds it: the index is a cache the agent can write.

The index lives in `.git/gitmem/`, which the agent can write even inside the sandbox, so a planted row could
put text into recall results that no memory file and no commit holds: prompt injection, with a path and a
line number to look real. Before a hit is shown, its document is made again from its source and compared
with what the index would show (kind, ID, title, body, date: `corpus.Doc.digest`):

- an entry of a memory file (a LOG entry, NOW block, lesson, decision): the bytes at its stored span,
  parsed alone. The span is the index's claim too, but the bytes are the file's: a forged span shows text
  that is in the file, or nothing. A decision's section (Pending or Resolved) is part of its title, so its
  bytes are parsed under the last section heading above them in the file (found with the fences counted);
- an entry of a sealed LOG volume (`history/LOG-0003.md`): the bytes at its span in the blob HEAD's tree holds
  at that path, parsed alone; a path the tree does not hold as a volume of a configured LOG holds nothing;
- a rule: RULES parsed whole (it is capped at `limits.rules_max_lines`), once per search;
- a commit: the commit its ID names, read from git.

The role of a path comes from the config (`Index.scopes`), never from the index. Only the hits about to be
returned are read again, so the cost is a few small reads per query, whatever the size of the history.
"""
from __future__ import annotations

import hashlib
import os
import sqlite3
from collections.abc import Iterable
from typing import BinaryIO

from gitmem import gitio
from gitmem.confined import files
from gitmem.memory import fences, volumes
from gitmem.recall import corpus
from gitmem.recall.incremental_sync import as_text
from gitmem.recall.index import Index
from gitmem.workspace import log_history

WHOLE = ("rules",)             # roles whose file is parsed whole; the others are read back from their spans
SECTIONED = ("decisions",)     # roles whose entries take their section from the heading above them
SECTION = b"## "


class Holder:
    """Answers, for one search, which documents their sources hold (each document asked about once)."""

    def __init__(self, index: Index, conn: sqlite3.Connection) -> None:
        self.index, self.conn = index, conn
        self.roles = {path: role for scope in index.scopes for role, path in scope.paths}
        self._known: dict[int, bool] = {}
        self._whole: dict[str, set[str]] = {}
        self.logs = [path for path, role in self.roles.items() if role == "log"]
        self._volumes: dict[str, dict[str, str]] = {}       # LOG path -> its volumes in HEAD (path -> blob id)
        self._blobs: dict[str, bytes] = {}

    def drop(self, ids: Iterable[int]) -> set[int]:
        """Those of `ids` that their source does not hold."""
        ids = list(ids)
        wanted = [doc_id for doc_id in ids if doc_id not in self._known]
        if wanted:
            marks = ",".join("?" * len(wanted))
            rows = self.conn.execute(
                "SELECT d.id, d.kind, d.ident, d.date, d.path, d.rel, d.start, d.stop, f.title, f.body"
                f" FROM docs d JOIN fts f ON f.rowid = d.id WHERE d.id IN ({marks})", wanted).fetchall()
            found = {row[0]: row for row in rows}
            for doc_id in wanted:
                row = found.get(doc_id)
                self._known[doc_id] = row is not None and self._holds(*row[1:])
        return {doc_id for doc_id in ids if not self._known[doc_id]}

    def _holds(self, kind: str, ident: str, day: str, path: str, rel: int, start: int, stop: int, title: str,
               body: str) -> bool:
        shown = hashlib.sha1("\x1f".join((kind, ident, title, body, day)).encode("utf-8")).hexdigest()
        if kind == "commit":
            return shown in self._commit(ident)
        role = self.roles.get(path)
        if role is None:
            return shown in self._volume_span(path, start, stop)
        if role not in WHOLE:
            return shown in self._span(role, path, rel, start, stop)
        if path not in self._whole:
            data = files.read_bytes(self.index.root, path) or b""
            self._whole[path] = {doc.digest for doc in corpus.iter_docs(role, as_text(data), path)}
        return shown in self._whole[path]

    def _span(self, role: str, path: str, rel: int, start: int, stop: int) -> set[str]:
        handle = files.open_read(self.index.root, path)
        if handle is None:
            return set()
        with handle:
            size = os.fstat(handle.fileno()).st_size
            begin, end = (size - start, size - stop) if rel else (start, stop)
            if not 0 <= begin < end <= size:
                return set()
            section = _section(handle, begin) if role in SECTIONED else b""
            handle.seek(begin)
            text = as_text(section + handle.read(end - begin))
        docs = corpus.log_docs(text, path, expect_title=False) if role == "log" else corpus.iter_docs(role, text, path)
        return {doc.digest for doc in docs}

    def _volume_span(self, path: str, start: int, stop: int) -> set[str]:
        """The documents at a span of a sealed volume: bytes git holds at `path` in HEAD's tree, where the path
        names a volume of a LOG the config maps (never a file in the work tree: a planted one is not history)."""
        log_path = next((log for log in self.logs if volumes.volume_number(log, path) is not None), None)
        if log_path is None:
            return set()
        if log_path not in self._volumes:
            self._volumes[log_path] = {v.path: v.blob for v in log_history.tracked(self.index.repo, log_path)}
        blob = self._volumes[log_path].get(path)
        if blob is None:
            return set()
        if blob not in self._blobs:
            self._blobs[blob] = gitio.blob(self.index.repo, blob)
        data = self._blobs[blob]
        if not 0 <= start < stop <= len(data):
            return set()
        return {doc.digest for doc in corpus.log_docs(as_text(data[start:stop]), path, expect_title=False)}

    def _commit(self, ident: str) -> set[str]:
        if not ident or any(c not in "0123456789abcdef" for c in ident):
            return set()       # a commit's ID is its short hex id; anything else would be a revision to resolve
        try:
            found = gitio.commit(self.index.repo, ident)
        except gitio.RepoError:
            return set()
        doc = corpus.commit_doc(found.id, found.time, found.author.name, found.message, self.index.config.tzinfo())
        return {doc.digest}



def _section(handle: BinaryIO, begin: int) -> bytes:
    """The last section heading line (`## `, outside fenced code) before `begin`, with its line end; b"" when
    there is none."""
    handle.seek(0)
    data = handle.read(begin)
    at = fences.last_heading_before(data, SECTION, len(data))
    return fences.line_starting_at(data, at) + b"\n\n" if at is not None else b""
