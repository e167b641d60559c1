"""Writing history: commits built without touching the user's index, branches, resets, restoring a tree."""
from __future__ import annotations

import os
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pygit2
from pygit2.enums import FileStatus

from gitmem.confined.files import EXECUTABLE, GITLINK, LINK, REGULAR, stat_of_read
from gitmem.gitio.history import _resolve
from gitmem.gitio.repository import Identity, Repo, RepoError, dirty_files, root, state_dir
from gitmem.gitio.snapshots import stored_bytes


def _signature(identity: Identity) -> pygit2.Signature:
    return pygit2.Signature(identity.name, identity.email)


def _oid(repo: Repo, target: str) -> pygit2.Oid:
    return _resolve(repo, target).id


def write_tree_with(repo: Repo, base: str | None, files: dict[str, bytes | None],
                    modes: dict[str, int] | None = None) -> str:
    """A tree equal to commit `base`'s with `files` replaced (None deletes), built without touching the
    repo's index. `modes` gives a path's git file mode (executable, symlink); the default is a plain file.
    Returns the tree id."""
    return str(_tree_index(repo, base, files, modes).write_tree(repo.raw))


def _tree_index(repo: Repo, base: str | None, files: dict[str, bytes | None],
                modes: dict[str, int] | None) -> pygit2.Index:
    """An in-memory index of `base`'s tree with `files` written as blobs (each hashed and compressed once, by
    libgit2: its SHA-1 detects collision attacks, which matters for bytes an agent wrote) and put in."""
    raw = repo.raw
    index = pygit2.Index()
    if base is not None:
        index.read_tree(raw[base].peel(pygit2.Commit).tree)
    for path, data in files.items():
        if data is None:
            if path in index:
                index.remove(path)
            continue
        mode = pygit2.enums.FileMode((modes or {}).get(path, REGULAR))
        index.add(pygit2.IndexEntry(path, raw.create_blob(data), mode))
    return index


class _StatEntry(pygit2.IndexEntry):
    """An index entry with the stat data of the work-tree file whose bytes its blob holds, filled in as libgit2
    fills it from a stat (`git_index_entry__init_from_stat`): pygit2's entries carry none, and an entry without
    it is hashed whole again by the next status or refresh."""

    def __init__(self, path: str, object_id: pygit2.Oid, mode: pygit2.enums.FileMode, stat: os.stat_result) -> None:
        super().__init__(path, object_id, mode)
        self.stat = stat

    def _to_c(self) -> Any:
        centry, path = super()._to_c()      # pygit2's own conversion, then the stat fields
        stat = self.stat
        centry.ctime.seconds, centry.ctime.nanoseconds = _index_time(stat.st_ctime_ns)
        centry.mtime.seconds, centry.mtime.nanoseconds = _index_time(stat.st_mtime_ns)
        centry.dev, centry.ino = stat.st_rdev & _U32, stat.st_ino & _U32
        centry.uid, centry.gid, centry.file_size = stat.st_uid & _U32, stat.st_gid & _U32, stat.st_size & _U32
        return centry, path


_U32 = 0xFFFFFFFF


def _index_time(nanoseconds: int) -> tuple[int, int]:
    """Seconds (truncated to 32 bits, signed, as git's index keeps them) and nanoseconds."""
    seconds, rest = divmod(nanoseconds, 1_000_000_000)
    seconds &= _U32
    return (seconds - (1 << 32) if seconds >= 1 << 31 else seconds), rest


