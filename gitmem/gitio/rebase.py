"""Replaying local commits onto an upstream, in memory, with a hook for memory-aware merges."""
from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Protocol, cast

import pygit2

from gitmem.gitio.commits import move_branch
from gitmem.gitio.history import Commit, _plain, _resolve
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


class Leaving(Protocol):
    """Commits of ours a replay leaves out although they would change the new base (a close of a day the upstream
    closed first: gitmem.publish.closed_first), and how each commit replayed after one of them is merged: its parent
    holds what was left out and the new base does not, so what it changed is taken on its own (`resolver`)."""

    @property
    def commits(self) -> frozenset[str]: ...

    @property
    def resolver(self) -> Resolver: ...

    def describe(self, *, of: str = ..., by: str = ...) -> str:
        """`of`: whose commits were left out (`made here`); `by`: who closed first (`the remote`)."""
        ...


# (read(commit, path), merge base, upstream tip, our commits oldest first) -> what the replay leaves out, or None.
Leaver = Callable[[Callable[[str, str], bytes | None], str, str, tuple[Commit, ...]], Leaving | None]


@dataclass(frozen=True)
class TreeFiles:
    """A tree as a Joining reads it: `listing` names the blobs in the Joining's folders (path -> blob id), so that
    what the trees share is found without reading it; `read` reads any file."""

    listing: Mapping[str, str]
    read: Callable[[str], bytes | None]


# What a Joining writes into a tree: path -> new bytes, or None to remove the file.
Changes = Mapping[str, bytes | None]


class Joining(Protocol):
    """Files that a side of a merge split into others since the sides parted (LOG's sealed volumes), joined again
    in every tree before the three-way merge, so that the merge, the renumbering and the resolver see one text
    (`join`), and split again in the merged tree (`split`, given the tree it lands on; None: it does not split)."""

    def join(self, tree: TreeFiles) -> Changes: ...

    def split(self, merged: TreeFiles, onto: TreeFiles) -> Changes | None: ...


class Joiner(Protocol):
    """Finds the Joining a merge needs from its fork's, upstream's and our tip's files (None: nothing to join).
    Each TreeFiles lists the blobs in `folders`."""

    @property
    def folders(self) -> tuple[str, ...]: ...

    def joining(self, fork: TreeFiles, upstream: TreeFiles, ours: TreeFiles) -> Joining | None: ...


@dataclass(frozen=True)
class RebaseResult:
    head: str | None            # the new tip when it replayed cleanly
    conflicts: tuple[str, ...]  # paths that conflicted (then nothing was changed)
    replayed: int = 0
    renumbering: Renumbering | None = None     # what `renumber` changed in the replayed commits, if anything
    dropped: tuple[str, ...] = ()       # our commits left out because the upstream already held their change
    left_out: tuple[str, ...] = ()      # our commits left out because `leaving` named them
    leaving: Leaving | None = None      # what named them, when it named any
    checkout_kept: bool = False         # the branch moved but HEAD was on another one: index and work tree untouched
    broken: tuple[str, ...] = ()        # what `judge` found wrong in the replayed commits (then nothing was moved)


def rebase_onto(repo: Repo, upstream: str, resolver: Resolver | None = None,
                renumber: Renumberer | None = None, joiner: Joiner | None = None,
                leave: Leaver | None = None, *, branch: str | None = None,
                judge: Callable[[str], tuple[str, ...]] | None = None) -> RebaseResult:
    """Replay the commits of `branch` (default: the current one) that `upstream` lacks onto it, cherry-pick style,
    in memory.

    On success the branch moves to the new tip, from the tip the replay started at and from no other (`move_branch`:
    someone who moved it meanwhile keeps what they made, RepoError); the index and work tree follow only if HEAD is
    still on the branch then (else `checkout_kept`: a human switched branches during the replay). A conflicting path
    is offered to `resolver(path, base, upstream side, our side)`, which returns merged bytes or None. On a conflict
    left unresolved nothing is touched and the conflicting paths are returned. Author and committer of
    each replayed commit are kept; one whose change the upstream already holds (it would change nothing there) is
    left out, as git's rebase drops a commit that becomes empty. `renumber` may change the replayed commits first
    (each one and its parent alike): memory's cycle numbers are positions in the merged history
    (gitmem.publish.renumber). `joiner` joins what a side split into several files before all that, and splits the
    result again (gitmem.publish.sealed). `leave` names commits of ours that are not replayed at all (a close of a
    day the upstream closed first, gitmem.publish.closed_first); the commits after them are. `judge(tip)` is shown
    the replayed tip before the branch moves; what it finds wrong (one line each) leaves the branch, index and work
    tree as they were (`broken`): a branch is never moved onto commits that are then found wanting and moved back,
    which a human's edit meanwhile could stop halfway.
    """
    raw = repo.raw
    if branch is None:
        if raw.head_is_unborn or raw.head_is_detached:
            raise RepoError("nothing to rebase: HEAD is on no branch with commits")
        branch = raw.head.shorthand
    start = raw.references.get(f"refs/heads/{branch}")
    if start is None:
        raise RepoError(f"nothing to rebase: no branch {branch}")
    head = start.peel(pygit2.Commit)
    base = _resolve(repo, upstream)
    if head.id == base.id or raw.descendant_of(base.id, head.id):
        if head.id == base.id:
            return RebaseResult(str(base.id), ())
        followed = move_branch(repo, branch, str(base.id), expected=str(head.id))
        return RebaseResult(str(base.id), (), checkout_kept=not followed)
    if raw.descendant_of(head.id, base.id):
        return RebaseResult(str(head.id), ())
    tip, count = replay(repo, str(head.id), str(base.id), resolver, renumber, joiner, leave)
    if isinstance(tip, tuple):
        return RebaseResult(None, tip, count)
    broken = judge(tip.head) if judge is not None else ()
    if broken:
        return RebaseResult(None, (), count, broken=broken)
    followed = move_branch(repo, branch, tip.head, expected=str(head.id))
    return RebaseResult(tip.head, (), count, tip.renumbering, tip.dropped, tip.left_out,
                        tip.leaving if tip.left_out else None, checkout_kept=not followed)


