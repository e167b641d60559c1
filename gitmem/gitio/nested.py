"""The git directories inside a work tree, found by a bounded walk: `git_dirs_in`.

Besides the repository's own `.git`, a project's tree can hold other git directories the repository's config
names nowhere: a clone kept inside it (`vendor/lib/.git`, tracked or ignored or neither), a bare repository, a
`.git` file or link that leads to a git directory elsewhere, and each one's submodules (`modules/`) and linked
trees' folders (`worktrees/`). Each of them holds a config git reads there, with whatever the human left in it.

The tree may be deep and wide (a `node_modules`), and its shape is the agent's to choose between two boxes; so
the walk looks at MAX_WALK_ENTRIES entries at most, MAX_WALK_DEPTH folders deep, and stops at MAX_GIT_DIRS git
directories that hold a config file. It goes breadth first, so a clone near the top is found however vast a
`node_modules` beside it is. The folders where git keeps many files of its own (GIT_OWN: objects, refs, logs)
are skipped only in a git directory the walk has reason to trust: a folder named `.git`, one a `.git` file or link
leads to, and the git directories in a trusted one's `modules/` and `worktrees/` (a submodule's, a linked tree's).
A folder that only looks like a git directory is a file and a folder the agent can make (an empty `HEAD` and an
`objects/` at the top of the tree, whose `logs/` is then a project's own): its config is found (a bare repository
is one), but nothing in it is skipped, so it hides nothing below it at the cost of entries of the budget; and one
without a config file is not counted, so a thousand of them use no part of the MAX_GIT_DIRS budget (they have
nothing the box would strip). Links are not followed, but a `.git` link is read as the pointer it is. The bounds
are a cost bound, not a fence: the agent, which writes the tree, can make it wide or deep enough, or hold enough
repositories of its own near the top, to put a git directory past them, or move one into a folder the walk skips
(a `.git`'s `logs/`).
"""
from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from gitmem.confined.walk import walk_tree
from gitmem.gitio.bounded_read import read_bounded

MAX_WALK_ENTRIES = 100_000     # files and folders looked at, in all
MAX_WALK_DEPTH = 24            # folders below the top of the tree
MAX_GIT_DIRS = 256             # git directories found that hold a config file, in all
POINTER = "gitdir:"            # a `.git` file's one line: where its git directory is
POINTER_BYTES = 4096           # read of it (and of a `commondir`), at most
CONFIG_NAMES = ("config", "config.worktree")    # a git directory's config files
# The folders of a git directory where git keeps many files of its own and never a git directory's config: the
# walk's cost, not its reach (skipped in a trusted git directory only: elsewhere a folder of the name is anyone's).
GIT_OWN = frozenset({"objects", "refs", "logs", "lfs", "rr-cache", "reftable"})


@dataclass(frozen=True)
class NestedWalk:
    """What one bounded walk of a work tree found."""
    git_dirs: list[Path]          # git directories (real paths) that hold a config file, in the order found
    pointers: list[Path]          # `.git` files and links in the tree (where they stand, not where they lead)
    stopped: str = ""             # the bound the walk stopped at, "" when it looked at the whole tree


_PINNED: dict[str, NestedWalk] = {}       # by the tree's real path: a walk taken once, used once more (`pinned_walk`)


def git_dirs_in(tree: Path) -> list[Path]:
    """The git directories (real paths) that hold a config file in the work tree `tree`, its own `.git` among
    them, and the ones a `.git` file or link in it leads to (wherever they are: the caller judges what it shows),
    each one's common directory (`commondir`) with it; in the order found, within the bounds above."""
    return nested_walk(tree).git_dirs


