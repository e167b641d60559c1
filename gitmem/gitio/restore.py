"""Putting chosen work-tree paths back as HEAD has them, never writing through a link the agent planted: every
entry is reached as gitmem reaches its own files (gitmem.confined.files: one component at a time, O_NOFOLLOW)."""
from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path
from typing import cast

import pygit2

from gitmem.confined import files
from gitmem.gitio.repository import Repo, root


def head_entry(repo: Repo, path: str) -> tuple[bytes, int] | None:
    """(bytes, git mode) of `path` in HEAD; None when HEAD has no file there."""
    raw = repo.raw
    if raw.head_is_unborn:
        return None
    try:
        entry = raw.head.peel(pygit2.Commit).tree[path]
    except KeyError:
        return None
    if entry.type != pygit2.enums.ObjectType.BLOB:
        return None
    return cast(pygit2.Blob, raw[entry.id]).data, int(entry.filemode)


def head_files_under(repo: Repo, folder: str) -> list[str]:
    """The paths of every file HEAD holds under `folder` (none when HEAD has no folder there)."""
    raw = repo.raw
    if raw.head_is_unborn:
        return []
    try:
        entry = raw.head.peel(pygit2.Commit).tree[folder]
    except KeyError:
        return []
    if entry.type != pygit2.enums.ObjectType.TREE:
        return []
    found: list[str] = []
    pending = [(folder, cast(pygit2.Tree, raw[entry.id]))]
    while pending:                           # a stack, not recursion: a tree can be nested thousands deep
        place, tree = pending.pop()
        for item in tree:
            rel = f"{place}/{item.name}"
            if item.type == pygit2.enums.ObjectType.TREE:
                pending.append((rel, cast(pygit2.Tree, raw[item.id])))
            elif item.type == pygit2.enums.ObjectType.BLOB:
                found.append(rel)
    return found


def restore_paths(repo: Repo, paths: Iterable[str]) -> None:
    """Make each of `paths` what HEAD holds: removed when HEAD has none, rewritten otherwise (mode kept)."""
    base = root(repo)
    wanted = sorted(set(paths), key=lambda p: (-p.count("/"), p))
    targets = {path: head_entry(repo, path) for path in wanted}
    for path in wanted:                        # deepest first: what HEAD lacks goes, then empty folders
        if targets[path] is None:
            _remove(base, path)
    for path in sorted(wanted, key=lambda p: (p.count("/"), p)):
        found = targets[path]
        if found is not None:
            _write(base, path, *found)


def _remove(base: Path, rel: str) -> None:
    files.remove_entry(base, rel)
    parent = (base / rel).parent
    while parent != base and parent.is_relative_to(base):
        try:
            os.rmdir(parent)                    # only when empty; never a link (rmdir does not follow one)
        except OSError:
            break
        parent = parent.parent


# A folder on the way can be swapped for another while a file is put back into it (a process the agent left,
# racing the put-back: the folder gitmem made in place of a planted link is replaced, and the file's temporary
# name is then created in a folder that is gone, ENOENT). Each try walks again from the root, so no link is
# ever followed; only a race lost this many times in a row is an error.
PUT_BACK_TRIES = 5


def _write(base: Path, rel: str, data: bytes, mode: int) -> None:
    for tries_left in reversed(range(PUT_BACK_TRIES)):
        try:
            files.put_entry(base, rel, data, mode)
            return
        except FileNotFoundError:
            if not tries_left:
                raise