def commit_files(repo: Repo, files: dict[str, bytes | None], message: str, *, author: Identity,
                 committer: Identity | None = None, ref: str = "HEAD", modes: dict[str, int] | None = None,
                 stats: dict[str, os.stat_result] | None = None, keep_staged: bool = False) -> str:
    """Commit `files` (None deletes) on top of HEAD, to `ref`: HEAD, or a new branch ref. Returns its id.

    Moving HEAD also resets the repo's index to the new tree; a commit to a side branch (salvage)
    leaves the index alone. With `keep_staged` (a commit made in a checkout where a human may be at work: the
    close) only the committed paths take the new tree's entries, as `git commit -- PATHS` does: what else is
    staged stays staged, and a merge in progress keeps its conflicts. `stats` gives, for a file whose bytes were
    read from the work tree, the stat of the file taken as they were read (`nofollow.files.stat_of_read`): its
    index entry gets it, so no one hashes it again.
    """
    raw = repo.raw
    base = None if raw.head_is_unborn else str(raw.head.peel(pygit2.Commit).id)
    built = _tree_index(repo, base, files, modes)
    tree = built.write_tree(raw)
    parents = [pygit2.Oid(hex=base)] if base is not None else []
    oid = raw.create_commit(None, _signature(author), _signature(committer or author), message, tree, parents)
    if ref != "HEAD":
        raw.create_reference(ref, oid)
        return str(oid)
    if raw.head_is_unborn:
        target = raw.references["HEAD"].target
        assert isinstance(target, str)      # an unborn HEAD is symbolic: it names the branch to create
        raw.create_reference(target, oid)
    else:
        raw.head.set_target(oid)
    live = raw.index
    if keep_staged:
        live.read(force=True)
        for path, data in files.items():
            if data is None:
                if path in live:
                    live.remove(path)
            else:
                entry = built[path]
                live.add(pygit2.IndexEntry(path, entry.id, entry.mode))
    else:
        live.read_tree(tree)
    live.write()
    known = {path: stat for path, stat in (stats or {}).items() if files.get(path) is not None}
    if known:
        for path, stat in known.items():
            entry = built[path]
            live.add(_StatEntry(path, entry.id, entry.mode, stat))
        # Written after the first write: an entry newer than the index file would be "racily clean", and
        # libgit2's write would hash its file again to tell (git's racy-git rule).
        live.write()
    _refresh_stat_cache(repo)
    return str(oid)


def _refresh_stat_cache(repo: Repo) -> None:
    """Give the index the work tree's stat data for every entry whose file holds its bytes, as `git
    update-index --refresh` does. `read_tree` keeps it only for entries it did not change, so the files just
    committed (a 75 MB LOG, a 10 MB NOW) would otherwise be hashed whole by every later status, in this
    process and the next, until git itself refreshed the index. The stat cache is all that changes: an entry's
    blob id, and so what is staged, never does; a file that differs from its entry stays unrefreshed."""
    if not repo.raw.is_bare:
        repo.raw.diff(flags=pygit2.enums.DiffOption.UPDATE_INDEX)


def worktree_files(repo: Repo, paths: Iterable[str]) -> dict[str, tuple[bytes, int] | None]:
    """Work-tree contents and git file mode of `paths`; None for a deleted path."""
    return {rel: (item[0], item[1]) if item is not None else None
            for rel, item in _worktree_reads(repo, paths).items()}


def _worktree_reads(repo: Repo, paths: Iterable[str]) -> dict[str, tuple[bytes, int, os.stat_result | None] | None]:
    """`worktree_files` with, for a regular file, its stat as its bytes were read (`nofollow.files.stat_of_read`)."""
    workdir = root(repo)
    found: dict[str, tuple[bytes, int, os.stat_result | None] | None] = {}
    for rel in paths:
        full = workdir / rel
        if full.is_dir() and not full.is_symlink() and _is_submodule_at_head(repo, rel):
            # A submodule whose checkout moved: it stays as HEAD pins it, never read as deleted (a directory is
            # no file), nor moved to a commit that only this checkout holds.
            continue
        if full.is_symlink():
            found[rel] = (os.fsencode(os.readlink(full)), LINK, None)     # a target is bytes, UTF-8 or not
        elif full.is_file():
            with open(full, "rb") as handle:
                data, stat = stat_of_read(handle)
            found[rel] = (stored_bytes(repo, rel, data), EXECUTABLE if os.access(full, os.X_OK) else REGULAR, stat)
        else:
            found[rel] = None
    return found




def _is_submodule_at_head(repo: Repo, rel: str) -> bool:
    raw = repo.raw
    return not raw.head_is_unborn and _mode_in(raw.head.peel(pygit2.Commit).tree, rel) == GITLINK


def commit_worktree(repo: Repo, paths: Iterable[str], message: str, *, author: Identity,
                    committer: Identity | None = None, ref: str = "HEAD") -> str:
    """Commit the work-tree state of `paths` (modes kept) on top of HEAD, as `commit_files` does."""
    found = _worktree_reads(repo, sorted(set(paths)))
    files = {rel: item[0] if item is not None else None for rel, item in found.items()}
    modes = {rel: item[1] for rel, item in found.items() if item is not None}
    stats = {rel: item[2] for rel, item in found.items() if item is not None and item[2] is not None}
    return commit_files(repo, files, message, author=author, committer=committer, ref=ref, modes=modes,
                        stats=stats)


