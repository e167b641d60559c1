"""The only module that talks to pygit2: snapshots of HEAD, index and work tree, dirty state, commits, push."""
from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import cast

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


def tree_blob(tree: pygit2.Tree, path: str) -> pygit2.Blob | None:
    try:
        entry = tree[path]
    except KeyError:
        return None
    return cast(pygit2.Blob, entry) if entry.type == pygit2.enums.ObjectType.BLOB else None


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
        return cast(pygit2.Blob, repo[oid]).data       # index entries of memory files are blobs

    return Snapshot("index", load, oids)


_WORKTREE_CHANGED = (FileStatus.WT_MODIFIED | FileStatus.WT_DELETED | FileStatus.WT_TYPECHANGE
                     | FileStatus.WT_RENAMED | FileStatus.WT_NEW | FileStatus.CONFLICTED)


def staged_snapshot(repo: pygit2.Repository, paths: Iterable[str]) -> Snapshot:
    """The index, read from the work-tree file whenever git's status says it holds the staged bytes.

    libgit2 decides that from the index's stat data (hashing only racy entries), the way `git status`
    does, so a 75 MB LOG is read from disk instead of inflated from the object store.
    """
    index = index_snapshot(repo, paths)
    workdir = root(repo) if repo.workdir is not None else None

    def load(path: str) -> bytes | None:
        if index.oid(path) is None:
            return None
        if workdir is not None:
            try:
                if not repo.status_file(path) & _WORKTREE_CHANGED:
                    return (workdir / path).read_bytes()
            except (KeyError, OSError, pygit2.GitError):
                pass
        return index.read(path)

    return Snapshot("index", load, {path: index.oid(path) for path in paths})


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