def nested_walk(tree: Path) -> NestedWalk:
    """The bounded walk of `tree` (`git_dirs_in`), with the `.git` pointers it passed and the bound it stopped at;
    the one pinned for the tree (`pinned_walk`) when there is one, which it unpins."""
    top = os.path.realpath(tree)
    if top in _PINNED:
        return _PINNED.pop(top)
    found: dict[Path, None] = {}
    pointers: list[Path] = []
    pointed_at: set[str] = set()    # where a `.git` file or link leads: a git directory git is told to use
    held: set[str] = set()          # folders in a trusted git directory's `modules/` or `worktrees/`
    seen, stopped = 0, ""
    for folder, dirs, names in walk_tree(top, breadth_first=True):
        seen += len(dirs) + len(names)
        if _is_git_dir(dirs, names):
            _add(found, Path(folder))
            if os.path.basename(folder) == ".git" or folder in pointed_at or folder in held:
                dirs[:] = [name for name in dirs if name not in GIT_OWN]
                held.update(os.path.join(folder, name) for name in ("modules", "worktrees") if name in dirs)
        elif folder in held:                # a submodule's name may hold a `/`: its git directory lies deeper
            held.update(os.path.join(folder, name) for name in dirs)
        if ".git" in dirs:                  # named where it is seen: its own folder may lie past the bounds
            _add(found, Path(folder, ".git"))
        elif ".git" in names:
            pointers.append(Path(folder, ".git"))
            target = _pointed_at(Path(folder, ".git"))
            if target is not None:
                _add(found, target)
                pointed_at.add(str(target))
        if len(Path(folder).relative_to(top).parts) >= MAX_WALK_DEPTH and dirs:
            dirs[:] = []
            stopped = stopped or f"{MAX_WALK_DEPTH} folders deep"
        if seen >= MAX_WALK_ENTRIES or len(found) >= MAX_GIT_DIRS:
            stopped = f"{MAX_WALK_ENTRIES} entries" if seen >= MAX_WALK_ENTRIES else f"{MAX_GIT_DIRS} git directories"
            break
    return NestedWalk(list(found)[:MAX_GIT_DIRS], pointers, stopped)


@contextmanager
def pinned_walk(tree: Path, found: NestedWalk) -> Iterator[None]:
    """`found`, a walk of `tree` taken once, given to the next look at the tree (`nested_walk`) while the block
    runs, once: the cycle's guard watches what it found, and the box made next for the agent strips the same
    configs, with one walk of a tree that may hold a vast `node_modules`. Once, because the agent changes the tree
    once it runs: the command backend's box is made before its agent starts; the SDK backend's first command box
    after its file tools may have run, which write no `.git` (gitmem.confined.files) and move no folder, so no
    git directory of the human's is anywhere else; every later box walks the tree as the agent left it."""
    top = os.path.realpath(tree)
    _PINNED[top] = found
    try:
        yield
    finally:
        _PINNED.pop(top, None)


def _is_git_dir(dirs: list[str], names: list[str]) -> bool:
    """A folder git takes for a git directory, by its entries: a HEAD, and objects of its own or a `commondir`
    that names where they are (a linked tree's folder, `worktrees/<name>/`)."""
    return "HEAD" in names and ("objects" in dirs or "commondir" in names)


def _pointed_at(dot_git: Path) -> Path | None:
    """The git directory a `.git` link or `gitdir:` file leads to (real path), or None."""
    if dot_git.is_symlink():
        target = os.path.realpath(dot_git)
        return Path(target) if os.path.isdir(target) else None
    line = _first_line(dot_git)
    if line is None or not line.startswith(POINTER) or not line[len(POINTER):].strip():
        return None
    target = os.path.realpath(dot_git.parent / line[len(POINTER):].strip())
    return Path(target) if os.path.isdir(target) else None


def _add(found: dict[Path, None], git_dir: Path) -> None:
    """`git_dir` and the common directory its `commondir` names (a linked tree's, a worktree's folder's), each
    one only when it holds a config file: one without holds nothing to strip, and is not counted."""
    common = _first_line(git_dir / "commondir")
    place = os.path.realpath(git_dir / common) if common else ""
    for folder in (git_dir, Path(place) if place and os.path.isdir(place) else None):
        if folder is not None and any(os.path.isfile(folder / name) for name in CONFIG_NAMES):
            found.setdefault(folder, None)


def _first_line(path: Path) -> str | None:
    """The first line of the regular file `path`, stripped, read no further than POINTER_BYTES; None when there
    is none. Never another kind of file: a FIFO the agent left would hold the walk forever (bounded_read)."""
    head = read_bounded(path, POINTER_BYTES)
    if head is None:
        return None
    try:
        return head.decode("utf-8").splitlines()[0].strip() if head.strip() else ""
    except UnicodeDecodeError:
        return None
