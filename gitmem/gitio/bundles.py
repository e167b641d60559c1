"""A copy of the human's unpushed history in a git bundle, and the stash list, for the cycle's guard.

An agent that runs as the same user can delete a branch, expire every reflog and prune: the commits are then
gone from the object store, and putting a reference back needs them. `unpushed` says whether any commit or tag
object reachable from the given tips is missing from the remote-tracking branches (a revision walk in process,
no subprocess: the common case, everything pushed, costs nothing); `create_bundle` writes what is missing to a
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


def unpushed(repo: Repo, tips: Sequence[str], held: Sequence[str]) -> bool:
    """Whether anything reachable from `tips` (commit or annotated tag ids) is not reachable from `held`.

    A tag object is never on a remote-tracking branch, so an annotated tag always counts: the bundle keeps it."""
    raw = repo.raw
    walker: pygit2.Walker | None = None
    for tip in tips:
        obj = raw.get(tip)
        if obj is None:
            continue
        if isinstance(obj, pygit2.Tag):
            return True
        if not isinstance(obj, pygit2.Commit):
            continue
        if walker is None:
            walker = raw.walk(obj.id, pygit2.enums.SortMode.NONE)
        else:
            walker.push(obj.id)
    if walker is None:
        return False
    for oid in held:
        if oid in raw:
            walker.hide(pygit2.Oid(hex=oid))
    return next(iter(walker), None) is not None


def create_bundle(repo: Repo, path: Path, refs: Sequence[str], also: Sequence[str], held: Sequence[str]) -> None:
    """A bundle at `path` of everything reachable from the references `refs` and the commits `also` (older stash
    entries, which no reference names) and not from the commits `held` (its prerequisites)."""
    revs = [*refs, *also, *(f"^{oid}" for oid in held)]
    run_git(repo, "bundle", "create", "--quiet", str(path), "--stdin", stdin="".join(f"{r}\n" for r in revs))


def unbundle(repo: Repo, path: Path) -> None:
    """Put a bundle's objects into the object store (references are the caller's to set)."""
    run_git(repo, "bundle", "unbundle", str(path))