@dataclass(frozen=True)
class Replayed:
    head: str
    renumbering: Renumbering | None
    dropped: tuple[str, ...] = ()       # commits whose change the new base already held
    left_out: tuple[str, ...] = ()      # commits `leaving` named, in the order they were made
    leaving: Leaving | None = None


def replay(repo: Repo, ours: str, onto: str, resolver: Resolver | None = None,
           renumber: Renumberer | None = None, joiner: Joiner | None = None,
           leave: Leaver | None = None) -> tuple[Replayed | tuple[str, ...], int]:
    """Replay the commits of `ours` that `onto` lacks onto it, in memory, touching no branch, index or work
    tree: (the new tip, how many were replayed), or (the paths that conflicted, how many replayed before). A
    commit that would change nothing on the new base is not made: two writers that made the same change (two
    closes of one day in the same minute) would otherwise publish an empty commit that claims the change. Nor is
    a commit `leave` names; each commit after one it named is merged with its `resolver`."""
    raw = repo.raw
    head, base = _resolve(repo, ours), _resolve(repo, onto)
    walker = raw.walk(head.id, pygit2.enums.SortMode.TOPOLOGICAL | pygit2.enums.SortMode.REVERSE)
    walker.hide(base.id)
    commits = list(walker)
    fork = raw.merge_base(head.id, base.id)
    joined = _joined(raw, joiner, fork, base, head)

    def read(rev: str, path: str) -> bytes | None:
        return joined.read(_commit_tree(raw, rev), path)

    plan = renumber(read, str(fork), str(base.id), str(head.id)) if renumber is not None and fork is not None \
        else None
    leaving = leave(read, str(fork), str(base.id), tuple(_plain(c) for c in commits)) \
        if leave is not None and fork is not None else None
    tip = base
    count = 0
    dropped: list[str] = []
    left_out: list[str] = []
    for commit in commits:
        if len(commit.parents) != 1:
            raise RepoError(f"cannot replay merge commit {str(commit.id)[:10]}; merge by hand")
        if leaving is not None and str(commit.id) in leaving.commits:
            left_out.append(str(commit.id))
            continue
        if left_out:        # its parent holds what was left out, and the tip does not
            assert leaving is not None
            resolver = leaving.resolver
        parent_tree, our_tree, message = joined.tree(commit.parents[0].tree), joined.tree(commit.tree), commit.message
        if plan is not None:
            parent_tree, our_tree = _renumbered(raw, parent_tree, plan), _renumbered(raw, our_tree, plan)
            message = plan.message(message)
        merged = raw.merge_trees(parent_tree, joined.tree(tip.tree), our_tree)
        if merged.conflicts is not None and not _resolve_conflicts(raw, merged, resolver):
            paths = sorted({(entry or ours or theirs).path for entry, ours, theirs in merged.conflicts})
            return tuple(paths), count
        split = joined.split(merged, tip.tree)
        if split is not None:
            return split, count
        tree = merged.write_tree(raw)
        if tree == tip.tree.id and commit.tree.id != commit.parents[0].tree.id:   # an empty one made so is kept
            dropped.append(str(commit.id))
            continue
        oid = raw.create_commit(None, commit.author, commit.committer, message, tree, [tip.id])
        tip = raw[oid].peel(pygit2.Commit)
        count += 1
    return Replayed(str(tip.id), plan, tuple(dropped), tuple(left_out), leaving), count


