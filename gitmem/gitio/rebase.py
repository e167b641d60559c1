"""Replaying local commits onto an upstream, in memory, with a hook for memory-aware merges."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol, cast

import pygit2

from gitmem.gitio.commits import reset_hard
from gitmem.gitio.history import _resolve
from gitmem.gitio.repository import Identity, Repo, RepoError

# (path, base bytes, upstream bytes, our bytes) -> merged bytes, or None to decline.
Resolver = Callable[[str, bytes | None, bytes | None, bytes | None], bytes | None]


class Renumbering(Protocol):
    """How the commits being replayed change before they are merged: their own files (`paths`) and messages.
    Applied alike to each replayed commit and to its parent, so the change each one makes is the same."""

    @property
    def paths(self) -> tuple[str, ...]: ...

    def file(self, path: str, data: bytes) -> bytes: ...

    def message(self, text: str) -> str: ...

    def describe(self) -> str: ...


# (read(commit, path), merge base, upstream tip, our tip) -> the renumbering the replay needs, or None.
Renumberer = Callable[[Callable[[str, str], bytes | None], str, str, str], Renumbering | None]


@dataclass(frozen=True)
class RebaseResult:
    head: str | None            # the new tip when it replayed cleanly
    conflicts: tuple[str, ...]  # paths that conflicted (then nothing was changed)
    replayed: int = 0
    renumbering: Renumbering | None = None     # what `renumber` changed in the replayed commits, if anything


def rebase_onto(repo: Repo, upstream: str, resolver: Resolver | None = None,
                renumber: Renumberer | None = None) -> RebaseResult:
    """Replay the current branch's commits that `upstream` lacks onto it, cherry-pick style, in memory.

    On success the branch, index and work tree move to the new tip. A conflicting path is offered to
    `resolver(path, base, upstream side, our side)`, which returns merged bytes or None. On a conflict
    left unresolved nothing is touched and the conflicting paths are returned. Author and committer of
    each replayed commit are kept. `renumber` may change the replayed commits first (each one and its parent
    alike): memory's cycle numbers are positions in the merged history (gitmem.publish.renumber).
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
    tip, count = replay(repo, str(head.id), str(base.id), resolver, renumber)
    if isinstance(tip, tuple):
        return RebaseResult(None, tip, count)
    reset_hard(repo, tip.head)
    return RebaseResult(tip.head, (), count, tip.renumbering)


@dataclass(frozen=True)
class Replayed:
    head: str
    renumbering: Renumbering | None


def replay(repo: Repo, ours: str, onto: str, resolver: Resolver | None = None,
           renumber: Renumberer | None = None) -> tuple[Replayed | tuple[str, ...], int]:
    """Replay the commits of `ours` that `onto` lacks onto it, in memory, touching no branch, index or work
    tree: (the new tip, how many were replayed), or (the paths that conflicted, how many replayed before)."""
    raw = repo.raw
    head, base = _resolve(repo, ours), _resolve(repo, onto)
    walker = raw.walk(head.id, pygit2.enums.SortMode.TOPOLOGICAL | pygit2.enums.SortMode.REVERSE)
    walker.hide(base.id)
    fork = raw.merge_base(head.id, base.id)
    plan = renumber(lambda rev, path: _read(raw, rev, path), str(fork), str(base.id), str(head.id)) \
        if renumber is not None and fork is not None else None
    tip = base
    count = 0
    for commit in walker:
        if len(commit.parents) != 1:
            raise RepoError(f"cannot replay merge commit {str(commit.id)[:10]}; merge by hand")
        parent_tree, our_tree, message = commit.parents[0].tree, commit.tree, commit.message
        if plan is not None:
            parent_tree, our_tree = _renumbered(raw, parent_tree, plan), _renumbered(raw, our_tree, plan)
            message = plan.message(message)
        merged = raw.merge_trees(parent_tree, tip.tree, our_tree)
        if merged.conflicts is not None and not _resolve_conflicts(raw, merged, resolver):
            paths = sorted({(entry or ours or theirs).path for entry, ours, theirs in merged.conflicts})
            return tuple(paths), count
        tree = merged.write_tree(raw)
        oid = raw.create_commit(None, commit.author, commit.committer, message, tree, [tip.id])
        tip = raw[oid].peel(pygit2.Commit)
        count += 1
    return Replayed(str(tip.id), plan), count


def _read(raw: pygit2.Repository, rev: str, path: str) -> bytes | None:
    try:
        entry = raw.revparse_single(rev).peel(pygit2.Commit).tree[path]
    except KeyError:
        return None
    return bytes(cast(pygit2.Blob, raw[entry.id]).data) if entry.type_str == "blob" else None


def _renumbered(raw: pygit2.Repository, tree: pygit2.Tree, plan: Renumbering) -> pygit2.Tree:
    """`tree` with each of `plan.paths` it holds as a file changed by `plan`; the same tree when none changes."""
    index: pygit2.Index | None = None
    for path in plan.paths:
        try:
            entry = tree[path]
        except KeyError:
            continue
        if entry.type_str != "blob":
            continue
        data = bytes(cast(pygit2.Blob, raw[entry.id]).data)
        changed = plan.file(path, data)
        if changed == data:
            continue
        if index is None:
            index = pygit2.Index()
            index.read_tree(tree)
        index.add(pygit2.IndexEntry(path, raw.create_blob(changed), entry.filemode))
    return tree if index is None else cast(pygit2.Tree, raw[index.write_tree(raw)])


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


@dataclass(frozen=True)
class Merged:
    commit: str | None                  # the merge commit, when every path merged
    conflicts: tuple[str, ...]          # the paths that did not (then nothing was made)
    renumbering: Renumbering | None = None


def merge_into(repo: Repo, ours: str, theirs: str, message: str, author: Identity,
               resolver: Resolver | None = None, renumber: Renumberer | None = None) -> Merged:
    """A merge commit of `theirs` into `ours` (parents in that order), made in memory: no branch, index or
    work tree moves. `renumber` changes `theirs`' side first (its cycles go after ours'); a path whose line
    merge conflicts is offered to `resolver(path, base, ours, theirs)`."""
    raw = repo.raw
    mine, other = _resolve(repo, ours), _resolve(repo, theirs)
    fork = raw.merge_base(mine.id, other.id)
    if fork is None:
        raise RepoError(f"{theirs} shares no history with {ours}; nothing to merge by memory rules")
    plan = renumber(lambda rev, path: _read(raw, rev, path), str(fork), str(mine.id), str(other.id)) \
        if renumber is not None else None
    base_tree = raw[fork].peel(pygit2.Commit).tree
    their_tree = _renumbered(raw, other.tree, plan) if plan is not None else other.tree
    merged = raw.merge_trees(base_tree, mine.tree, their_tree)
    if merged.conflicts is not None and not _resolve_conflicts(raw, merged, resolver):
        return Merged(None, tuple(sorted({(e or o or t).path for e, o, t in merged.conflicts})), plan)
    tree = merged.write_tree(raw)
    who = pygit2.Signature(author.name, author.email)
    oid = raw.create_commit(None, who, who, message, tree, [mine.id, other.id])
    return Merged(str(oid), (), plan)
