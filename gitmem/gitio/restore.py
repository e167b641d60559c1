"""Putting chosen work-tree paths back as HEAD has them, never writing through a link the agent planted."""
from __future__ import annotations

import os
import shutil
import stat
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import cast

import pygit2

from gitmem.confined.files import EXECUTABLE, LINK
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
    full = base / rel
    if not no_link_on_the_way(base, rel):
        return                                  # a link or file where a folder was: nothing of the tree is there
    try:
        info = os.lstat(full)
    except FileNotFoundError:
        return
    if stat.S_ISDIR(info.st_mode):
        shutil.rmtree(full)
    else:
        os.unlink(full)
    parent = full.parent
    while parent != base and parent.is_relative_to(base):
        try:
            os.rmdir(parent)                    # only when empty
        except OSError:
            break
        parent = parent.parent


def no_link_on_the_way(base: Path, rel: str) -> bool:
    """Every folder on the way to `rel` is a real folder or absent: no link or file the agent planted, through
    which a path would reach outside the tree (lstat of the full path follows such a link)."""
    current = base
    for part in Path(rel).parts[:-1]:
        current = current / part
        try:
            if not stat.S_ISDIR(os.lstat(current).st_mode):
                return False
        except FileNotFoundError:
            return True                         # nothing further down exists either
    return True


def _write(base: Path, rel: str, data: bytes, mode: int) -> None:
    full = base / rel
    current = base
    for part in Path(rel).parts[:-1]:           # every folder on the way is a real one inside the tree
        current = current / part
        try:
            info = os.lstat(current)
        except FileNotFoundError:
            os.mkdir(current)
            continue
        if not stat.S_ISDIR(info.st_mode):
            os.unlink(current)
            os.mkdir(current)
    try:
        if stat.S_ISDIR(os.lstat(full).st_mode):
            shutil.rmtree(full)
        else:
            os.unlink(full)
    except FileNotFoundError:
        pass
    if mode == LINK:
        os.symlink(os.fsdecode(data), full)
        return
    fd, tmp = tempfile.mkstemp(prefix=f".{full.name}.", dir=full.parent)
    with os.fdopen(fd, "wb") as handle:
        handle.write(data)
    os.chmod(tmp, 0o755 if mode == EXECUTABLE else 0o644)
    os.replace(tmp, full)
