"""Snapshots: the memory files as they stand in one place (a commit, the index, the work tree).

Contents load lazily and are cached; `oid` lets a check skip a file that did not change.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import cast

import pygit2
from pygit2.enums import FileStatus

from gitmem.confined import files
from gitmem.gitio.repository import Repo, explained, work_tree

# Git modes: a memory file is a blob of mode 100644 or 100755. Anything else (a symbolic link, a directory, a
# submodule) is never read as memory: its snapshot says its mode, and `read` answers None. The one list is the
# work tree opener's, so that what a commit and the work tree may hold as memory cannot differ.
BLOB_MODES = files.BLOB_MODES


# What a folder holds, as a snapshot lists it: each entry's repository-relative path, with its blob id when known
# (None for a changed work-tree file) and its git mode.
Listing = dict[str, tuple[str | None, int | None]]


class Snapshot:
    def __init__(self, label: str, loader: Callable[[str], bytes | None],
                 oids: dict[str, str | None] | Callable[[str], str | None] | None = None,
                 modes: dict[str, int | None] | Callable[[str], int | None] | None = None,
                 lister: Callable[[str], Listing | None] | None = None) -> None:
        self.label = label
        self._loader = loader
        self._oids = oids or {}
        self._modes = modes if modes is not None else {}
        self._lister = lister
        self._cache: dict[str, bytes | None] = {}
        self._listed: dict[str, Listing | None] = {}
        # Facts a check learned about a file here (the fence state at its end), kept for the next check that
        # reads this snapshot as its old side: `verify` walks a chain of commits, each the next one's parent.
        self.facts: dict[tuple[str, str], object] = {}

    def read(self, path: str) -> bytes | None:
        """The bytes of a regular file; None when it is missing or is not a regular file (see `mode`)."""
        if path not in self._cache:
            try:
                self._cache[path] = self._loader(path)
            except pygit2.GitError as err:       # a damaged object: say so, as every gitio function does
                raise explained(err) or err from None
        return self._cache[path]

    def oid(self, path: str) -> str | None:
        """The blob id when known (commit, index, a work-tree file git's status finds unchanged); None for a
        changed work-tree file or a missing one."""
        oids = self._oids
        return oids(path) if callable(oids) else oids.get(path)

    def mode(self, path: str) -> int | None:
        """The git mode of `path` when known (100644, 100755, 120000 a link, 040000 a directory, 160000 a
        submodule; in the work tree also 010000, a FIFO, socket or device); None when missing or unknown."""
        modes = self._modes
        return modes(path) if callable(modes) else modes.get(path)

    def exists(self, path: str) -> bool:
        return self.read(path) is not None

    def entries_in(self, folder: str) -> Listing | None:
        """What the folder `folder` holds directly (not below it); {} when it is missing; None when this snapshot
        cannot list folders (a write judged before it is made names its files one by one). Listed once per
        snapshot, as a file is read once: a close's checks list LOG's volumes from several rules (270 at 100x)."""
        if folder not in self._listed:
            self._listed[folder] = self._lister(folder) if self._lister is not None else None
        return self._listed[folder]

    def prefix_length(self, path: str, newer: bytes) -> int | None:
        """len(this file) when it is, byte for byte, the start of `newer`; else None.

        Snapshots that can prove it without materialising the file (gitmem.gitio.blobproof) override this:
        an append-only LOG at 100x scale is 75 MB, and copying it costs more than checking the append.
        """
        data = self.read(path)
        return len(data) if data is not None and newer.startswith(data) else None

    def with_file(self, path: str, data: bytes, *, seen_as: str = "") -> Snapshot:
        """This snapshot with `path` holding `data`, every other file, mode and folder as here: one side of a
        change seen another way (its LOG with the sealed volumes joined back, or cut off as a seal leaves it; old
        bytes that were no text read as text). `path`'s blob id is unknown there, so nothing judges it by id."""
        return Snapshot(f"{self.label}, {seen_as}" if seen_as else self.label,
                        lambda name: data if name == path else self.read(name),
                        lambda name: None if name == path else self.oid(name), self.mode, self.entries_in)

    @classmethod
    def from_dict(cls, label: str, files: dict[str, bytes]) -> Snapshot:
        def lister(folder: str) -> Listing:
            return {path: (None, 0o100644) for path in files if path.rpartition("/")[0] == folder.strip("/")}

        return cls(label, files.get, lister=lister)


class RenamedSnapshot(Snapshot):
    """`base` read under other names: `names` maps a path asked for to the path read in `base`.

    A commit that remaps a memory role in gitmem.yaml (`files.log: JOURNAL.md`) is judged with the parent's
    files under the new names, so each side is read with its own config and the rules compare role with role.
    """

    def __init__(self, base: Snapshot, names: dict[str, str]) -> None:
        super().__init__(base.label, lambda path: base.read(self._name(path)), lister=base.entries_in)
        self._base, self._names = base, names

    def _name(self, path: str) -> str:
        return self._names.get(path, path)

    def read(self, path: str) -> bytes | None:
        return self._base.read(self._name(path))

    def oid(self, path: str) -> str | None:
        return self._base.oid(self._name(path))

    def prefix_length(self, path: str, newer: bytes) -> int | None:
        return self._base.prefix_length(self._name(path), newer)


def same_blob(old: Snapshot | None, new: Snapshot, path: str) -> bool:
    """Whether `path` holds the same file on both sides: the same blob id and mode, or, where neither side
    knows an id (texts in hand: a write judged before it is made, the close's files judged together), the
    same bytes (a memcmp). A check then skips it: a 10 MB NOW nobody changed is not parsed whole."""
    if old is None:
        return False
    old_oid, new_oid = old.oid(path), new.oid(path)
    if old.mode(path) != new.mode(path):
        return False
    if old_oid is None and new_oid is None:
        data = new.read(path)
        return data is not None and data == old.read(path)
    return old_oid is not None and old_oid == new_oid


def _tree_entry(tree: pygit2.Tree, path: str) -> pygit2.Object | None:
    try:
        return tree[path]
    except (KeyError, ValueError):       # ValueError: a path no tree can hold (`a//b`, a trailing slash)
        return None


def _tree_blob(tree: pygit2.Tree, path: str) -> pygit2.Blob | None:
    """The blob of a regular file at `path`; None for anything else (a link's blob is its target, not a file)."""
    entry = _tree_entry(tree, path)
    return cast(pygit2.Blob, entry) if entry is not None and entry.filemode in BLOB_MODES else None


def _commit(repo: Repo, commit_id: str) -> pygit2.Commit:
    return repo.raw[commit_id].peel(pygit2.Commit)


def file_at(repo: Repo, commit_id: str | None, path: str) -> bytes | None:
    """The bytes of `path` in a commit; None when the commit is None or the path is not a file there."""
    if commit_id is None:
        return None
    blob = _tree_blob(_commit(repo, commit_id).tree, path)
    return blob.data if blob is not None else None


def file_id_at(repo: Repo, commit_id: str | None, path: str) -> str | None:
    """The blob id of `path` in a commit, without reading it."""
    if commit_id is None:
        return None
    blob = _tree_blob(_commit(repo, commit_id).tree, path)
    return str(blob.id) if blob is not None else None


def commit_snapshot(repo: Repo, commit_id: str | None, paths: Iterable[str]) -> Snapshot | None:
    """The memory files in a commit; None for no commit (an unborn HEAD)."""
    if commit_id is None:
        return None
    commit = _commit(repo, commit_id)
    tree = commit.tree

    def in_tree(path: str) -> tuple[str, int] | None:
        entry = _tree_entry(tree, path)
        return (str(entry.id), int(entry.filemode)) if entry is not None else None

    oid, mode = _ids_of(in_tree, paths)

    def load(path: str) -> bytes | None:
        blob = _tree_blob(tree, path)
        return blob.data if blob is not None else None

    def lister(folder: str) -> Listing:
        found = _tree_entry(tree, folder) if folder.strip("/") else tree
        if not isinstance(found, pygit2.Tree):
            return {}
        prefix = folder.strip("/") + "/" if folder.strip("/") else ""
        return {prefix + str(entry.name): (str(entry.id), int(entry.filemode)) for entry in found}

    return Snapshot(f"commit {commit_id[:10]}", load, oid, mode, lister)


def index_snapshot(repo: Repo, paths: Iterable[str]) -> Snapshot:
    """The memory files as staged. Reads the index; never writes it."""
    raw = repo.raw
    index = raw.index

    def in_index(path: str) -> tuple[str, int] | None:
        entry = _index_entry(index, path)
        return (str(entry.id), int(entry.mode)) if entry is not None else None

    oid, mode = _ids_of(in_index, paths)

    def load(path: str) -> bytes | None:
        found = oid(path)
        if found is None or mode(path) not in BLOB_MODES:
            return None
        return cast(pygit2.Blob, raw[found]).data

    def lister(folder: str) -> Listing:
        prefix = folder.strip("/") + "/"
        return {entry.path: (str(entry.id), int(entry.mode)) for entry in index
                if entry.path.startswith(prefix) and "/" not in entry.path[len(prefix):]}

    return Snapshot("index", load, oid, mode, lister)


def _ids_of(lookup: Callable[[str], tuple[str, int] | None],
            paths: Iterable[str]) -> tuple[Callable[[str], str | None], Callable[[str], int | None]]:
    """(blob id, mode) readers of a commit's tree or the index: `paths` looked up now, any other path (a listed
    volume) when first asked, each once."""
    known: dict[str, tuple[str, int] | None] = {}

    def entry(path: str) -> tuple[str, int] | None:
        if path not in known:
            known[path] = lookup(path)
        return known[path]

    for path in paths:
        entry(path)

    def oid(path: str) -> str | None:
        found = entry(path)
        return found[0] if found is not None else None

    def mode(path: str) -> int | None:
        found = entry(path)
        return found[1] if found is not None else None

    return oid, mode


def _index_entry(index: pygit2.Index, path: str) -> pygit2.IndexEntry | None:
    try:
        return index[path] if path in index else None
    except (KeyError, ValueError):
        return None


_WORKTREE_CHANGED = (FileStatus.WT_MODIFIED | FileStatus.WT_DELETED | FileStatus.WT_TYPECHANGE
                     | FileStatus.WT_RENAMED | FileStatus.WT_NEW | FileStatus.CONFLICTED)


def staged_snapshot(repo: Repo, paths: Iterable[str]) -> Snapshot:
    """The index, read from the work-tree file whenever git's status says it holds the staged bytes.

    libgit2 decides that from the index's stat data (hashing only racy entries), the way `git status`
    does, so a 75 MB LOG is read from disk instead of inflated from the object store.
    """
    paths = list(paths)
    index = index_snapshot(repo, paths)
    workdir = work_tree(repo)

    def load(path: str) -> bytes | None:
        if index.oid(path) is None or index.mode(path) not in BLOB_MODES:
            return None
        if workdir is not None:
            try:
                if not repo.raw.status_file(path) & _WORKTREE_CHANGED:
                    found = files.read_bytes(workdir, path)       # never through a link: the index's bytes, or none
                    if found is not None:
                        return found
            except (KeyError, OSError, pygit2.GitError, files.FileRefused):
                pass
        return index.read(path)

    return Snapshot("index", load, index.oid, index.mode, index.entries_in)


def stored_bytes(repo: Repo, rel: str, data: bytes) -> bytes:
    """A work-tree file's bytes as `git add` would store them: with the clean conversions the repository's
    attributes and config ask for (`text`/`eol`, `core.autocrlf`, `ident`), so a checkout made with CRLF is
    committed as git would, not line by line rewritten. libgit2 runs no external filter driver, so nothing a
    `.gitattributes` names runs here. A conversion git would refuse (`core.safecrlf`) leaves the bytes as read,
    and so does a NUL byte: git converts no binary file, and pygit2 returns the result cut at its first NUL."""
    if b"\0" in data:
        return data
    filters = repo.raw.load_filter_list(rel)
    if filters is None:
        return data
    try:
        return bytes(filters.apply_to_buffer(data))
    except pygit2.GitError:
        return data


def worktree_snapshot(workdir: Path, paths: Iterable[str] = (), *, repo: Repo | None = None,
                      stored_by: Repo | None = None) -> Snapshot:
    """The work tree as `gitmem.checks` reads it: regular files' bytes, read only as regular files inside it
    (`gitmem.confined.files`), and every path's mode, so that a link or a directory where a memory file belongs
    is reported (GM908) instead of read or called missing. `paths` is accepted for symmetry with the other
    snapshots; every path is read on demand.

    With `repo`, a file git's status finds unchanged against HEAD and the index carries their blob id, decided
    from the index's stat data as `staged_snapshot` decides it: then a check skips it as it skips an unchanged
    blob of a commit, instead of parsing a 10 MB NOW that the commit already held.

    With `stored_by` (by default `repo`), files are read as that repository would store them (`stored_bytes`):
    a checkout with CRLF is the LF file HEAD holds, not a rewrite of every line."""
    storing = stored_by or repo

    def load(rel: str) -> bytes | None:
        try:
            data = files.read_bytes(workdir, rel)
        except (files.FileRefused, NotADirectoryError):
            return None
        return stored_bytes(storing, rel, data) if storing is not None and data is not None else data

    known: dict[str, str | None] = {}

    def clean_id(rel: str) -> str | None:
        if repo is None:
            return None
        if rel not in known:
            known[rel] = None
            try:
                if repo.raw.status_file(rel) == FileStatus.CURRENT:
                    entry = _index_entry(repo.raw.index, rel)
                    known[rel] = str(entry.id) if entry is not None else None
            except (KeyError, ValueError, OSError, pygit2.GitError):
                pass
        return known[rel]

    changed: list[dict[str, int]] = []

    def listed_id(rel: str) -> str | None:
        """`clean_id` for the files of a listed folder: one status of the tracked files for all of them (1 ms for
        LOG's 269 volumes at 100x, where asking file by file took 60)."""
        if repo is None:
            return None
        if not changed:
            try:
                changed.append(repo.raw.status(untracked_files="no"))
            except (OSError, pygit2.GitError):
                return clean_id(rel)
        if rel in changed[0]:
            return None
        entry = _index_entry(repo.raw.index, rel)
        return str(entry.id) if entry is not None else None

    def lister(folder: str) -> Listing:
        try:
            found = [rel for rel, is_dir in files.walk(workdir, folder or ".", recursive=False) if not is_dir]
        except (files.FileRefused, FileNotFoundError, NotADirectoryError):
            return {}
        return {rel: (listed_id(rel), files.mode(workdir, rel)) for rel in found}

    return Snapshot("work tree", load, clean_id, modes=lambda rel: files.mode(workdir, rel), lister=lister)


def file_current(repo: Repo, rel: str) -> bool:
    """Whether the work tree's `rel` is as HEAD and the index have it, by git's own reading (line-ending
    conversion and filters included): a checkout with `core.autocrlf` holds other bytes than the blob."""
    try:
        return bool(repo.raw.status_file(rel) == FileStatus.CURRENT)
    except (KeyError, ValueError, OSError, pygit2.GitError):
        return False


def blob_size(repo: Repo, oid: str) -> int | None:
    """A blob's size from its header, without inflating it; None when it is missing."""
    try:
        return int(repo.raw.odb.read_header(oid)[1])
    except (KeyError, ValueError, pygit2.GitError):
        return None
