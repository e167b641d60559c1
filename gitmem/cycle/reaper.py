"""Every process the agent started ends when the cycle ends: not only on timeout, and not only its process group.

On Linux the runner becomes a child subreaper (prctl PR_SET_CHILD_SUBREAPER) for the length of the agent's
run, so a helper the agent started that left its process group or session (`setsid`, a double fork) is
re-parented to the runner instead of to init. When the agent is done, every process that descends from the
runner and was not there before is stopped (SIGSTOP, so none can fork away), killed and reaped. A process that
cannot be killed (another user's, after a setuid exec) is a survivor, and the cycle reports it.

Where prctl is not available (macOS, Windows), only the agent's own process group can be ended, and the
report says that helpers which left it could not be tracked.
"""
from __future__ import annotations

import ctypes
import ctypes.util
import functools
import os
import signal
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

PR_SET_CHILD_SUBREAPER = 36
PR_GET_CHILD_SUBREAPER = 37
PR_SET_DUMPABLE = 4
PR_GET_DUMPABLE = 3
PROC = Path("/proc")


@dataclass(frozen=True)
class Process:
    pid: int
    ppid: int
    state: str
    command: str

    def describe(self) -> str:
        return f"pid {self.pid} ({self.command or '?'})"


@functools.cache
def _libc() -> ctypes.CDLL:
    """libc, found once per process: ctypes.util.find_library starts a process (`ldconfig -p`) on every call,
    and a cycle asks for prctl six times."""
    return ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)


