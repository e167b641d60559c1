"""One cycle at a time per repository: a lock file in the state directory (.git/gitmem/) naming the pid, host
and start time.

A lock left by a process that no longer exists (kill -9, a crash, a reboot) is stale: it is cleared, and
the caller is told what was found so it can explain leftovers to the user.
"""
from __future__ import annotations

import json
import os
import socket
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from gitmem.config.nesting import loads_json
from gitmem.errors import ExitCode, GitmemError

if TYPE_CHECKING:
    from gitmem.gitio import Repo

LOCK_NAME = "cycle.lock"


class LockHeld(GitmemError):
    """Another live cycle holds the lock; the message says who and how to proceed. `path`: the lock file; `holder`:
    who holds it, when the lock says."""

    exit_code = ExitCode.DIRTY

    def __init__(self, message: str, path: Path, holder: LockInfo | None = None) -> None:
        super().__init__(message)
        self.path = path
        self.holder = holder

    @property
    def holder_named(self) -> str:
        """The holder as a message names it: `the cycle pid 12 on box, started …`, or `another cycle`."""
        return f"the {self.holder.describe()}" if self.holder is not None else "another cycle"


@dataclass(frozen=True)
class LockInfo:
    pid: int
    host: str
    started: str
    what: str = "cycle"

    def describe(self) -> str:
        return f"{self.what} pid {self.pid} on {self.host}, started {self.started}"


@dataclass
class Lock:
    path: Path
    info: LockInfo
    stale: LockInfo | None = None      # the dead holder whose lock was cleared to take this one

    def release(self) -> None:
        """Remove the lock if it is still ours (a stale-lock clearer elsewhere may have taken it)."""
        current = read_lock(self.path)
        if current is not None and (current.pid, current.host) != (self.info.pid, self.info.host):
            return
        try:
            self.path.unlink()
        except FileNotFoundError:
            pass

    def __enter__(self) -> Lock:
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


def lock_path(state_dir: Path) -> Path:
    return state_dir / LOCK_NAME


def read_lock(path: Path) -> LockInfo | None:
    """The holder recorded in the lock; an unreadable lock (killed while writing it) reads as pid 0."""
    from gitmem.workspace.statedir import StateDirError

    try:
        raw = path.read_bytes().decode("utf-8", "replace")
    except FileNotFoundError:
        return None
    except OSError as err:
        if err.errno is None:
            raise
        raise StateDirError(f"{path} is not a lock file gitmem can read ({err.strerror}); remove it "
                            f"(`rm -r {path}`) and run the command again") from None
    try:
        data = loads_json(raw)
        return LockInfo(int(data["pid"]), str(data["host"]), str(data["started"]), str(data.get("what", "cycle")))
    except (ValueError, KeyError, TypeError):
        return LockInfo(0, socket.gethostname(), "unknown")


def running(state_dir: Path) -> LockInfo | None:
    """The cycle or close that holds the lock in `state_dir` while it runs (this process, when it is the runner or
    the close; `ours` tells): None when none does, or when its holder died (a stale lock, which the next cycle
    clears). A lock taken on another host counts as held, as `acquire` has it."""
    holder = read_lock(lock_path(state_dir))
    if holder is None or (holder.host == socket.gethostname() and not pid_alive(holder.pid)):
        return None
    return holder


def running_elsewhere(state_dir: Path) -> LockInfo | None:
    """The cycle or close another process runs in this checkout (`running`, but for this process's own): what
    changes in the work tree meanwhile is its agent's, which it commits when it ends."""
    holder = running(state_dir)
    return holder if holder is not None and not ours(holder) else None


def ours(holder: LockInfo) -> bool:
    """Whether this process took the lock `holder` describes."""
    return holder.host == socket.gethostname() and holder.pid == os.getpid()


def pid_alive(pid: int) -> bool:
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:    # it exists, owned by someone else
        return True
    return _not_zombie(pid)


def _not_zombie(pid: int) -> bool:
    """A killed child that its parent has not reaped yet still answers kill(0); /proc tells the truth."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return True
    return fields[0] != "Z"


def acquire(state_dir: Path, *, what: str = "cycle") -> Lock:
    """Take the lock, clearing a stale one. Raises LockHeld when a live process holds it."""
    from gitmem.workspace.statedir import state_directory

    path = lock_path(state_directory(state_dir))
    info = LockInfo(os.getpid(), socket.gethostname(),
                    datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%S UTC"), what)
    stale: LockInfo | None = None
    for _ in range(3):
        try:
            fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
        except FileExistsError:
            holder = read_lock(path)
            if holder is None:
                continue
            if holder.host != socket.gethostname():
                raise LockHeld(f"another {holder.describe()} holds {path}; if no cycle is running on "
                               f"{holder.host}, delete that file and retry", path, holder) from None
            if pid_alive(holder.pid):
                raise LockHeld(f"another {holder.describe()} is running; wait for it to finish "
                               f"(the lock is {path})", path, holder) from None
            stale = holder
            # Re-read just before removing, so a lock a racing runner has just taken is not deleted.
            if read_lock(path) == holder:
                path.unlink(missing_ok=True)
            continue
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump({"pid": info.pid, "host": info.host, "started": info.started, "what": what}, handle)
        return Lock(path, info, stale)
    raise LockHeld(f"could not take {path}: another runner keeps taking it", path)


def git_locks_refusal(repo: Repo) -> str | None:
    """Why a cycle or a close must not start: git's own lock files are there (`gitmem.gitio.lock_files`), so its
    index or branch writes would fail half-way. Each named, with how to clear it; None when there are none."""
    from gitmem import gitio

    found = gitio.lock_files(repo)
    if not found:
        return None
    listing = "\n".join(f"  {item.label}" for item in found)
    removal = " ".join(item.label for item in found[:3])
    return (f"git lock files are there: a git command is running in this checkout, or one was killed and left "
            f"them:\n{listing}\nwhen no git runs here, remove them (rm {removal}), then run it again")
