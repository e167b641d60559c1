"""One memory write at a time per repository: an advisory lock on `.git/gitmem/write.lock`.

Every memory write reads a file, allocates an id or a cycle number from it, and writes it back; two writers
doing that at once would both take the same id and the second would drop the first's entry. The lock is held
across the whole read-modify-write. It is `flock(2)`, not a pid file like the cycle lock: the kernel releases
it when its holder dies, so a killed writer never leaves it behind, and nothing has to judge staleness.

It is a different file from the cycle lock, and the runner never holds it while its agent runs: an agent that
calls `gitmem log add` during a cycle waits for no one but other writers. Within one process the lock is
reentrant (a write that makes another write, the runner's postflight around its own writes), and threads take
turns. A writer that cannot get it within `wait` seconds fails with `WritesBusy`: never a silent loss.
"""
from __future__ import annotations

import fcntl
import os
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from gitmem.confined.files import mode_allows, os_reason
from gitmem.errors import ExitCode, GitmemError
from gitmem.workspace.statedir import StateDirError, state_directory, unusable

WRITE_LOCK = "write.lock"
WAIT_SECONDS = 10.0          # long enough for a queue of writers, short enough that a stuck one is reported
_POLL = 0.02


class WritesBusy(GitmemError):
    """Another process held the memory write lock for longer than the wait; nothing was written. `path`: the lock
    file."""

    exit_code = ExitCode.DIRTY

    def __init__(self, message: str, path: Path) -> None:
        super().__init__(message)
        self.path = path


@dataclass
class _Holder:
    """This process's hold on one lock file: the open descriptor and how deeply it is re-entered."""

    turn: threading.RLock = field(default_factory=threading.RLock)
    fd: int | None = None
    depth: int = 0


_holders: dict[Path, _Holder] = {}
_registry = threading.Lock()


def _holder(path: Path) -> _Holder:
    with _registry:
        return _holders.setdefault(path, _Holder())


def lock_file(state_dir: Path) -> Path:
    """The lock file, created empty when missing. The cycle's guard creates it before the agent starts, so
    that a write of the agent's finds it there and the guard has nothing to put back."""
    path = state_directory(state_dir) / WRITE_LOCK
    os.close(_open(path))
    return path


@contextmanager
def held(state_dir: Path | None, *, wait: float = WAIT_SECONDS) -> Iterator[None]:
    """Hold the write lock of the repository whose state directory is `state_dir` (no lock when None: a tree
    that is not a git work tree has no state directory, and no one else writes it through gitmem)."""
    if state_dir is None:
        yield
        return
    path = lock_file(state_dir)
    holder = _holder(path)
    deadline = time.monotonic() + wait
    if not holder.turn.acquire(timeout=max(wait, 0.0)):
        raise _busy(path, wait)
    try:
        if holder.depth == 0:
            holder.fd = _take(path, deadline, wait)
        holder.depth += 1
        try:
            yield
        finally:
            holder.depth -= 1
            if holder.depth == 0 and holder.fd is not None:
                os.close(holder.fd)         # closing the descriptor releases the flock
                holder.fd = None
    finally:
        holder.turn.release()


def _open(path: Path) -> int:
    """The lock file, opened without following a link (anything else there is reported, never used)."""
    flags = os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | getattr(os, "O_NOFOLLOW", 0)
    try:
        return os.open(path, flags, 0o644)
    except OSError as err:
        if os_reason(err, mode_allows=mode_allows(path)) is not None:     # a read-only `.git`, a full disk,
            # a sandbox: removing the lock would not help
            raise unusable(path, err) from None
        raise StateDirError(f"{path} cannot be opened as gitmem's write lock ({err.strerror}); remove it "
                            f"(`rm -r {path}`) and run the command again") from None


def _take(path: Path, deadline: float, wait: float) -> int:
    fd = _open(path)
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return fd
        except BlockingIOError:
            if time.monotonic() >= deadline:
                os.close(fd)
                raise _busy(path, wait) from None
            time.sleep(_POLL)
        except OSError:
            os.close(fd)
            raise


def _busy(path: Path, wait: float) -> WritesBusy:
    return WritesBusy(f"memory is busy: another gitmem write held {path} for more than {wait:g}s; nothing was "
                      "written, run the command again", path)