def write_tree_with(repo: pygit2.Repository, base: pygit2.Commit | None, files: dict[str, bytes | None],
                    modes: dict[str, int] | None = None) -> tuple[pygit2.Oid, dict[str, pygit2.Oid]]:
    """A tree equal to `base`'s with `files` replaced (None deletes), built without touching the repo's index.

    `modes` gives a path's git file mode (executable, symlink); the default is a plain file.
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
        mode = pygit2.enums.FileMode((modes or {}).get(path, pygit2.enums.FileMode.BLOB))
        index.add(pygit2.IndexEntry(path, blobs[path], mode))
    return index.write_tree(repo), blobs


def commit_files(repo: pygit2.Repository, files: dict[str, bytes | None], message: str, *,
                 author: Identity, committer: Identity | None = None, ref: str = "HEAD",
                 modes: dict[str, int] | None = None) -> pygit2.Oid:
    """Commit `files` (None deletes) on top of HEAD, to `ref`: HEAD, or a new branch ref.

    Moving HEAD also resets the repo's index to the new tree; a commit to a side branch (salvage)
    leaves the index alone.
    """
    base = head_commit(repo)
    tree, _ = write_tree_with(repo, base, files, modes)
    parents = [base.id] if base is not None else []
    oid = repo.create_commit(None, author.signature(), (committer or author).signature(), message, tree, parents)
    if ref != "HEAD":
        repo.create_reference(ref, oid)
        return oid
    if repo.head_is_unborn:
        target = repo.references["HEAD"].target
        assert isinstance(target, str)      # an unborn HEAD is symbolic: it names the branch to create
        repo.create_reference(target, oid)
    else:
        repo.head.set_target(oid)
    live = repo.index
    live.read_tree(tree)
    live.write()
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


def merge_base(repo: pygit2.Repository, a: str, b: str) -> str | None:
    """The merge base of two revisions as a hex id; None when they share no history."""
    base = repo.merge_base(resolve(repo, a).id, resolve(repo, b).id)
    return str(base) if base is not None else None


def is_ancestor(repo: pygit2.Repository, ancestor: pygit2.Commit, descendant: pygit2.Commit) -> bool:
    return ancestor.id == descendant.id or repo.descendant_of(descendant.id, ancestor.id)


def author_email(commit: pygit2.Commit) -> str:
    return commit.author.email


# -- cycle runner and sync: branches, salvage, restore, rebase, fetch/push ---------------------------------------
# Fetch and push go through the `git` executable on purpose: it honours the user's credential helpers, SSH
# agent and the `http.extraheader` that actions/checkout sets, none of which libgit2 reads.

def git_dir(repo: pygit2.Repository) -> Path:
    return Path(repo.path)


def worktree_files(repo: pygit2.Repository, paths: Iterable[str]) -> dict[str, tuple[bytes, int] | None]:
    """Work-tree contents and git file mode of `paths`; None for a deleted path."""
    workdir = root(repo)
    found: dict[str, tuple[bytes, int] | None] = {}
    for rel in paths:
        full = workdir / rel
        if full.is_symlink():
            found[rel] = (os.readlink(full).encode(), int(pygit2.enums.FileMode.LINK))
        elif full.is_file():
            executable = os.access(full, os.X_OK)
            found[rel] = (full.read_bytes(), int(pygit2.enums.FileMode.BLOB_EXECUTABLE if executable
                                                  else pygit2.enums.FileMode.BLOB))
        else:
            found[rel] = None
    return found


def commit_worktree(repo: pygit2.Repository, paths: Iterable[str], message: str, *, author: Identity,
                    committer: Identity | None = None, ref: str = "HEAD") -> pygit2.Oid:
    """Commit the work-tree state of `paths` (modes kept) on top of HEAD, as `commit_files` does."""
    found = worktree_files(repo, sorted(set(paths)))
    files = {rel: item[0] if item is not None else None for rel, item in found.items()}
    modes = {rel: item[1] for rel, item in found.items() if item is not None}
    return commit_files(repo, files, message, author=author, committer=committer, ref=ref, modes=modes)


def branch_exists(repo: pygit2.Repository, name: str) -> bool:
    return f"refs/heads/{name}" in repo.references


def create_branch(repo: pygit2.Repository, name: str, target: str | pygit2.Oid) -> None:
    oid = target if isinstance(target, pygit2.Oid) else resolve(repo, target).id
    repo.create_reference(f"refs/heads/{name}", oid)


def restore_worktree(repo: pygit2.Repository) -> list[str]:
    """Make the work tree and index equal to HEAD: tracked files reset, untracked non-ignored files removed.

    Returns the removed untracked paths. Ignored files are left alone. Call only after saving the changes.
    """
    head = head_commit(repo)
    if head is None:
        raise RepoError("cannot restore a work tree with no commits")
    removed = [path for path, what in dirty_files(repo) if what == "untracked"]
    repo.reset(head.id, pygit2.enums.ResetMode.HARD)
    workdir = root(repo)
    for rel in removed:
        full = workdir / rel
        if full.is_file() or full.is_symlink():
            full.unlink()
        parent = full.parent
        while parent != workdir and parent.is_dir() and not any(parent.iterdir()):
            parent.rmdir()
            parent = parent.parent
    return removed


def reset_hard(repo: pygit2.Repository, target: str | pygit2.Oid) -> None:
    """Move the current branch, index and work tree to `target` (the work tree must hold nothing unsaved)."""
    oid = target if isinstance(target, pygit2.Oid) else resolve(repo, target).id
    repo.reset(oid, pygit2.enums.ResetMode.HARD)


def switch_head(repo: pygit2.Repository, branch: str) -> None:
    """Point HEAD at `branch` without touching the index or the work tree (like `git symbolic-ref`)."""
    repo.set_head(f"refs/heads/{branch}")


def reset_mixed(repo: pygit2.Repository, target: str | pygit2.Oid) -> None:
    """Move the current branch and the index to `target`, keeping the work tree as it is."""
    oid = target if isinstance(target, pygit2.Oid) else resolve(repo, target).id
    repo.reset(oid, pygit2.enums.ResetMode.MIXED)


@dataclass(frozen=True)
class RebaseResult:
    head: str | None            # the new tip when it replayed cleanly
    conflicts: tuple[str, ...]  # paths that conflicted (then nothing was changed)
    replayed: int = 0


Resolver = Callable[[str, bytes | None, bytes | None, bytes | None], bytes | None]


def rebase_onto(repo: pygit2.Repository, upstream: str, resolver: Resolver | None = None) -> RebaseResult:
    """Replay the current branch's commits that `upstream` lacks onto it, cherry-pick style, in memory.

    On success the branch, index and work tree move to the new tip. A conflicting path is offered to
    `resolver(path, base, upstream side, our side)`, which returns merged bytes or None. On a conflict
    left unresolved nothing is touched and the conflicting paths are returned. Author and committer of
    each replayed commit are kept.
    """
    head = head_commit(repo)
    base = resolve(repo, upstream)
    if head is None:
        raise RepoError("nothing to rebase: no commits yet")
    if is_ancestor(repo, head, base):
        if head.id != base.id:
            reset_hard(repo, base.id)
        return RebaseResult(str(base.id), ())
    if is_ancestor(repo, base, head):
        return RebaseResult(str(head.id), ())
    walker = repo.walk(head.id, pygit2.enums.SortMode.TOPOLOGICAL | pygit2.enums.SortMode.REVERSE)
    walker.hide(base.id)
    tip = base
    count = 0
    for commit in walker:
        if len(commit.parents) != 1:
            raise RepoError(f"cannot replay merge commit {str(commit.id)[:10]}; merge by hand")
        merged = repo.merge_trees(commit.parents[0].tree, tip.tree, commit.tree)
        if merged.conflicts is not None and not _resolve_conflicts(repo, merged, resolver):
            paths = sorted({(entry or ours or theirs).path for entry, ours, theirs in merged.conflicts})
            return RebaseResult(None, tuple(paths), count)
        tree = merged.write_tree(repo)
        oid = repo.create_commit(None, commit.author, commit.committer, commit.message, tree, [tip.id])
        tip = repo[oid].peel(pygit2.Commit)
        count += 1
    reset_hard(repo, tip.id)
    return RebaseResult(str(tip.id), (), count)


def _resolve_conflicts(repo: pygit2.Repository, merged: pygit2.Index, resolver: Resolver | None) -> bool:
    """Resolve every conflict in `merged` with `resolver`; False (index untouched) if any one is declined."""
    if resolver is None:
        return False
    resolved: list[tuple[str, bytes, pygit2.enums.FileMode]] = []
    for base, ours, theirs in merged.conflicts:
        path = (base or ours or theirs).path
        data = resolver(path, *(cast(pygit2.Blob, repo[e.id]).data if e is not None else None
                                for e in (base, ours, theirs)))
        if data is None:
            return False
        resolved.append((path, data, (ours or theirs or base).mode))
    for path, data, mode in resolved:
        del merged.conflicts[path]
        merged.add(pygit2.IndexEntry(path, repo.create_blob(data), mode))
    return True


def upstream_of(repo: pygit2.Repository, branch: str) -> tuple[str, str]:
    """(remote, remote branch) from branch.<name>.remote/merge, defaulting to origin and the same name."""
    config = repo.config
    try:
        remote = str(config[f"branch.{branch}.remote"])
    except KeyError:
        remote = "origin"
    try:
        merge = str(config[f"branch.{branch}.merge"]).removeprefix("refs/heads/")
    except KeyError:
        merge = branch
    return remote, merge


def remote_names(repo: pygit2.Repository) -> list[str]:
    return [name for name in repo.remotes.names() if name is not None]


def remote_branch_oid(repo: pygit2.Repository, remote: str, branch: str) -> str | None:
    ref = repo.references.get(f"refs/remotes/{remote}/{branch}")
    return str(ref.peel(pygit2.Commit).id) if ref is not None else None


class GitCommandError(RepoError):
    """A `git` subprocess failed; `output` holds what it printed (already in the message, scrubbed by callers)."""

    def __init__(self, message: str, output: str = "", rejected: bool = False) -> None:
        super().__init__(message)
        self.output = output
        self.rejected = rejected


def run_git(repo: pygit2.Repository, *args: str, timeout: float = 300) -> str:
    import subprocess

    env = {**os.environ, "GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C"}
    try:
        done = subprocess.run(["git", *args], cwd=root(repo), env=env, capture_output=True, text=True,
                              timeout=timeout)
    except FileNotFoundError:
        raise GitCommandError("the `git` executable is needed to fetch and push; install git") from None
    except subprocess.TimeoutExpired:
        raise GitCommandError(f"`git {args[0]}` timed out after {timeout:.0f}s") from None
    output = (done.stdout + done.stderr).strip()
    if done.returncode != 0:
        rejected = "[rejected]" in output or "non-fast-forward" in output or "fetch first" in output
        raise GitCommandError(f"`git {' '.join(args[:1])}` failed: {output[-600:]}", output, rejected)
    return output


def fetch(repo: pygit2.Repository, remote: str, branch: str) -> str | None:
    """Fetch one branch into refs/remotes/<remote>/<branch>; its tip, or None when the remote lacks it."""
    try:
        run_git(repo, "fetch", "--quiet", "--no-tags", remote,
                f"+refs/heads/{branch}:refs/remotes/{remote}/{branch}")
    except GitCommandError as err:
        if "couldn't find remote ref" in err.output:
            return None
        raise
    return remote_branch_oid(repo, remote, branch)


def push(repo: pygit2.Repository, remote: str, source: str, branch: str) -> None:
    """Push `source` (a rev) to refs/heads/<branch> on `remote`, never forced. Rejections set `.rejected`."""
    oid = resolve(repo, source).id
    run_git(repo, "push", "--quiet", "--porcelain", remote, f"{oid}:refs/heads/{branch}")


# -- history reading for recall (added for gitmem.recall) ----------------------------------------

@dataclass(frozen=True)
class CommitInfo:
    """One commit as recall indexes it: plain types only, so callers never touch pygit2."""

    id: str
    time: int                   # seconds since the epoch
    offset: int                 # the committer's UTC offset in minutes
    author: str
    message: str
    touched: frozenset[str]     # which of the asked-for paths differ from the first parent


def head_id(repo: pygit2.Repository) -> str | None:
    """HEAD's commit id as hex; None for an unborn HEAD."""
    commit = head_commit(repo)
    return str(commit.id) if commit is not None else None


