"""Ignored tool directories (formerly "trust anchors"): git-ignored places in the work tree that the human's own
tools run code from, unreviewed.

`.venv` is what the committed launcher (`.gitmem/gitmem`) and the human's `. .venv/bin/activate` run (`venv`
is the other name the template's .gitignore gives a venv); `.direnv` is what direnv's `layout python` activates
on `cd`. Files are anchors too: `.env`, which direnv's `dotenv`, pipenv, bun, docker compose and VS Code's
Python extension load into the environment of what the human runs next, where an `LD_PRELOAD`, a `PATH` or a
`NODE_OPTIONS` runs code as surely as a venv's script does; and the whole `.env.<anything>` family beside it
(`is_env_file`), since bun, Next.js, Vite and dotenv-flow load `.env.local`, `.env.<mode>` and `.env.<mode>.local`
the same way, for a mode any script may name. The family is a rule over names, not a list: the anchors of a tree
are the fixed ones plus every member of the family found at its top (`anchor_names`). They are ignored by git,
so an agent's edit of them would never show in a diff, and would run with the human's rights, outside any
sandbox, in the next interactive session. So, by mechanism:

- inside the sandbox they are read-only, present or not (gitmem.agents.sandbox `bwrap_argv`): an absent one is a
  read-only empty mount point (for the env files loaders read by default, IGNORED_TOOL_FILES, an empty file,
  where git ignores it), which bwrap makes on the host as an empty directory or file; the runner removes it
  again after the cycle when it is still empty (`remove_mount_points`). A member of the family no loader reads
  by default (`.env.staging`) cannot be made in advance for every name: one the agent creates is reported, as
  below, and one git does not ignore is in the cycle's commit too;
- the in-process file tools of the `anthropic` backend refuse to write them (gitmem.agents.tools);
- in every mode the runner takes a `snapshot_tool_dirs` before the agent runs and looks again after (`changed`), and
  reports a change in the LOG entry's Evidence, the cycle's output and `gitmem status`: without the sandbox
  the agent has the human's uid and could change anything, and the human must hear of it.

The look after is one bounded walk, not a second fingerprint to compare with a first: an entry whose ctime
is at or after the snapshot was made, or changed, during the cycle (a directory's ctime moves when an entry
in it is added, removed or renamed). ctime is what makes one walk enough: the agent can put an mtime back
(os.utime), never a ctime. Where every way the agent had to the disk was confined (the box, the refusing
file tools) the walk is skipped and only each anchor itself is looked at (a link out of the tree could be
replaced): the mounts already hold, and a venv holds thousands of entries.

Not listed, on purpose: `.git/hooks` (the whole `.git` is read-only in the box; the runner restores its state
files), `.envrc` (direnv runs it only after `direnv allow` of that exact content), `node_modules` (the agent
may rightly install a project's packages; tools that run its `.bin` are the project's own), and tracked files
such as `.vscode/tasks.json` (a change is in the cycle's commit, and a protected path's is a proposal).
The list is fixed, not a setting: it names where gitmem's own instructions put a venv, and each entry costs
a mount and a walk in every cycle. Bytecode caches (`__pycache__`, `*.pyc`, bootsnap), which runtimes load in
place of a source from anywhere in the tree, are not anchors: they are removed after the agent instead
(gitmem.agents.bytecode).
"""
from __future__ import annotations

import os
import stat
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

IGNORED_TOOL_DIRS = (".venv", "venv", ".direnv")     # relative to the top of the work tree; fixed, not configured
# The same, for files: the env files loaders read with no mode named or in their default modes (bun, Next.js,
# Vite, dotenv-flow): an absent one is a read-only mount point in the box. Every other `.env.*` is an anchor too
# (`is_env_file`), read-only in the box when present and reported when the agent creates it.
IGNORED_TOOL_FILES = (".env", ".env.local", *(f".env.{mode}{local}" for mode in ("development", "production", "test")
                                             for local in ("", ".local")))
IGNORED_TOOLS = (*IGNORED_TOOL_DIRS, *IGNORED_TOOL_FILES)
ENV_FILE = ".env"
MAX_ENTRIES = 100_000                    # a venv holds a few thousand; the walk stops here
ABSENT = "absent"
# The kernel stamps a ctime from a coarse clock, up to a tick behind time.time_ns(): the snapshot's moment is
# that clock's, read from a file made for it; only when that fails, time.time_ns() less this slack.
CLOCK_SLACK_NS = 50_000_000
# The Evidence note's opening words; `gitmem status` finds the last cycle's warnings by them.
NOTE_PREFIX = "changed a trust anchor"


@dataclass(frozen=True)
class AnchorSnapshot:
    """Before the agent runs: the moment, and each anchor itself (type, inode, ctime, link target) or ABSENT."""

    since_ns: int
    tops: dict[str, str]