def branch_exists(repo: Repo, name: str) -> bool:
    return f"refs/heads/{name}" in repo.raw.references


def create_branch(repo: Repo, name: str, target: str) -> None:
    repo.raw.create_reference(f"refs/heads/{name}", _oid(repo, target))


def restore_worktree(repo: Repo, only: Iterable[str] | None = None) -> list[str]:
    """Make the work tree and index equal to HEAD: tracked files reset, untracked non-ignored files removed
    (only those in `only`, when given: a file the ignore rules hid when a cycle started is the human's).

    Returns the removed untracked paths. Ignored files are left alone. Call only after saving the changes.
    A link, a FIFO or a directory left where HEAD has a file is taken away first (a directory is moved into
    `.git/gitmem/displaced/`, never deleted): libgit2's reset leaves such a type change in place.
    """
    raw = repo.raw
    if raw.head_is_unborn:
        raise RepoError("cannot restore a work tree with no commits")
    allowed = set(only) if only is not None else None
    removed = [path for path, what in dirty_files(repo)
               if what == "untracked" and (allowed is None or path in allowed)]
    workdir = root(repo)
    for rel in removed:
        full = workdir / rel
        if full.is_file() or full.is_symlink():
            full.unlink()
        parent = full.parent
        while parent != workdir and parent.is_dir() and not any(parent.iterdir()):
            parent.rmdir()
            parent = parent.parent
    for rel in _displaced(repo, workdir):
        _take_away(repo, workdir, rel)
    raw.reset(raw.head.peel(pygit2.Commit).id, pygit2.enums.ResetMode.HARD)
    return removed


def _displaced(repo: Repo, workdir: Path) -> list[str]:
    """Tracked paths of HEAD that the work tree holds as something else than a regular file."""
    tree = repo.raw.head.peel(pygit2.Commit).tree
    found = []
    for rel, flags in repo.raw.status(untracked_files="no").items():
        if not flags & (FileStatus.WT_TYPECHANGE | FileStatus.WT_DELETED | FileStatus.WT_MODIFIED):
            continue
        full = workdir / rel
        if (full.is_symlink() or os.path.lexists(full) and not full.is_file()) and _mode_in(tree, rel) not in (
                None, GITLINK):      # a submodule's folder is where its submodule belongs
            found.append(rel)
    return found


def _mode_in(tree: pygit2.Tree, rel: str) -> int | None:
    """The git mode of `rel` in `tree`; None when the tree does not hold it."""
    try:
        return int(tree[rel].filemode)
    except (KeyError, ValueError):
        return None


def _take_away(repo: Repo, workdir: Path, rel: str) -> None:
    full = workdir / rel
    if full.is_symlink() or not full.is_dir():
        full.unlink()
        return
    aside = state_dir(repo) / "displaced" / f"{int(time.time())}-{os.getpid()}" / rel
    aside.parent.mkdir(parents=True, exist_ok=True)
    os.replace(full, aside)


def reset_hard(repo: Repo, target: str) -> None:
    """Move the current branch, index and work tree to `target` (the work tree must hold nothing unsaved)."""
    repo.raw.reset(_oid(repo, target), pygit2.enums.ResetMode.HARD)


class BranchNotMoved(RepoError):
    """`move_branch` left the branch where it was: it moved meanwhile, or the checkout holds a human's change the
    move would overwrite. Nothing was changed."""


class _InTheWay(pygit2.CheckoutCallbacks):
    """The paths a checkout would have to overwrite: a change not committed, a file not tracked."""

    def __init__(self) -> None:
        super().__init__()
        self.paths: list[str] = []

    def checkout_notify_flags(self) -> pygit2.enums.CheckoutNotify:
        return pygit2.enums.CheckoutNotify.CONFLICT

    def checkout_notify(self, why: Any, path: str, baseline: Any, target: Any, workdir: Any) -> None:
        self.paths.append(path)