def is_ancestor_id(repo: pygit2.Repository, ancestor: str, descendant: str) -> bool:
    """True when `ancestor` is `descendant` or reachable from it; False when either is unknown (gc'd, rewritten)."""
    try:
        old = repo.get(ancestor)
        new = repo.get(descendant)
        if old is None or new is None:
            return False
        return old.id == new.id or repo.descendant_of(new.id, old.id)
    except (ValueError, KeyError, pygit2.GitError):
        return False


def _blob_ids(tree: pygit2.Tree, paths: Iterable[str]) -> dict[str, str | None]:
    found: dict[str, str | None] = {}
    for path in paths:
        blob = tree_blob(tree, path)
        found[path] = str(blob.id) if blob is not None else None
    return found


def _commit_info(commit: pygit2.Commit, wanted: tuple[str, ...]) -> CommitInfo:
    parent = commit.parents[0] if commit.parents else None
    if not wanted or (parent is not None and parent.tree_id == commit.tree_id):
        touched: frozenset[str] = frozenset()
    else:
        mine = _blob_ids(commit.tree, wanted)
        theirs = _blob_ids(parent.tree, wanted) if parent is not None else {}
        touched = frozenset(p for p in wanted if mine[p] != theirs.get(p))
    return CommitInfo(str(commit.id), commit.commit_time, commit.commit_time_offset, commit.author.name,
                      commit.message, touched)


