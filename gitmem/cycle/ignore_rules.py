"""The ignore rules a cycle decides its commit under: the human's, as the cycle's start commit holds them.

What git ignores decides what `git status` lists, and so what the runner holds out, scrubs, proposes and
commits. An agent that writes `*` into a `.gitignore` (at the top or in any folder) would hide its other files
from those steps; the ignore file, a protected path, is then put back, and the files it hid come into view
for the commit, unjudged. So every step that lists the cycle's changes lists them under the human's rules:
for that look, each `.gitignore` in the work tree is the start commit's (or absent where it has none), and
the agent's versions wait in `.git/gitmem/aside/` and are put back right after. The other sources of ignore
rules (`.git/info/exclude`, `core.excludesFile` and the config that names it) are git state the cycle's
guard has already put back (gitmem.cycle.gitstate). A runner killed during the look leaves the human's ignore
files in the tree and the agent's versions in that folder: nothing is lost.
"""
from __future__ import annotations

import os
import shutil
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from gitmem import gitio
from gitmem.agents.protected import fold_component
from gitmem.confined import files
from gitmem.confined.walk import walk_tree
from gitmem.workspace.statedir import state_directory

IGNORE_FILE = ".gitignore"
ASIDE_DIR = "aside"          # under .git/gitmem/: the agent's ignore files while the human's rules are in place


def is_ignore_file(path: str) -> bool:
    """Named `.gitignore` as a case-insensitive file system sees the name (`.GITIGNORE` is read there)."""
    return fold_component(path.rstrip("/").rsplit("/", 1)[-1]) == IGNORE_FILE


def changed_ignore_files(repo: gitio.Repo, start: dict[str, bytes], skip: tuple[str, ...]) -> dict[str, bytes | None]:
    """The ignore files the work tree holds otherwise than `start` (path -> bytes as the start commit has
    them): path -> the start commit's bytes, None where it has none. Folders in `skip` (ignored when the
    cycle started: git reads no ignore file inside them), nested repositories and links are not entered."""
    root = gitio.root(repo)
    found: dict[str, bytes | None] = {}
    for rel in _ignore_files_in(root, skip):
        before = start.get(rel)
        if before is None or _content(repo, rel) != before:
            found[rel] = before
    for rel, before in start.items():
        if rel not in found and _content(repo, rel) != before and _parent_is_folder(root, rel):
            found[rel] = before
    return found


@contextmanager
def human_rules(repo: gitio.Repo, changed: dict[str, bytes | None]) -> Iterator[None]:
    """For the duration, each of `changed` is what the start commit holds there; the agent's versions back
    afterwards, whatever happens inside."""
    if not changed:
        yield
        return
    root = gitio.root(repo)
    aside = state_directory(gitio.state_dir(repo)) / ASIDE_DIR / f"ignore-{os.getpid()}"
    aside.mkdir(parents=True, exist_ok=True)
    moved: list[tuple[str, Path]] = []
    written: list[str] = []
    try:
        for number, (rel, before) in enumerate(sorted(changed.items())):
            if not _parent_is_folder(root, rel):
                continue
            if os.path.lexists(root / rel):
                kept = aside / str(number)
                shutil.move(root / rel, kept)        # a rename; a copy where .git is on another file system
                moved.append((rel, kept))
            if before is not None:
                files.write_bytes(root, rel, before)
                written.append(rel)
        yield
    finally:
        for rel in written:
            os.unlink(root / rel)
        for rel, kept in moved:
            shutil.move(kept, root / rel)
        shutil.rmtree(aside, ignore_errors=True)


def _ignore_files_in(root: Path, skip: tuple[str, ...]) -> Iterator[str]:
    for folder, dirs, names in walk_tree(root):
        rel_folder = Path(folder).relative_to(root).as_posix()
        prefix = "" if rel_folder == "." else f"{rel_folder}/"
        dirs[:] = [d for d in dirs if d != ".git" and f"{prefix}{d}/" not in skip
                   and not os.path.lexists(os.path.join(folder, d, ".git"))]
        yield from (f"{prefix}{name}" for name in [*names, *dirs] if is_ignore_file(name))


def _content(repo: gitio.Repo, rel: str) -> bytes | None:
    """A regular file's bytes as git would store them (a CRLF checkout of the start commit's file is that file);
    None when absent; a marker that equals no content for anything else."""
    root = gitio.root(repo)
    if not _parent_is_folder(root, rel):
        return None
    try:
        info = os.lstat(root / rel)
    except OSError:
        return None
    if not stat.S_ISREG(info.st_mode):
        return b"\0not a regular file"
    try:
        data = files.read_bytes(root, rel)
    except (OSError, files.FileRefused):
        return b"\0unreadable"
    return gitio.stored_bytes(repo, rel, data) if data is not None else None


def _parent_is_folder(root: Path, rel: str) -> bool:
    parent = (root / rel).parent
    return files.plain_way(root, rel) and parent.is_dir()
