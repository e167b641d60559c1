"""The recall index of one repository: where it lives, when it is rebuilt, and commit history sync.

It lives at `.git/gitmem/recall.sqlite`, so it is never committed and never dirties the tree. It is
rebuilt from scratch when it is missing, is not a readable database, comes from another schema version
or another workspace layout, or when HEAD moved in a way that is not a fast-forward (the last indexed
commit is no longer an ancestor of HEAD: a rebase, reset or force-pull rewrote history).
"""
from __future__ import annotations

import hashlib
import os
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from gitmem import gitio
from gitmem.config import REQUIRED_ROLES, Config
from gitmem.config.ownership import Ownership, shared_label
from gitmem.recall import corpus, database
from gitmem.recall.incremental_sync import sync_file
from gitmem.recall.volume_sync import sync_volumes
from gitmem.workspace import Workspace

if TYPE_CHECKING:
    from gitmem.recall.encoder import Encoder
    from gitmem.recall.vectors import Embedding, Store

# The memory files, LOG first: history is indexed in the order it was written.
ROLES = ("log", *(role for role in REQUIRED_ROLES if role != "log"))
INDEX_FILE = "recall.sqlite"
Progress = Callable[[int], None]      # advance(n): n more items done
DEFAULT = ""          # the workspace name of the top-level memory, and of commits shared by several workspaces


@dataclass(frozen=True)
class Scope:
    """The memory files recall files under one name: role -> repo-relative path. The name is a workspace's
    for the files it alone owns, and `gitmem.config.ownership.shared_label` for the files the same workspaces
    share; `owners` says which workspaces see them."""

    name: str
    paths: tuple[tuple[str, str], ...]
    owners: frozenset[str] = frozenset({DEFAULT})


def scopes(config: Config) -> tuple[Scope, ...]:
    """The memory files of every workspace, grouped by the workspaces that own them (gitmem.config.ownership),
    from the config at hand: the default workspace's files first, in the order of ROLES."""
    ownership = Ownership.of(config)
    grouped: dict[frozenset[str], list[tuple[str, str]]] = {}
    seen: set[str] = set()
    for _, paths in ownership.places:
        by_role = dict(paths)
        for role in ROLES:
            path = by_role[role]
            if path not in seen:
                seen.add(path)
                grouped.setdefault(ownership.owners_of(path), []).append((role, path))
    return tuple(Scope(_scope_name(owners), tuple(paths), owners) for owners, paths in grouped.items())


def _scope_name(owners: frozenset[str]) -> str:
    return next(iter(owners)) if len(owners) == 1 else shared_label(owners)


def visible_to(all_scopes: tuple[Scope, ...], workspace: str) -> tuple[str, ...]:
    """The scope names whose documents a search of `workspace` may return: its own, and those it shares."""
    return (workspace, *(scope.name for scope in all_scopes if len(scope.owners) > 1 and workspace in scope.owners))


def commit_scope(all_scopes: tuple[Scope, ...], touched: set[str]) -> str:
    """The scope a commit's message is filed under: the one whose owners are exactly the workspaces owning every
    memory file it changed; DEFAULT (every workspace's) when no workspace owns them all."""
    owners = [scope.owners for scope in all_scopes for _, path in scope.paths if path in touched]
    common = frozenset.intersection(*owners) if owners else frozenset()
    return _scope_name(common) if common else DEFAULT


def index_fingerprint(all_scopes: tuple[Scope, ...], config: Config) -> str:
    text = repr((all_scopes, config.timezone))
    return hashlib.sha1(text.encode("utf-8")).hexdigest()