def _prctl(option: int, value: int) -> int | None:
    """prctl(2) through libc; None where there is no prctl."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        result = int(_libc().prctl(option, value, 0, 0, 0))
    except (OSError, AttributeError):
        return None
    return result if result >= 0 else None


def processes() -> dict[int, Process]:
    """Every process /proc shows (empty where there is no /proc)."""
    found: dict[int, Process] = {}
    try:
        names = os.listdir(PROC)
    except OSError:
        return found
    for name in names:
        if not name.isdigit():
            continue
        raw = _stat(name)
        if raw is None:
            continue
        head, _, rest = raw.rpartition(b")")
        fields = rest.split()
        if len(fields) < 2:
            continue
        command = head.partition(b"(")[2].decode("utf-8", "replace")
        found[int(name)] = Process(int(name), int(fields[1]), fields[0].decode("ascii", "replace"), command)
    return found


def _stat(pid: str) -> bytes | None:
    """/proc/PID/stat, or None when that process is gone. Read with one open and one read: a cycle looks at
    every process on the machine several times, and a busy runner has hundreds (pathlib's text reading was
    most of a cycle's own CPU time there)."""
    try:
        handle = os.open(f"{PROC}/{pid}/stat", os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        return os.read(handle, 4096)         # the whole line: the kernel writes it in one read (under 1 KiB)
    except OSError:
        return None
    finally:
        os.close(handle)


def descendants(root: int, table: dict[int, Process] | None = None) -> list[Process]:
    table = processes() if table is None else table
    children: dict[int, list[Process]] = {}
    for proc in table.values():
        children.setdefault(proc.ppid, []).append(proc)
    found: list[Process] = []
    todo = [root]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child.pid)
    return found


@dataclass
class Reaper:
    """Use around the agent's run: `start()` before, `finish()` after (always, in a finally)."""

    before: set[int] = field(default_factory=set)
    subreaper: bool = False
    was_subreaper: bool = False      # a supervisor made the runner one already: leave it so
    protected_environ: bool = False
    messages: list[str] = field(default_factory=list)

    def start(self) -> Reaper:
        self.before = {p.pid for p in descendants(os.getpid())}
        self.was_subreaper = _was_subreaper()
        self.subreaper = _prctl(PR_SET_CHILD_SUBREAPER, 1) == 0
        # Not dumpable: the agent (same user) cannot read the runner's environment (its tokens) from /proc.
        self.protected_environ = _prctl(PR_GET_DUMPABLE, 0) == 1 and _prctl(PR_SET_DUMPABLE, 0) == 0
        return self

    def finish(self, grace: float = 2.0) -> list[str]:
        """End what the agent left running; return one line per survivor (empty when none survived)."""
        me = os.getpid()
        try:
            left = [p for p in descendants(me) if p.pid not in self.before and p.state != "Z"]
            for sig in (signal.SIGSTOP, signal.SIGKILL):
                for proc in left:
                    _signal(proc.pid, sig)
            for proc in left:
                _signal(proc.pid, signal.SIGCONT)
            deadline = time.monotonic() + grace
            while True:
                _reap(me, self.before)
                alive = [p for p in left if _alive(p.pid)]
                new = [p for p in descendants(me) if p.pid not in self.before and p.state != "Z"
                       and p.pid not in {q.pid for q in left}]
                for proc in new:          # forked while being stopped: end those too
                    _signal(proc.pid, signal.SIGKILL)
                left += new
                if not alive and not new or time.monotonic() > deadline:
                    break
                time.sleep(0.05)
            _reap(me, self.before)
            survivors = [p for p in left if _alive(p.pid)]
        finally:
            if self.subreaper and not self.was_subreaper:
                _prctl(PR_SET_CHILD_SUBREAPER, 0)
            if self.protected_environ:
                _prctl(PR_SET_DUMPABLE, 1)
        lines = [f"{len(survivors)} process(es) the agent started survived the end of the cycle: "
                 + ", ".join(p.describe() for p in survivors)] if survivors else []
        if left and len(left) > len(survivors):
            self.messages.append(f"ended {len(left) - len(survivors)} process(es) the agent left running: "
                                 + ", ".join(p.describe() for p in left[:5] if p not in survivors)
                                 + (" …" if len(left) > 5 else ""))
        if not self.subreaper:
            self.messages.append("this system has no child subreaper (prctl): helpers the agent started outside "
                                 "its process group could not be tracked")
        return lines


def _was_subreaper() -> bool:
    """PR_GET_CHILD_SUBREAPER writes its answer through a pointer."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        value = ctypes.c_int(0)
        if int(_libc().prctl(PR_GET_CHILD_SUBREAPER, ctypes.byref(value), 0, 0, 0)) != 0:
            return False
    except (OSError, AttributeError):
        return False
    return value.value != 0


def _signal(pid: int, sig: int) -> None:
    try:
        os.kill(pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def _alive(pid: int) -> bool:
    raw = _stat(str(pid))
    fields = raw.rpartition(b")")[2].split() if raw is not None else []
    return bool(fields) and fields[0] not in (b"Z", b"X")


def _reap(me: int, before: set[int]) -> None:
    """Collect the exit status of the runner's own children that ended (never one the runner had before)."""
    for proc in descendants(me):
        if proc.ppid == me and proc.pid not in before:
            try:
                os.waitpid(proc.pid, os.WNOHANG)
            except ChildProcessError:
                pass


def _environ(pid: int) -> list[bytes]:
    """The environment a process started with (/proc/PID/environ), or nothing when it cannot be read (another
    user's, gone, not dumpable)."""
    try:
        return Path(f"{PROC}/{pid}/environ").read_bytes().split(b"\0")
    except OSError:
        return []


def orphaned_agents(root: Path) -> list[Process]:
    """Processes a cycle started in the work tree `root` that outlived it: each holds the cycle's own variables
    (`GITMEM_CYCLE`, and `GITMEM_ROOT` naming `root`) and descends from no live runner. A runner killed outright
    (SIGKILL) never ends its agent, which runs in a process group of its own and is re-parented away. Only
    meaningful with the cycle lock held: no other cycle then runs in `root`."""
    me = os.getpid()
    table = processes()
    mine = {me, *(p.pid for p in descendants(me, table))}
    wanted = b"GITMEM_ROOT=" + os.fsencode(str(root))
    found = []
    for proc in table.values():
        if proc.pid in mine or proc.state in ("Z", "X"):
            continue
        environ = _environ(proc.pid)
        if wanted in environ and any(item.startswith(b"GITMEM_CYCLE=") for item in environ):
            found.append(proc)
    return found


def end_orphans(found: list[Process]) -> list[Process]:
    """Stop, then kill `found` (none can fork away while stopped); returns those still alive after a moment."""
    for sig in (signal.SIGSTOP, signal.SIGKILL):
        for proc in found:
            _signal(proc.pid, sig)
    deadline = time.monotonic() + 2.0
    while any(_alive(p.pid) for p in found) and time.monotonic() < deadline:
        time.sleep(0.05)
    return [p for p in found if _alive(p.pid)]
