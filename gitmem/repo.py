"""The only module that talks to pygit2: snapshots of HEAD, index and work tree, dirty state, commits, push."""
from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pygit2
from pygit2.enums import FileStatus, RepositoryOpenFlag

from gitmem.snapshot import Snapshot


class RepoError(Exception):
    """A git problem, with a message that tells the user what to do."""


@dataclass(frozen=True)
class Identity:
    name: str
    email: str

    def signature(self, when: int | None = None, offset: int = 0) -> pygit2.Signature:
        if when is None:
            return pygit2.Signature(self.name, self.email)
        return pygit2.Signature(self.name, self.email, when, offset)

    def __str__(self) -> str:
        return f"{self.name} <{self.email}>"


def open_repo(path: str | Path | None = None) -> pygit2.Repository:
    """Open like the git command line does, honouring GIT_DIR and GIT_INDEX_FILE (hooks get a temporary index)."""
    start = str(path) if path is not None else os.getcwd()
    try:
        if path is None or os.environ.get("GIT_INDEX_FILE") or os.environ.get("GIT_DIR"):
            return pygit2.Repository(start, RepositoryOpenFlag.FROM_ENV)
        return pygit2.Repository(start)
    except pygit2.GitError:
        raise RepoError(f"{start} is not inside a git repository; run `git init` first") from None


def root(repo: pygit2.Repository) -> Path:
    if repo.workdir is None:
        raise RepoError("this is a bare repository; gitmem needs a work tree")
    return Path(repo.workdir)


def head_commit(repo: pygit2.Repository) -> pygit2.Commit | None:
    if repo.head_is_unborn:
        return None
    return repo.head.peel(pygit2.Commit)


def current_branch(repo: pygit2.Repository) -> str | None:
    """The short branch name; None when HEAD is detached."""
    if repo.head_is_detached:
        return None
    ref = repo.references.get("HEAD")
    target = ref.target if ref is not None else None
    return str(target).removeprefix("refs/heads/") if isinstance(target, str) else repo.head.shorthand


def tree_blob(tree: pygit2.Tree, path: str) -> pygit2.Object | None:
    try:
        entry = tree[path]
    except KeyError:
        return None
    return entry if entry.type == pygit2.enums.ObjectType.BLOB else None


def commit_snapshot(repo: pygit2.Repository, commit: pygit2.Commit | None, paths: Iterable[str]) -> Snapshot | None:
    """The memory files in a commit; None for an unborn HEAD."""
    if commit is None:
        return None
    tree = commit.tree
    oids: dict[str, str | None] = {}
    for path in paths:
        blob = tree_blob(tree, path)
        oids[path] = str(blob.id) if blob is not None else None

    def load(path: str) -> bytes | None:
        blob = tree_blob(tree, path)
        return blob.data if blob is not None else None

    return Snapshot(f"commit {str(commit.id)[:10]}", load, oids)


def index_snapshot(repo: pygit2.Repository, paths: Iterable[str]) -> Snapshot:
    """The memory files as staged. Reads the index; never writes it."""
    index = repo.index
    oids: dict[str, str | None] = {}
    for path in paths:
        entry = index[path] if path in index else None
        oids[path] = str(entry.id) if entry is not None else None

    def load(path: str) -> bytes | None:
        oid = oids.get(path)
        if oid is None:
            return None
        return repo[oid].data

    return Snapshot("index", load, oids)


def worktree_snapshot(workdir: Path, paths: Iterable[str] = ()) -> Snapshot:
    def load(path: str) -> bytes | None:
        try:
            return (workdir / path).read_bytes()
        except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
            return None

    return Snapshot("work tree", load)


def user_identity(repo: pygit2.Repository) -> Identity | None:
    """Who would author a commit now: GIT_AUTHOR_* first, then user.name / user.email."""
    name = os.environ.get("GIT_AUTHOR_NAME")
    email = os.environ.get("GIT_AUTHOR_EMAIL")
    config = repo.config
    try:
        name = name or config["user.name"]
        email = email or config["user.email"]
    except KeyError:
        pass
    if not name or not email:
        return None
    return Identity(name, email)