class Index:
    """An open index, kept in step with the work tree and history by `refresh()`."""

    def __init__(self, ws: Workspace) -> None:
        database.require_fts5()
        self.repo = ws.repo
        self.root = gitio.root(self.repo)
        self.config = ws.config
        self.scopes = scopes(ws.config)
        self.fingerprint = index_fingerprint(self.scopes, ws.config)
        self.path = gitio.state_dir(self.repo) / INDEX_FILE
        self.conn: sqlite3.Connection | None = None
        self.rebuilt = False
        self._store: Store | None = None         # the open vector store, kept between queries

    def close(self) -> None:
        if self.conn is not None:
            self.conn.close()
            self.conn = None

    def refresh(self) -> sqlite3.Connection:
        """Bring the index up to date, rebuilding it when it cannot be updated; returns the connection."""
        self.rebuilt = False
        try:
            if self.conn is None and self.path.exists():
                self.conn = database.connect(self.path)
            if self.conn is not None and database.is_current(self.conn, self.fingerprint) and self._update(self.conn):
                return self.conn
        except sqlite3.DatabaseError:
            pass          # not a database, or a damaged one: it is only a cache, so build it again
        return self.rebuild()

    def vectors(self, model: Encoder, progress: Embedding | None = None) -> Store:
        """The vector store, brought up to the index's entries (call after `refresh`); `progress(done, total)`
        hears the entries embedded when that is needed."""
        from gitmem.recall import vectors

        conn = self.refresh() if self.conn is None else self.conn
        state = self.path.parent
        found = self._store
        if found is None or not vectors.current(conn, found, model):
            found = vectors.open_store(conn, state, model, found)
        if found is not None and not vectors.behind(conn, found):
            self._store = found
            return found
        conn.execute("BEGIN IMMEDIATE")
        try:
            found = vectors.sync(conn, state, model, found, progress)
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise
        self._store = found
        return found

    def rebuild(self, progress: Progress | None = None) -> sqlite3.Connection:
        """Build a fresh index next to the old one, then swap it in. `progress(n)` hears each memory file and
        commit indexed (`work()` says how many there are)."""
        from gitmem.recall import vectors
        from gitmem.workspace.statedir import state_directory

        self.close()
        state_directory(self.path.parent)
        try:
            fresh = self.path.with_name(f"{INDEX_FILE}.{os.getpid()}.tmp")
            _remove(fresh)
            conn = database.connect(fresh)
            database.create(conn, self.fingerprint)
            self._update(conn, progress)
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            conn.close()
            # A leftover -wal next to the new file would be replayed into it, so it goes first.
            _remove(self.path)
            os.replace(fresh, self.path)
            _remove(fresh)
            vectors.remove_others(self.path.parent)     # the new index names no vector folder yet
        except OSError as err:
            raise database.RecallError(f"cannot write the recall index {self.path}: {err.strerror}") from None
        self.conn = database.connect(self.path)
        self.rebuilt = True
        return self.conn

    def work(self) -> int:
        """What a rebuild indexes: the memory files and every commit (for a progress bar)."""
        head = gitio.head_id(self.repo)
        commits = gitio.count_range(self.repo, None, head) if head is not None else 0
        return sum(len(scope.paths) for scope in self.scopes) + commits

    def _update(self, conn: sqlite3.Connection, progress: Progress | None = None) -> bool:
        """One write transaction for all changes; False when history was rewritten (rebuild instead)."""
        advance = progress or (lambda n: None)
        conn.execute("BEGIN IMMEDIATE")
        try:
            for scope in self.scopes:
                for role, path in scope.paths:
                    if role == "log":           # history in order: the volumes, then LOG.md
                        sync_volumes(conn, self.repo, self.root, scope.name, path)
                    sync_file(conn, self.root, scope.name, role, path)
                    advance(1)
            head = gitio.head_id(self.repo) or ""
            last = database.get_meta(conn, "head")
            if head != last:
                paths = [path for scope in self.scopes for _, path in scope.paths]
                commits = gitio.commits_since(self.repo, last or None, paths)
                if commits is None:                # not a fast-forward: history was rewritten
                    conn.execute("ROLLBACK")
                    return False
                self._add_commits(conn, commits, advance)
                database.set_meta(conn, "head", head)
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise
        return True

    def _add_commits(self, conn: sqlite3.Connection, commits: list[gitio.CommitInfo], advance: Progress) -> None:
        """A commit's message is filed as `commit_scope` says: under the workspaces that own all it changed."""
        zone = self.config.tzinfo()
        docs: dict[str, list[corpus.Doc]] = {}
        for info in commits:
            doc = corpus.commit_doc(info.id, info.time, info.author, info.message, zone)
            docs.setdefault(commit_scope(self.scopes, set(info.touched)), []).append(doc)
        for name, items in docs.items():
            database.insert_docs(conn, name, items, keys=[f"commit:{doc.ident}" for doc in items])
            advance(len(items))


def _remove(path: Path) -> None:
    for candidate in (path, path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm")):
        try:
            candidate.unlink()
        except FileNotFoundError:
            pass
