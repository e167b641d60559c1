"""A copy of the index that takes chosen tracked files as unchanged: `unchanged_tracked`, `index_assuming_unchanged`.

A view of the work tree may show other bytes at a tracked path than the file holds (the box shows a config
file that .git/config includes without its credentials: gitmem.agents.box_git_config). git would hash what it
is shown and report the file modified. A copy of the index whose entry for that path carries git's
assume-unchanged bit makes git take it as the index has it, as git outside does: `git status` and `git diff
HEAD` say what they say outside, and every other file is compared as always.

The copy is written by `git update-index` against a scratch git directory of its own: the repository's config
may include a tracked file the agent wrote (a `core.hooksPath`, a `core.fsmonitor`), and nothing of it is read.
"""
from __future__ import annotations

import os
import subprocess
import tempfile
from collections.abc import Iterable
from pathlib import Path

import pygit2
from pygit2.enums import FileStatus

from gitmem.gitio.repository import Repo, config_value, git_dir, work_tree

INDEX_COPY_SECONDS = 10.0
# What makes a path's work-tree file other than the index has it (or not the index's at all).
_NOT_AS_INDEXED = (FileStatus.WT_NEW | FileStatus.WT_MODIFIED | FileStatus.WT_DELETED | FileStatus.WT_TYPECHANGE
                   | FileStatus.WT_RENAMED | FileStatus.WT_UNREADABLE | FileStatus.IGNORED | FileStatus.CONFLICTED)


def unchanged_tracked(repo: Repo, paths: Iterable[str]) -> list[str]:
    """The repo-relative paths (`/`-separated) of `paths` (real paths) that lie in the work tree, outside the git
    directory, and that the index tracks with the work tree's file as the index has it (git's own reading,
    filters and line endings included)."""
    tree = work_tree(repo)
    if tree is None:
        return []
    top, inside = Path(os.path.realpath(tree)), Path(os.path.realpath(git_dir(repo)))
    found: list[str] = []
    for path in paths:
        place = Path(path)
        if not place.is_relative_to(top) or place.is_relative_to(inside):
            continue
        rel = place.relative_to(top).as_posix()
        try:
            tracked = rel in repo.raw.index
            flags = repo.raw.status_file(rel) if tracked else FileStatus.WT_NEW
        except (KeyError, ValueError, OSError, pygit2.GitError):
            continue
        if not flags & _NOT_AS_INDEXED:
            found.append(rel)
    return found


def index_assuming_unchanged(repo: Repo, rels: list[str]) -> bytes | None:
    """The bytes of a copy of the repository's index with `rels` taken as unchanged (assume-unchanged), or None
    where there is none to copy or git cannot write it (a split index, whose other half stays in the git
    directory)."""
    index = git_dir(repo) / "index"
    if not rels or not index.is_file():
        return None
    object_format = config_value(repo, "extensions.objectformat") or "sha1"
    with tempfile.TemporaryDirectory(prefix="gitmem-index-") as scratch:
        place = Path(scratch)
        (place / "tree").mkdir()
        bare = {"PATH": os.environ.get("PATH", os.defpath), "LC_ALL": "C", "HOME": scratch,
                "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull}
        scratch_repo = {**bare, "GIT_DIR": str(place / "git"), "GIT_WORK_TREE": str(place / "tree"),
                        "GIT_INDEX_FILE": str(place / "index")}
        steps = ((["init", "-q", "--bare", "--template=", f"--object-format={object_format}", str(place / "git")],
                  bare),
                 (["update-index", "--no-split-index", "--assume-unchanged", "--", *rels], scratch_repo))
        try:
            (place / "index").write_bytes(index.read_bytes())
            for argv, env in steps:
                done = subprocess.run(["git", *argv], cwd=place / "tree", env=env, capture_output=True,
                                      timeout=INDEX_COPY_SECONDS, check=False)
                if done.returncode != 0:
                    return None
            return (place / "index").read_bytes()
        except (OSError, subprocess.SubprocessError):
            return None
