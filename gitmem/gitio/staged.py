"""Which files a commit of the index (or of the work tree) would change, with their modes: for checks that look
at every changed file (GM903 on every staged text file), not only at the memory files."""
from __future__ import annotations

import os
from collections.abc import Collection, Iterator
from pathlib import Path
from typing import cast

import pygit2
from pygit2.enums import DeltaStatus, FileMode

from gitmem.gitio.repository import Repo, work_tree
from gitmem.records import record

LINK, GITLINK = int(FileMode.LINK), int(FileMode.COMMIT)
_ADDED = (DeltaStatus.ADDED, DeltaStatus.MODIFIED, DeltaStatus.TYPECHANGE, DeltaStatus.RENAMED,
          DeltaStatus.COPIED)


@record(frozen=True)
class ChangedFile:
    """A file a commit would change: its path, git file mode and staged blob."""
    path: str
    mode: int            # git's file mode: 0o100644, 0o100755, 0o120000 (a symlink), 0o160000 (a submodule)
    oid: str | None      # the staged blob; None for a work-tree file

    @property
    def is_link(self) -> bool:
        return self.mode == LINK

    @property
    def is_gitlink(self) -> bool:
        return self.mode == GITLINK


def tracked_named(repo: Repo, names: Collection[str]) -> list[str]:
    """The paths the index tracks whose file name is one of `names`, as git writes them (`/`-separated), sorted:
    the files of a kind a project keeps anywhere in its tree, without walking what git ignores."""
    return sorted(entry.path for entry in repo.raw.index if entry.path.rsplit("/", 1)[-1] in names)


def staged_files(repo: Repo) -> list[ChangedFile]:
    """Index entries that differ from HEAD (added, modified, renamed, type changed); deletions are left out."""
    raw = repo.raw
    index = raw.index
    if raw.head_is_unborn:
        return [ChangedFile(entry.path, int(entry.mode), str(entry.id)) for entry in index]
    tree = raw.head.peel(pygit2.Commit).tree
    found = []
    for delta in index.diff_to_tree(tree).deltas:
        if delta.status in _ADDED:
            item = delta.new_file
            found.append(ChangedFile(item.path, int(item.mode), str(item.id)))
    return found


def committed_files(repo: Repo, commit_id: str) -> list[ChangedFile]:
    """The files a commit brings: those whose entry differs from every parent's (a merge's own content; what it
    takes from one parent as is, that parent brought); every file of a root commit. Deletions are left out."""
    raw = repo.raw
    commit = raw[commit_id].peel(pygit2.Commit)
    brought: dict[str, ChangedFile] | None = None
    parents: list[pygit2.Commit | None] = [*commit.parents] or [None]
    for parent in parents:
        diff = (parent.tree.diff_to_tree(commit.tree) if parent is not None
                else commit.tree.diff_to_tree(swap=True))
        found = {delta.new_file.path: ChangedFile(delta.new_file.path, int(delta.new_file.mode),
                                                  str(delta.new_file.id))
                 for delta in diff.deltas if delta.status in _ADDED}
        brought = found if brought is None else {path: item for path, item in brought.items() if path in found}
    return sorted((brought or {}).values(), key=lambda item: item.path)


def read_staged(repo: Repo, item: ChangedFile, limit: int | None = None) -> bytes:
    """The staged bytes of `item` (a symlink's are its target), at most `limit` of them."""
    assert item.oid is not None
    data = cast(pygit2.Blob, repo.raw[item.oid]).data
    return data if limit is None else data[:limit]


def worktree_changed(repo: Repo) -> list[ChangedFile]:
    """Work-tree files that differ from HEAD and are not ignored (modified, new, type changed)."""
    from gitmem.gitio.repository import dirty_files

    base = work_tree(repo)
    if base is None:
        return []
    found = []
    for path, _ in dirty_files(repo):
        full = base / path
        try:
            info = os.lstat(full)
        except OSError:
            continue          # deleted
        if os.path.islink(full):
            found.append(ChangedFile(path, LINK, None))
        elif os.path.isfile(full):
            found.append(ChangedFile(path, int(FileMode.BLOB_EXECUTABLE if info.st_mode & 0o111 else FileMode.BLOB),
                                     None))
    return found


def worktree_bytes(root: Path, item: ChangedFile) -> Iterator[bytes]:
    """A work-tree file's bytes in chunks (a symlink's target as one chunk), never following a link."""
    full = root / item.path
    if item.is_link:
        yield os.fsencode(os.readlink(full))
        return
    fd = os.open(full, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    with os.fdopen(fd, "rb") as handle:
        while chunk := handle.read(1 << 22):
            yield chunk
