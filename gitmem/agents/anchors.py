"""Trust anchors: git-ignored places in the work tree that the human's own tools run code from, unreviewed.

`.venv` is what the committed launcher (`.gitmem/gitmem`) and the human's `. .venv/bin/activate` run (`venv`
is the other name the template's .gitignore gives a venv); `.direnv` is what direnv's `layout python` activates
on `cd`. They are ignored by git, so an agent's edit of them would never show in a diff, and would run with
the human's rights, outside any sandbox, in the next interactive session. So, by mechanism:

- inside the sandbox they are read-only, present or not (gitmem.agents.sandbox `bwrap_argv`): an absent one is a
  read-only empty mount point, which bwrap makes on the host as an empty directory; the runner removes it again
  after the cycle when it is still empty (`remove_mount_points`);
- in every mode the runner takes a `fingerprint` before the agent runs and one after, and reports a change
  (`changed`) in the LOG entry's Evidence, the cycle's output and `gitmem status`: without the sandbox the
  agent has the human's uid and could change anything, and the human must hear of it.

Not listed, on purpose: `.git/hooks` (the whole `.git` is read-only in the box; the runner restores its state
files), `.envrc` (direnv runs it only after `direnv allow` of that exact content), `node_modules` (the agent
may rightly install a project's packages; tools that run its `.bin` are the project's own), and tracked files
such as `.vscode/tasks.json` (a change is in the cycle's commit, and a protected path's is a proposal).
The list is fixed, not a setting: it names where gitmem's own instructions put a venv, and each entry costs
a mount and a walk in every cycle.
"""
from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Mapping
from pathlib import Path

TRUST_ANCHORS = (".venv", "venv", ".direnv")     # relative to the top of the work tree; fixed, not configured
MAX_ENTRIES = 100_000                    # a venv holds a few thousand; past this, only the count is compared
ABSENT = "absent"
# The Evidence note's opening words; `gitmem status` finds the last cycle's warnings by them.
NOTE_PREFIX = "changed a trust anchor"


def fingerprint(root: Path) -> dict[str, str]:
    """Each anchor's digest of names, types, modes, sizes, mtimes, ctimes and link targets (bounded), or
    ABSENT. ctime is part of it: the agent can put an mtime back (os.utime), never a ctime."""
    return {name: _digest(root / name) for name in TRUST_ANCHORS}


def changed(before: Mapping[str, str], after: Mapping[str, str]) -> list[str]:
    """The anchors whose fingerprint differs, in TRUST_ANCHORS order."""
    return [name for name in TRUST_ANCHORS if before.get(name) != after.get(name)]


def note(names: list[str], before: Mapping[str, str]) -> str:
    """The one Evidence line for the anchors in `names` (created, removed or changed during the cycle)."""
    def what(name: str) -> str:
        return f"{name}/ (created)" if before.get(name) == ABSENT else f"{name}/"
    return (f"{NOTE_PREFIX}: {', '.join(what(n) for n in names)} changed during the cycle; it is git-ignored, and "
            "your tools run it with your rights (the launcher, `. .venv/bin/activate`): check it, or remove and "
            "recreate it, before your next session")


def remove_mount_points(root: Path, before: Mapping[str, str]) -> None:
    """rmdir each anchor that was absent before the agent ran and is an empty directory now: the mount point
    bwrap made for the read-only placeholder (or an agent's empty mkdir, as harmless)."""
    for name, was in before.items():
        if was != ABSENT:
            continue
        try:
            (root / name).rmdir()      # fails on a link, a file or a directory with anything in it: reported
        except OSError:
            continue


def _digest(top: Path) -> str:
    try:
        first = top.lstat()
    except OSError:
        return ABSENT
    hasher = hashlib.blake2b(digest_size=16)
    hasher.update(_line(".", first, top))
    if not stat.S_ISDIR(first.st_mode):
        return hasher.hexdigest()
    pending, count = [top], 0
    while pending and count < MAX_ENTRIES:
        folder = pending.pop()
        try:
            with os.scandir(folder) as entries:
                found = sorted(entries, key=lambda e: e.name)
        except OSError:
            hasher.update(b"unreadable " + os.fsencode(folder))
            continue
        for entry in found:
            count += 1
            try:
                info = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            hasher.update(_line(os.path.relpath(entry.path, top), info, Path(entry.path)))
            if stat.S_ISDIR(info.st_mode):
                pending.append(Path(entry.path))
    hasher.update(f"entries {count}".encode())
    return hasher.hexdigest()


def _line(name: str, info: os.stat_result, path: Path) -> bytes:
    target = os.readlink(path) if stat.S_ISLNK(info.st_mode) else ""
    return (f"{name}\0{info.st_mode:o}\0{info.st_size}\0{info.st_mtime_ns}\0{info.st_ctime_ns}\0{target}\n"
            .encode("utf-8", "surrogateescape"))
