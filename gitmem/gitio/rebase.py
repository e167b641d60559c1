"""Replaying local commits onto an upstream, in memory, with a hook for memory-aware merges."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import cast

import pygit2

from gitmem.gitio.commits import reset_hard
from gitmem.gitio.history import _resolve
from gitmem.gitio.repository import Repo, RepoError

# (path, base bytes, upstream bytes, our bytes) -> merged bytes, or None to decline.
Resolver = Callable[[str, bytes | None, bytes | None, bytes | None], bytes | None]


@dataclass(frozen=True)
class RebaseResult:
    head: str | None            # the new tip when it replayed cleanly
    conflicts: tuple[str, ...]  # paths that conflicted (then nothing was changed)
    replayed: int = 0


def rebase_onto(repo: Repo, upstream: str, resolver: Resolver | None = None) -> RebaseResult:
    """Replay the current branch's commits that `upstream` lacks onto it, cherry-pick style, in memory.

    On success the branch, index and work tree move to the new tip. A conflicting path is offered to
    `resolver(path, base, upstream side, our side)`, which returns merged bytes or None. On a conflict
    left unresolved nothing is touched and the conflicting paths are returned. Author and committer of
    each replayed commit are kept.
    """
    raw = repo.raw
    if raw.head_is_unborn:
        raise RepoError("nothing to rebase: no commits yet")
    head = raw.head.peel(pygit2.Commit)
    base = _resolve(repo, upstream)
    if head.id == base.id or raw.descendant_of(base.id, head.id):
        if head.id != base.id:
            reset_hard(repo, str(base.id))
        return RebaseResult(str(base.id), ())
    if raw.descendant_of(head.id, base.id):
        return RebaseResult(str(head.id), ())
    walker = raw.walk(head.id, pygit2.enums.SortMode.TOPOLOGICAL | pygit2.enums.SortMode.REVERSE)
    walker.hide(base.id)
    tip = base
    count = 0
    for commit in walker:
        if len(commit.parents) != 1:
            raise RepoError(f"cannot replay merge commit {str(commit.id)[:10]}; merge by hand")
        merged = raw.merge_trees(commit.parents[0].tree, tip.tree, commit.tree)
        if merged.conflicts is not None and not _resolve_conflicts(raw, merged, resolver):
            paths = sorted({(entry or ours or theirs).path for entry, ours, theirs in merged.conflicts})
            return RebaseResult(None, tuple(paths), count)
        tree = merged.write_tree(raw)
        oid = raw.create_commit(None, commit.author, commit.committer, commit.message, tree, [tip.id])
        tip = raw[oid].peel(pygit2.Commit)
        count += 1
    reset_hard(repo, str(tip.id))
    return RebaseResult(str(tip.id), (), count)


def _resolve_conflicts(raw: pygit2.Repository, merged: pygit2.Index, resolver: Resolver | None) -> bool:
    """Resolve every conflict in `merged` with `resolver`; False (index untouched) if any one is declined."""
    if resolver is None:
        return False
    resolved: list[tuple[str, bytes, pygit2.enums.FileMode]] = []
    for base, ours, theirs in merged.conflicts:
        path = (base or ours or theirs).path
        data = resolver(path, *(cast(pygit2.Blob, raw[e.id]).data if e is not None else None
                                for e in (base, ours, theirs)))
        if data is None:
            return False
        resolved.append((path, data, (ours or theirs or base).mode))
    for path, data, mode in resolved:
        del merged.conflicts[path]
        merged.add(pygit2.IndexEntry(path, raw.create_blob(data), mode))
    return True