def is_env_file(name: str) -> bool:
    """Whether a name at the top of the tree is one of the env files (`.env`, `.env.local`, `.env.<mode>`…),
    whatever its case: a case-insensitive file system opens `.ENV` as `.env`. `.envrc` is not one (see above)."""
    folded = name.casefold()
    return folded == ENV_FILE or folded.startswith(f"{ENV_FILE}.")


def anchor_names(root: Path) -> tuple[str, ...]:
    """The anchors of the tree at `root`: IGNORED_TOOLS, then each other env file at its top, sorted."""
    try:
        found = sorted(name for name in os.listdir(root) if is_env_file(name) and name not in IGNORED_TOOLS)
    except OSError:
        found = []
    return (*IGNORED_TOOLS, *found)


def snapshot_tool_dirs(root: Path, *, clock_dir: Path) -> AnchorSnapshot:
    """`clock_dir`: a directory the runner writes, on the work tree's file system (`.git/gitmem/`), where a
    file is made and removed to read the moment as the kernel stamps ctimes. A venv installed just before the
    cycle is then never taken for a change made during it."""
    return AnchorSnapshot(_kernel_now(clock_dir), {name: _top(root / name) for name in anchor_names(root)})


def _kernel_now(folder: Path) -> int:
    try:
        handle, name = tempfile.mkstemp(prefix="anchor-clock-", dir=folder)
    except OSError:
        return time.time_ns() - CLOCK_SLACK_NS
    try:
        return os.fstat(handle).st_ctime_ns
    finally:
        os.close(handle)
        os.unlink(name)


def changed(root: Path, before: AnchorSnapshot, *, walk: bool) -> list[str]:
    """The anchors created, removed, replaced or (`walk`) changed inside since `before`, in `anchor_names` order
    (with each env file made or removed during the cycle). A file's own ctime moves with every write: it needs
    no walk."""
    found = []
    for name in (*IGNORED_TOOLS, *sorted({*before.tops, *anchor_names(root)}.difference(IGNORED_TOOLS))):
        now = _top(root / name)
        if now != before.tops.get(name, ABSENT) or (walk and now != ABSENT and not is_env_file(name)
                                                    and _touched(root / name, before.since_ns)):
            found.append(name)
    return found


def note(names: list[str], before: AnchorSnapshot) -> str:
    """The one Evidence line for the anchors in `names` (created, removed or changed during the cycle)."""
    def what(name: str) -> str:
        shown = name if is_env_file(name) else f"{name}/"
        return f"{shown} (created)" if before.tops.get(name, ABSENT) == ABSENT else shown
    return (f"{NOTE_PREFIX}: {', '.join(what(n) for n in names)} changed during the cycle; a diff may not "
            "show it (it is git-ignored where the template has it), and your tools run it with your rights (the "
            "launcher, `. .venv/bin/activate`, direnv, pipenv, bun or Vite loading `.env` files): check it, or "
            "remove and recreate it, before your next session")


def remove_mount_points(root: Path, before: AnchorSnapshot) -> None:
    """Remove each anchor that was absent before the agent ran and is an empty directory (or, for a file anchor,
    an empty regular file) now: the mount point bwrap made for the read-only placeholder (or an agent's empty
    mkdir or touch, as harmless). Anything else stays, and is reported."""
    for name, was in before.tops.items():
        if was != ABSENT:
            continue
        place = root / name
        try:
            if not is_env_file(name):
                place.rmdir()          # fails on a link, a file or a directory with anything in it: reported
                continue
            info = place.lstat()
            if stat.S_ISREG(info.st_mode) and info.st_size == 0:
                place.unlink()
        except OSError:
            continue


def _top(place: Path) -> str:
    try:
        info = place.lstat()
    except OSError:
        return ABSENT
    target = os.readlink(place) if stat.S_ISLNK(info.st_mode) else ""
    return f"{info.st_mode:o} {info.st_dev}:{info.st_ino} {info.st_ctime_ns} {target}"


def _touched(top: Path, since_ns: int) -> bool:
    """Whether any entry under `top` has a ctime at or after `since_ns`. Plain strings and os.scandir: a venv
    holds thousands of entries, and Path objects would triple the cost."""
    pending, count = [str(top)], 0
    while pending and count < MAX_ENTRIES:
        try:
            with os.scandir(pending.pop()) as entries:
                for entry in entries:
                    count += 1
                    try:
                        info = entry.stat(follow_symlinks=False)
                    except OSError:
                        continue
                    if info.st_ctime_ns >= since_ns:
                        return True
                    if stat.S_ISDIR(info.st_mode):
                        pending.append(entry.path)
        except OSError:
            continue
    return False