# The trees whose joined texts `_Joined.read` keeps: the fork and the two tips the renumbering reads in turn.
_READS_KEPT = 3


class _Joined:
    """A Joining applied to the trees of one merge or rebase (none: every tree as it is)."""

    def __init__(self, raw: pygit2.Repository, joining: Joining | None, folders: tuple[str, ...] = ()) -> None:
        self.raw, self.joining, self.folders = raw, joining, folders
        self._done: dict[pygit2.Oid, pygit2.Tree] = {}
        # What joining wrote into the trees `read` asked for last, by path. Only reads need it: the renumbering
        # reads the fork and the two tips, the leaving the fork, the upstream and each commit after its parent (the
        # previous one); a tree the replay merges is never read back. So a few trees' texts, however long the
        # replay (an unsealed LOG is all of history: 75 MB at 100x).
        self._written: dict[pygit2.Oid, dict[str, bytes]] = {}

    def tree(self, tree: pygit2.Tree) -> pygit2.Tree:
        """`tree` joined, once per tree: a rebase asks for the same trees again and again (each replayed commit's
        parent, the tip, the renumbering's reads), and a tree that sealed reads and unseals all its newer volumes
        (25 at 10x after the first seal of an old LOG, 269 at 100x)."""
        return self._join(tree)[0]

    def _join(self, tree: pygit2.Tree) -> tuple[pygit2.Tree, Changes]:
        """`tree` joined, and what joining wrote into it when it is joined now (nothing when it was before)."""
        if self.joining is None:
            return tree, {}
        joined = self._done.get(tree.id)
        if joined is not None:
            return joined, {}
        changes = self.joining.join(_tree_files(self.raw, tree, self.folders))
        joined = self._done[tree.id] = _changed(self.raw, tree, changes)
        return joined, changes

    def read(self, tree: pygit2.Tree, path: str) -> bytes | None:
        """A file of `tree` joined: what joining wrote there is kept while the reads are of this tree or the few
        before it, not read back from the blob it became; else the blob is read."""
        written = self._written.pop(tree.id, None)
        if written is None:
            written = {name: data for name, data in self._join(tree)[1].items() if data is not None}
        self._written[tree.id] = written        # the latest read last
        while len(self._written) > _READS_KEPT:
            del self._written[next(iter(self._written))]
        found = written.get(path)
        return found if found is not None else _read_tree(self.raw, self.tree(tree), path)

    def split(self, merged: pygit2.Index, onto: pygit2.Tree) -> tuple[str, ...] | None:
        """Split the merged index again, in place; the paths that could not be split (nothing changed), or None."""
        if self.joining is None:
            return None
        raw = self.raw

        def read(path: str) -> bytes | None:
            entry = merged[path] if path in merged else None
            return bytes(cast(pygit2.Blob, raw[entry.id]).data) if entry is not None else None

        changes = self.joining.split(TreeFiles({}, read), _tree_files(raw, onto, self.folders))
        if changes is None:
            return self.folders
        _write_into(raw, merged, changes)
        return None


def _joined(raw: pygit2.Repository, joiner: Joiner | None, fork: pygit2.Oid | None, upstream: pygit2.Commit,
            ours: pygit2.Commit) -> _Joined:
    if joiner is None or fork is None:
        return _Joined(raw, None)
    trees = (raw[fork].peel(pygit2.Commit).tree, upstream.tree, ours.tree)
    return _Joined(raw, joiner.joining(*(_tree_files(raw, tree, joiner.folders) for tree in trees)), joiner.folders)


def _tree_files(raw: pygit2.Repository, tree: pygit2.Tree, folders: tuple[str, ...]) -> TreeFiles:
    """`tree`'s files for a Joining: the blobs directly in `folders` listed, any file read."""
    listing: dict[str, str] = {}
    for folder in folders:
        try:
            entry = tree[folder]
        except KeyError:
            continue
        if entry.type_str == "tree":
            listing.update((f"{folder}/{item.name}", str(item.id)) for item in cast(pygit2.Tree, raw[entry.id])
                           if item.type_str == "blob")
    return TreeFiles(listing, lambda path: _read_tree(raw, tree, path))


def _commit_tree(raw: pygit2.Repository, rev: str) -> pygit2.Tree:
    return raw.revparse_single(rev).peel(pygit2.Commit).tree


def _read_tree(raw: pygit2.Repository, tree: pygit2.Tree, path: str) -> bytes | None:
    try:
        entry = tree[path]
    except KeyError:
        return None
    return bytes(cast(pygit2.Blob, raw[entry.id]).data) if entry.type_str == "blob" else None


def _changed(raw: pygit2.Repository, tree: pygit2.Tree, changes: Changes) -> pygit2.Tree:
    """`tree` with `changes` written into it (None removes a file); the same tree when there are none."""
    if not changes:
        return tree
    index = pygit2.Index()
    index.read_tree(tree)
    _write_into(raw, index, changes)
    return cast(pygit2.Tree, raw[index.write_tree(raw)])