def move_branch(repo: Repo, branch: str, target: str, *, expected: str) -> bool:
    """Move refs/heads/<branch> from `expected` to `target`, compare-and-swap: the ref is locked (as `git update-ref
    B NEW OLD` locks it) while it is checked and moved, and a branch that holds anything but `expected` is left as
    it is (BranchNotMoved). The index and work tree follow only when HEAD is on that branch at that moment, and
    as `git switch` carries a checkout, not as `reset --hard` does: what the human changed and did not commit (an
    edit, a staged file, an untracked file) stays as it is, and where the move would have to overwrite it, nothing
    moves (BranchNotMoved, naming the paths); an ignored file in the way is overwritten, as `git switch` does. A
    push runs outside the cycle's lock, so a human may be editing this checkout while it rebases. A human who
    switched to another branch meanwhile keeps their checkout, and the branch they switched to never moves. True
    when the checkout followed the branch."""
    raw = repo.raw
    ref = f"refs/heads/{branch}"
    new = _oid(repo, target)
    with raw.transaction() as moving:
        moving.lock_ref(ref)
        held = raw.references.get(ref)
        if held is None or str(held.target) != expected:
            now = str(held.target)[:10] if held is not None else "gone"
            raise BranchNotMoved(f"{branch} moved while gitmem worked on it ({expected[:10]}, now {now}); it was "
                                 "left as it is")
        head = raw.references.get("HEAD")
        follows = head is not None and head.type == pygit2.enums.ReferenceType.SYMBOLIC and head.target == ref
        if follows:
            # Before the ref moves: the checkout's baseline is the tree HEAD holds, so files the target lacks go,
            # and a file that differs from it is someone's change, kept or in the way (libgit2 looks at every
            # work tree path before it writes one, so a refusal writes nothing). libgit2's SAFE looks at the work
            # tree only: a change staged and then undone in the work tree would be overwritten, so the index is
            # looked at first, as `git switch` does.
            old_tree, new_tree = raw[expected].peel(pygit2.Tree), raw[new].peel(pygit2.Tree)
            staged = _staged_on(raw, old_tree, new_tree)
            if staged:
                raise BranchNotMoved(_overwrite_refused(branch, expected, target, staged, "staged"))
            in_the_way = _InTheWay()
            try:
                raw.checkout_tree(new_tree, strategy=pygit2.enums.CheckoutStrategy.SAFE,  # type: ignore[no-untyped-call]
                                  callbacks=in_the_way)
            except pygit2.GitError as err:
                raise BranchNotMoved(_overwrite_refused(branch, expected, target, in_the_way.paths or [str(err)],
                                                        "uncommitted")) from err
        moving.set_target(ref, new, message=f"gitmem: move {branch}")
    return follows


def _staged_on(raw: pygit2.Repository, old_tree: pygit2.Tree, new_tree: pygit2.Tree) -> list[str]:
    """The paths a move from `old_tree` to `new_tree` changes whose staged version differs from `old_tree`'s."""
    def paths(diff: pygit2.Diff) -> set[str]:
        return {path for delta in diff.deltas for path in (delta.old_file.path, delta.new_file.path)}

    index = raw.index
    index.read(False)           # what is on disk now, not what this process read before
    return sorted(paths(index.diff_to_tree(old_tree)) & paths(old_tree.diff_to_tree(new_tree)))


def _overwrite_refused(branch: str, expected: str, target: str, paths: list[str], how: str) -> str:
    named = ", ".join(paths[:5]) + (" ..." if len(paths) > 5 else "")
    return (f"{branch} was left at {expected[:10]}: moving it to {target[:10]} would overwrite what the work tree "
            f"holds {how} ({named}); commit or stash it, then run again")


def reset_mixed(repo: Repo, target: str) -> None:
    """Move the current branch and the index to `target`, keeping the work tree as it is."""
    repo.raw.reset(_oid(repo, target), pygit2.enums.ResetMode.MIXED)


def rebuild_index(repo: Repo, target: str) -> None:
    """The index built afresh from `target`'s tree (flags such as skip-worktree dropped); a corrupt index file
    is replaced, never read."""
    raw = repo.raw
    try:
        raw.reset(_oid(repo, target), pygit2.enums.ResetMode.MIXED)
    except pygit2.GitError:
        os.unlink(os.path.join(raw.path, "index"))
        raw.reset(_oid(repo, target), pygit2.enums.ResetMode.MIXED)


def switch_head(repo: Repo, branch: str) -> None:
    """Point HEAD at `branch` without touching the index or the work tree (like `git symbolic-ref`)."""
    repo.raw.set_head(f"refs/heads/{branch}")
