"""Room on the repository's disk for the runner to finish a cycle, kept while the agent runs.

An agent can fill the disk (it writes as the same user, on the same file system). Then nothing after it could be
written: not the fresh index, the no-build entry, the salvage branch or the commit, and a cycle failed with a
traceback and no record. So before the agent runs, the runner allocates a file of real blocks (posix_fallocate,
not a sparse file) and gives it up when the agent is done: what the agent filled, the runner gets back. The room
is the runner's alone: a file with no name in the git directory (O_TMPFILE), held open until it is given back;
where the file system cannot make one, a named file in the git directory itself, still held open. Never in
`.git/gitmem/`, which the box lets the agent write: an agent that removed or truncated the room there, then
filled the disk, left the runner no room at all. It is as large as the memory files together, which a writer
rewrites whole through a temporary file, plus MARGIN. When it cannot be allocated the disk is already too full to
finish a cycle, and the agent does not run. A write that still meets a full disk (the agent's own files took
more than the room) is a DiskFull failure, never a traceback: the runner salvages what it can write, and what it
cannot stays in the work tree.
"""
from __future__ import annotations

import errno
import os
import shutil
import stat
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from gitmem import codes, gitio
from gitmem.errors import ExitCode, RunFailure
from gitmem.workspace import Workspace

MARGIN = 8 << 20
NAME = "gitmem-room"         # the named fallback, in the git directory (read-only in the box)
FULL = (errno.ENOSPC, errno.EDQUOT)
FULL_TEXT = tuple(os.strerror(number) for number in FULL)     # libgit2 and git say it in words only


class DiskFull(RunFailure):
    """The repository's disk was full before the agent ran, or when the runner wrote after it."""

    exit_code = ExitCode.SALVAGED

    def __init__(self, message: str, *, where: str) -> None:
        super().__init__(message, code=codes.CYCLE_DISK_FULL, where=where)


def is_disk_full(err: BaseException) -> bool:
    """Whether `err` (an OSError, or a git command's error quoting it) says the disk or the quota is full."""
    if isinstance(err, OSError) and err.errno in FULL:
        return True
    said = f"{err} {getattr(err, 'output', '')}"
    return any(text in said for text in FULL_TEXT)


def short_of_room(root: Path, paths: Iterable[str]) -> bool:
    """Whether the disk holding `root` has less free space than the largest of the regular files `paths`
    needs, uncompressed: a write that failed then failed for room, even where the library lost the errno
    (libgit2 says "no error" when a loose object cannot be written)."""
    try:
        free = shutil.disk_usage(root).free
    except OSError:
        return False
    largest = 0
    for rel in paths:
        try:
            found = os.lstat(root / rel.rstrip("/"))
        except OSError:
            continue
        if stat.S_ISREG(found.st_mode):
            largest = max(largest, found.st_size)
    return free < largest


def full_failure(err: BaseException, doing: str, repo: gitio.Repo) -> DiskFull:
    """The DiskFull for `err` met while `doing`, saying what to do; at the git directory, whose disk is full."""
    return DiskFull(f"the disk is full ({' '.join(str(err).split())[-200:]}) while the runner was {doing}: free "
                    "space (`git status` shows the agent's new files; `du -sh .git`), then run the cycle again",
                    where=gitio.shown_path(repo, gitio.common_dir(repo)))


@dataclass
class Room:
    descriptor: int | None          # the room, held open: removing its name frees nothing
    path: Path | None = None        # its name, for the fallback that has one

    @classmethod
    def keep(cls, ws: Workspace) -> Room:
        """Allocate the room; DiskFull when the disk cannot give it (nothing is left behind)."""
        size = MARGIN + sum(_size(ws.root / rel) for rel in ws.config.memory_paths().values())
        folder = gitio.common_dir(ws.repo)
        descriptor, path = None, None
        try:
            descriptor, path = _open(folder)
            os.posix_fallocate(descriptor, 0, size)
        except OSError as err:
            cls(descriptor, path).release()
            if is_disk_full(err):
                raise DiskFull(f"the disk holding {ws.root} has less than the {size >> 20} MB free a cycle needs "
                               "to finish whatever its agent does (the memory files, rewritten, and a margin), so "
                               "the agent did not run: free space and run the cycle again",
                               where=gitio.shown_path(ws.repo, folder)) from None
            return cls(None)       # a file system that cannot preallocate, say: no room kept; DiskFull may follow
        return cls(descriptor, path)

    def release(self) -> None:
        """Give the room back, for the runner's own writes after the agent."""
        if self.path is not None:
            _unlink(self.path)
            self.path = None
        if self.descriptor is not None:
            os.close(self.descriptor)
            self.descriptor = None


def _open(folder: Path) -> tuple[int, Path | None]:
    """A new file in `folder` for the room: nameless where the file system can make one, else named NAME."""
    nameless = getattr(os, "O_TMPFILE", 0)          # Linux only
    if nameless:
        try:
            return os.open(folder, nameless | os.O_WRONLY, 0o600), None
        except OSError as err:
            if err.errno not in (errno.EOPNOTSUPP, errno.EISDIR, errno.EINVAL, errno.ENOENT):
                raise
    path = folder / NAME
    return os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600), path


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


def _unlink(path: Path) -> None:
    try:
        path.unlink()
    except OSError:
        pass