def _write_into(raw: pygit2.Repository, index: pygit2.Index, changes: Changes) -> None:
    """`changes` written into `index` (None removes a file); a file that stays keeps its mode."""
    for path, data in changes.items():
        if data is None:
            if path in index:
                index.remove(path)
        else:
            mode = index[path].mode if path in index else pygit2.enums.FileMode.BLOB
            index.add(pygit2.IndexEntry(path, raw.create_blob(data), mode))


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
    leaving: Leaving | None = None      # what `leave` named of theirs, left out of the merged tree


def merge_into(repo: Repo, ours: str, theirs: str, message: str, author: Identity,
               resolver: Resolver | None = None, renumber: Renumberer | None = None,
               joiner: Joiner | None = None, leave: Leaver | None = None) -> Merged:
    """A merge commit of `theirs` into `ours` (parents in that order), made in memory: no branch, index or
    work tree moves. `renumber` changes `theirs`' side first (its cycles go after ours'); a path whose line
    merge conflicts is offered to `resolver(path, base, ours, theirs)`; `joiner` joins what a side split into
    several files before all that, and splits the merge again (gitmem.publish.sealed). `leave` names commits of
    theirs whose change the merge leaves out, as a replay onto `ours` would (a close of a day ours closed first,
    gitmem.publish.closed_first): theirs' side is merged as the commits after them make it without them, and the
    commits themselves stay in history under the merge, its second parent as made."""
    raw = repo.raw
    mine, other = _resolve(repo, ours), _resolve(repo, theirs)
    fork = raw.merge_base(mine.id, other.id)
    if fork is None:
        raise RepoError(f"{theirs} shares no history with {ours}; nothing to merge by memory rules")
    joined = _joined(raw, joiner, fork, mine, other)

    def read(rev: str, path: str) -> bytes | None:
        return joined.read(_commit_tree(raw, rev), path)

    plan = renumber(read, str(fork), str(mine.id), str(other.id)) if renumber is not None else None
    base_tree = joined.tree(raw[fork].peel(pygit2.Commit).tree)
    leaving = _leaving(raw, read, leave, fork, mine, other) if leave is not None else None
    if leaving is not None:
        without = _without(repo, other, leaving, resolver, joiner)
        if isinstance(without, tuple):
            return Merged(None, without, plan, leaving)
        other = without
    their_tree = joined.tree(other.tree)
    their_tree = _renumbered(raw, their_tree, plan) if plan is not None else their_tree
    merged = raw.merge_trees(base_tree, joined.tree(mine.tree), their_tree)
    if merged.conflicts is not None and not _resolve_conflicts(raw, merged, resolver):
        return Merged(None, tuple(sorted({(e or o or t).path for e, o, t in merged.conflicts})), plan)
    split = joined.split(merged, mine.tree)
    if split is not None:
        return Merged(None, split, plan)
    tree = merged.write_tree(raw)
    who = pygit2.Signature(author.name, author.email)
    oid = raw.create_commit(None, who, who, message, tree, [mine.id, _resolve(repo, theirs).id])
    return Merged(str(oid), (), plan, leaving)


def _leaving(raw: pygit2.Repository, read: Callable[[str, str], bytes | None], leave: Leaver, fork: pygit2.Oid,
             mine: pygit2.Commit, other: pygit2.Commit) -> Leaving | None:
    """What `leave` names of the commits `other` holds and `mine` lacks, oldest first (None: nothing)."""
    walker = raw.walk(other.id, pygit2.enums.SortMode.TOPOLOGICAL | pygit2.enums.SortMode.REVERSE)
    walker.hide(mine.id)
    found = leave(read, str(fork), str(mine.id), tuple(_plain(commit) for commit in walker))
    return found if found is not None and found.commits else None


def _without(repo: Repo, other: pygit2.Commit, leaving: Leaving, resolver: Resolver | None,
             joiner: Joiner | None) -> pygit2.Commit | tuple[str, ...]:
    """`other` as it would be had the commits `leaving` names never been made: the commits after the first of them
    replayed onto its parent without them, as a push's replay does (`replay`), touching no branch; or the paths
    that did not replay."""
    raw = repo.raw
    walker = raw.walk(other.id, pygit2.enums.SortMode.TOPOLOGICAL | pygit2.enums.SortMode.REVERSE)
    first = next(commit for commit in walker if str(commit.id) in leaving.commits)
    tip, _ = replay(repo, str(other.id), str(first.parents[0].id), resolver, None, joiner, lambda *_: leaving)
    if isinstance(tip, tuple):
        return tip
    return raw[tip.head].peel(pygit2.Commit)