_DIRTY_LABELS = (
    (FileStatus.INDEX_NEW | FileStatus.INDEX_MODIFIED | FileStatus.INDEX_DELETED | FileStatus.INDEX_RENAMED
     | FileStatus.INDEX_TYPECHANGE, "staged"),
    (FileStatus.WT_MODIFIED | FileStatus.WT_DELETED | FileStatus.WT_TYPECHANGE | FileStatus.WT_RENAMED, "modified"),
    (FileStatus.WT_NEW, "untracked"),
    (FileStatus.CONFLICTED, "conflicted"),
)


def dirty_files(repo: pygit2.Repository) -> list[tuple[str, str]]:
    """(path, what) for staged, modified and untracked-but-not-ignored files, sorted by path."""
    found = []
    for path, flags in repo.status(untracked_files="all", ignored=False).items():
        for mask, label in _DIRTY_LABELS:
            if flags & mask:
                found.append((path, label))
                break
    return sorted(found)


def write_tree_with(repo: pygit2.Repository, base: pygit2.Commit | None,
                    files: dict[str, bytes | None]) -> tuple[pygit2.Oid, dict[str, pygit2.Oid]]:
    """A tree equal to `base`'s with `files` replaced (None deletes), built without touching the repo's index.

    Returns the tree id and the blob id written for each replaced path.
    """
    blobs: dict[str, pygit2.Oid] = {}
    index = pygit2.Index()
    if base is not None:
        index.read_tree(base.tree)
    for path, data in files.items():
        if data is None:
            if path in index:
                index.remove(path)
            continue
        blobs[path] = repo.create_blob(data)
        index.add(pygit2.IndexEntry(path, blobs[path], pygit2.enums.FileMode.BLOB))
    return index.write_tree(repo), blobs


def commit_files(repo: pygit2.Repository, files: dict[str, bytes | None], message: str, *,
                 author: Identity, committer: Identity | None = None, ref: str = "HEAD",
                 parents: list[pygit2.Oid] | None = None) -> pygit2.Oid:
    """Commit `files` on top of `ref`, then bring the index in line with the new tree for those paths."""
    base = head_commit(repo) if ref == "HEAD" else repo.references[ref].peel(pygit2.Commit)
    tree, blobs = write_tree_with(repo, base, files)
    if parents is None:
        parents = [base.id] if base is not None else []
    oid = repo.create_commit(ref, author.signature(), (committer or author).signature(), message, tree, parents)
    if ref == "HEAD":
        index = repo.index
        index.read()
        for path, data in files.items():
            if data is None:
                if path in index:
                    index.remove(path)
            else:
                index.add(pygit2.IndexEntry(path, blobs[path], pygit2.enums.FileMode.BLOB))
        index.write()
    return oid


def walk_range(repo: pygit2.Repository, start: str | None, end: str) -> Iterator[pygit2.Commit]:
    """Commits reachable from `end` and not from `start` (all of them when `start` is None), oldest first."""
    walker = repo.walk(resolve(repo, end).id, pygit2.enums.SortMode.TOPOLOGICAL | pygit2.enums.SortMode.REVERSE)
    if start:
        walker.hide(resolve(repo, start).id)
    yield from walker


def resolve(repo: pygit2.Repository, rev: str) -> pygit2.Commit:
    try:
        return repo.revparse_single(rev).peel(pygit2.Commit)
    except (KeyError, ValueError, pygit2.GitError):
        raise RepoError(f"unknown revision {rev!r}") from None


def is_ancestor(repo: pygit2.Repository, ancestor: pygit2.Commit, descendant: pygit2.Commit) -> bool:
    return ancestor.id == descendant.id or repo.descendant_of(descendant.id, ancestor.id)


def author_email(commit: pygit2.Commit) -> str:
    return commit.author.email
