"""Where an entry of fleet.yaml reads, the same however it is spelt: what GM932 (gitmem.fleet.duplicates) compares
to know that two entries are one agent. Everything here is known offline; what is not is never claimed the same.

- The repository. A folder on this machine by its identity on disk (device and inode), whether fleet.yaml gives
  it as a path (`./a`, `a/`, `~/a`, a link to it, another case of it where the disk ignores case) or as a
  `file://` URL (`file:///abs/a`, `file://localhost/abs/a`, %-escapes): git reads every one of them as that
  folder, and ignores a file URL's host. A GitHub repository by its owner/name (GitHub ignores case; https, ssh
  and `git@host:` alike); another URL by its host and its path without `.git`.
- The branch the fleet reads of it. A path is read as it is checked out, so its branch is the folder's HEAD; a
  `file://` URL without `branch:` reads the folder's HEAD too, and with `branch:` that branch's newest successor
  (`gitmem.gitio.newest_successor`, as the fetch follows it). So `./a` and `file:///abs/a` with `branch: main`
  are one agent where a's HEAD is main, and two where it is another branch. A remote's default branch is known
  only to the remote: `branch: main` and no `branch:` of one GitHub repository may be one branch or two, and
  are not refused (`branch` None stands for "the remote's default", equal only to itself).
- The memory folder each workspace name reaches, where the repository's gitmem.yaml is on this machine. A
  workspace name is a key of gitmem.yaml's `workspaces:`, which gitmem matches exactly everywhere (`--workspace
  Docs` is GM929 where only `docs` is defined, on any disk), so `docs` and `Docs` are two workspaces unless
  their `memory_dir`s are one folder (`d` and `./d/`; `d` and `D` where the disk ignores case): then they are
  one memory under two names, and one agent.
"""
from __future__ import annotations

import os
import posixpath
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from urllib.parse import unquote, urlsplit

from gitmem import gitio
from gitmem.errors import GitmemError


@dataclass(frozen=True)
class Place:
    """Where an entry reads. Its repository costs a `stat` at most; its branch and its workspaces' folders, which
    open the repository and its gitmem.yaml, are read only when asked: only for entries of a repository that
    another entry reads too (a fleet of a thousand different folders opens none of them)."""

    repository: tuple[object, ...]
    given: str | None                      # fleet.yaml's `branch:`
    folder: Path | None = None             # the repository's folder on this machine; None: a remote
    checked_out: bool = False              # read as it is checked out (a path), not fetched (a URL)

    @cached_property
    def _read(self) -> tuple[str | None, Mapping[str, object]]:
        if self.folder is None:
            return self.given, {}
        return _on_disk(self.folder, self.given, checked_out=self.checked_out)

    @property
    def branch(self) -> str | None:
        """The branch the fleet reads; None: a remote's default, not known offline (equal only to itself)."""
        return self._read[0]

    def one_memory(self, workspace: str | None, other: str | None) -> bool:
        """Whether two workspaces of this place are one memory: no workspace is every workspace; one name is one
        workspace; two names are one where both reach one folder (known only where gitmem.yaml is at hand)."""
        if workspace is None or other is None or workspace == other:
            return True
        folders = self._read[1]
        folder = folders.get(workspace)
        return folder is not None and folder == folders.get(other)


def entry_place(repo: str, branch: str | None, *, local: Path | None, github: str | None, scp: bool) -> Place:
    """The place of an entry of `repo` and `branch`. `local`: where a local path leads (None for a URL);
    `github`: the URL's owner/name on GitHub; `scp`: whether the URL is git's `user@host:path` form."""
    if local is not None:
        return Place(("local", *directory_identity(local)), branch, local, checked_out=True)
    if github is not None:
        return Place(("github", github.casefold()), branch)
    if scp:
        host, _, rest = repo.partition("@")[2].partition(":")
        return Place(("url", host.casefold(), rest.strip("/").removesuffix(".git")), branch)
    parts = urlsplit(repo)
    if parts.scheme == "file":
        folder = Path(unquote(parts.path))
        return Place(("local", *directory_identity(folder)), branch, folder)
    host = (parts.hostname or "") + (f":{parts.port}" if parts.port else "")
    return Place(("url", host.casefold(), parts.path.strip("/").removesuffix(".git")), branch)


def directory_identity(path: Path) -> tuple[object, ...]:
    """A directory as the disk knows it (device and inode), whatever names lead to it; its absolute path, folded
    as the platform folds names, when it cannot be read (then it cannot be read as an agent either)."""
    try:
        found = os.stat(path)
    except (OSError, ValueError):
        return ("path", os.path.normcase(os.path.abspath(path)))
    return ("inode", found.st_dev, found.st_ino)


def _on_disk(path: Path, branch: str | None, *, checked_out: bool) -> tuple[str | None, dict[str, object]]:
    """(the branch read, each workspace's folder) of a repository on this machine, read as it is checked out
    (`checked_out`: a path) or fetched at `branch` (a `file://` URL: None is its HEAD). A folder that is no
    repository is `branch` and no folders: it cannot be read, and two spellings of it are still one entry."""
    try:
        repo = gitio.open_repo(path)
    except (GitmemError, OSError, ValueError):
        return branch, {}
    head = gitio.current_branch(repo) or "HEAD"
    if checked_out or branch is None:
        read = head
    else:
        names = [name.removeprefix("refs/heads/") for name in gitio.references(repo, "refs/heads/")]
        found = gitio.newest_successor(names, branch)
        read = found or (head if branch == gitio.MEMORY_BRANCH else branch)
    return read, _folders(repo, read, checked_out=checked_out)


def _folders(repo: gitio.Repo, branch: str, *, checked_out: bool) -> dict[str, object]:
    """Each workspace of the repository's gitmem.yaml (the work tree's for a path, the branch's for a URL) by the
    folder its memory_dir reaches: its identity on disk where the repository has a work tree, else its path
    in the tree, normalised. Empty where gitmem.yaml cannot be read: names are then compared as they are."""
    from gitmem.config import load_config, parse_config

    top = gitio.work_tree(repo)
    try:
        if checked_out:
            if top is None:
                return {}
            config = load_config(top)
        else:
            tip = gitio.resolve_revision(repo, branch if branch == "HEAD" else f"refs/heads/{branch}")
            data = gitio.file_at(repo, tip, "gitmem.yaml")
            if data is None:
                return {}
            config = parse_config(data, strict=False)
    except (GitmemError, OSError, ValueError, KeyError):
        return {}
    folders = {name: posixpath.normpath(workspace.memory_dir) for name, workspace in config.workspaces}
    return {name: directory_identity(top / folder) if top is not None else ("tree", folder)
            for name, folder in folders.items()}
