"""A copy of the human's unpushed history in a git bundle, and the stash list, for the cycle's guard.

An agent that runs as the same user can delete a branch, expire every reflog and prune: the commits are then
gone from the object store, and putting a reference back needs them. `unheld` says which of the given tips the
remote-tracking refs (or any other set of holders) do not hold; `create_bundle` writes what is missing to a
bundle and `unbundle` puts its objects back. A stash is reachable only from the reflog of `refs/stash`, so the
stash list is read and written as a list (`stash_entries`, `put_stash`).
"""
from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pygit2

from gitmem.gitio.remote import run_git
from gitmem.gitio.repository import Repo

STASH = "refs/stash"


def stash_entries(repo: Repo) -> list[tuple[str, str]]:
    """The stash list, newest first (`stash@{0}` first): (commit id, message) from the reflog of refs/stash."""
    ref = repo.raw.references.get(STASH)
    if ref is None:
        return []
    try:
        return [(str(entry.oid_new), entry.message or "") for entry in ref.log()]
    except pygit2.GitError:
        return []


def put_stash(repo: Repo, entries: Sequence[tuple[str, str]]) -> None:
    """Make the stash list `entries` (newest first), through `git stash store` as git itself records a stash."""
    run_git(repo, "update-ref", "-d", STASH)
    for oid, message in reversed(entries):
        run_git(repo, "stash", "store", "--quiet", "-m", message, oid)


def unheld(repo: Repo, tips: Sequence[str], held: Sequence[str]) -> list[str]:
    """The `tips` (commit or annotated tag ids) that `held` does not hold, in their order. A commit is held when a
    held id reaches it; a tag object only when a held id names it, since no commit reaches a tag object. A tip
    the object store lacks is not held: a bundle may be its only copy. Other objects (a ref at a blob) count
    as held: a bundle of refs leaves them out.

    One revision walk in process, no subprocess: the common case, everything held, costs nothing."""
    raw = repo.raw
    named = set(held)
    walker: pygit2.Walker | None = None
    missing: set[str] = set()
    for tip in tips:
        obj = raw.get(tip) if tip not in named else None
        if tip in named or (obj is not None and not isinstance(obj, (pygit2.Commit, pygit2.Tag))):
            continue
        if obj is None or isinstance(obj, pygit2.Tag):
            missing.add(tip)
        elif walker is None:
            walker = raw.walk(obj.id, pygit2.enums.SortMode.NONE)
        else:
            walker.push(obj.id)
    if walker is not None:
        for oid in named:
            if oid in raw:
                walker.hide(pygit2.Oid(hex=oid))
        wanted = set(tips) - missing - named
        for commit in walker:       # the commits no held id reaches: stop once every tip is among them
            if str(commit.id) in wanted:
                missing.add(str(commit.id))
                if wanted <= missing:
                    break
    return [tip for tip in tips if tip in missing]


def create_bundle(repo: Repo, path: Path, refs: Sequence[str], also: Sequence[str], held: Sequence[str]) -> None:
    """A bundle at `path` of everything reachable from the references `refs` and the commits `also` (older stash
    entries, which no reference names) and not from the commits `held` (its prerequisites)."""
    revs = [*refs, *also, *(f"^{oid}" for oid in held)]
    run_git(repo, "bundle", "create", "--quiet", str(path), "--stdin", stdin="".join(f"{r}\n" for r in revs))


def unbundle(repo: Repo, path: Path) -> None:
    """Put a bundle's objects into the object store (references are the caller's to set)."""
    run_git(repo, "bundle", "unbundle", str(path))