LINEAR_LIMIT = 2000


def commits_since(repo: pygit2.Repository, start: str | None, paths: Iterable[str] = ()) -> list[CommitInfo] | None:
    """Commits reachable from HEAD and not from `start` (all when None), oldest first; None when `start`
    is not an ancestor of HEAD (history was rewritten, or `start` is gone).

    `touched` names which of `paths` differ from the first parent, by blob id: a tree lookup per path,
    never a full diff. A linear stretch since `start` is followed parent by parent, so the cost follows
    the number of new commits, not the length of history; merges fall back to a revision walk.
    """
    wanted = tuple(paths)
    head = head_commit(repo)
    if head is None:
        return [] if start is None else None
    if start is not None:
        chain: list[pygit2.Commit] = []
        commit = head
        for _ in range(LINEAR_LIMIT):
            if str(commit.id) == start:
                return [_commit_info(c, wanted) for c in reversed(chain)]
            if len(commit.parents) != 1:
                break
            chain.append(commit)
            commit = commit.parents[0]
        if not is_ancestor_id(repo, start, str(head.id)):
            return None
    walker = repo.walk(head.id, pygit2.enums.SortMode.TOPOLOGICAL | pygit2.enums.SortMode.REVERSE)
    if start is not None:
        walker.hide(pygit2.Oid(hex=start))
    return [_commit_info(commit, wanted) for commit in walker]


# -- cheap blob facts for big memory files (added for gitmem.snapread) ---------------------------

def blob_size(repo: pygit2.Repository, oid: str) -> int | None:
    """A blob's size from its header, without inflating it; None when it is missing."""
    try:
        return repo.odb.read_header(oid)[1]
    except (KeyError, ValueError, pygit2.GitError):
        return None
