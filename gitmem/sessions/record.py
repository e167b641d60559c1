"""What the work tree looked like when a session started, so its end can tell what the session changed.

A record holds HEAD, a fingerprint of every dirty file (its path and a hash of its bytes in the work tree, or
a big file's stat data), and the last cycle in LOG. At the end, the session changed files if HEAD moved or the
dirty fingerprint is different; it wrote its LOG entry if LOG's last cycle is newer. Records live in
`.git/gitmem/sessions/`, one small JSON file per session id, and the oldest are pruned: they are disposable.

A session that starts while a cycle or a close runs in the checkout (another process holds the cycle lock) starts
from the committed tree for every path that run may change: what those paths hold uncommitted then is its agent's
work, which it commits (or sets aside) when it ends, so it is neither the session's starting point nor, once
committed, a change of the session's. A cycle starts only from a clean tree and commits every path its agent
changed: all paths are its. A close may start beside the human's uncommitted files and writes only memory files
and LOG's volumes: only those are its, and the human's other files are fingerprinted as ever. While the cycle's
agent itself may act (gitmem.cycle.killed's window), no record is written at all (`guarded`): the runner's guard
puts `.git/gitmem` back after the agent, and would remove it as the agent's. The first hook after the window records
the start: HEAD is the cycle's start again then, the agent's commits moved off the branch.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import stat
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path

from gitmem import gitio
from gitmem.config.nesting import loads_json
from gitmem.confined import files
from gitmem.memory_writer import atomic_write
from gitmem.workspace import Workspace, cyclelock
from gitmem.workspace.statedir import state_directory

KEEP = 50                      # records kept; older ones are pruned when a session starts
# Dirty files up to this size are fingerprinted by their bytes; a bigger one (a dataset, a dump, weights left
# untracked) by its stat data: the hooks run after every assistant turn, and reading gigabytes each time cost
# the session its memory (MemoryError) or the turn its time.
HASHED_MAX = 16 << 20
DELETED = "-"


@dataclass
class SessionRecord:
    session: str
    head: str | None
    dirty: dict[str, str] = field(default_factory=dict)     # path -> sha256 of its work-tree bytes, or DELETED
    last_cycle: int = 0
    blocked: bool = False       # the stop hook already blocked this session once
    during: str = ""            # the cycle or close that ran in the checkout when the session started ("": none)


def folder(ws: Workspace) -> Path | None:
    """`.git/gitmem/sessions/`, both levels real directories: a link planted at either is refused
    (StateDirError), never written through nor pruned, for the folder it names is anyone's."""
    if ws.state_dir is None:
        return None
    return state_directory(state_directory(ws.state_dir) / "sessions")


def _path(ws: Workspace, session: str) -> Path | None:
    base = folder(ws)
    safe = re.sub(r"[^A-Za-z0-9._-]", "_", session)[:100] or "unnamed"
    return base / f"{safe}.json" if base is not None else None


def snapshot_session(ws: Workspace, session: str) -> SessionRecord:
    """The work tree now, as a record for `session`; while a cycle or a close of another process runs, with the
    paths it may change as committed (see the module's docstring)."""
    holder = cyclelock.running_elsewhere(ws.state_dir) if ws.state_dir is not None else None
    if holder is None:
        return SessionRecord(session, gitio.head_id(ws.repo), work_tree_fingerprint(ws), ws.last_log_cycle())
    return SessionRecord(session, gitio.head_id(ws.repo), work_tree_fingerprint(ws, skip=_paths_of(ws, holder)),
                         ws.last_log_cycle(), during=holder.describe())


def guarded(ws: Workspace) -> bool:
    """Whether a cycle's agent may be acting in this checkout now: when it is done, the runner's guard puts
    `.git/gitmem` back as it was when the agent started, so a record written now would be removed, and reported by
    the runner as a change the agent made. The session's start is recorded at its first hook after that."""
    holder = cyclelock.running_elsewhere(ws.state_dir) if ws.state_dir is not None else None
    if holder is None or holder.what != "cycle":
        return False
    # Loaded (with the reaper it needs) only while a cycle runs.
    from gitmem.cycle import killed

    return killed.window_open(ws.repo)


def _paths_of(ws: Workspace, holder: cyclelock.LockInfo) -> Callable[[str], bool]:
    """Whether the running cycle or close may change a path (and commit it as its own when it ends)."""
    if holder.what != "close":           # a cycle starts from a clean tree and commits whatever its agent changed
        return lambda path: True
    from gitmem.memory import volumes

    memory = {path for paths in ws.config.workspace_paths().values() for path in paths.values()}
    log_path = ws.config.path("log")
    return lambda path: path in memory or volumes.volume_number(log_path, path) is not None


def run_killed(ws: Workspace, record: SessionRecord) -> bool:
    """Whether the cycle or close the session started beside died without finishing (kill -9, a crash, a reboot):
    its lock is still there, naming it, with its process gone. What its agent left uncommitted is in the work tree,
    neither committed nor the session's, so the session's start is taken again from there."""
    if not record.during or ws.state_dir is None:
        return False
    holder = cyclelock.read_lock(cyclelock.lock_path(ws.state_dir))
    return holder is not None and holder.describe() == record.during and cyclelock.running(ws.state_dir) is None


def work_tree_fingerprint(ws: Workspace, *, skip: Callable[[str], bool] = lambda path: False) -> dict[str, str]:
    """The state of every dirty file but those `skip` names (read neither: a running cycle's may be gigabytes)."""
    found: dict[str, str] = {}
    for path, _ in gitio.dirty_files(ws.repo):
        if not skip(path):
            found[path] = _state(ws.root / path)
    return found


def _state(path: Path) -> str:
    """A file's state, never following a link nor opening anything but a regular file: a link to /dev/zero or
    to a FIFO would hang the hook, and an unreadable file must not cost the session its context."""
    try:
        info = path.lstat()
        if stat.S_ISLNK(info.st_mode):
            return "link:" + hashlib.sha256(os.fsencode(os.readlink(path))).hexdigest()
        if not stat.S_ISREG(info.st_mode):
            return DELETED if stat.S_ISDIR(info.st_mode) else f"special:{info.st_mode:o}"
    except (FileNotFoundError, NotADirectoryError):
        return DELETED
    if info.st_size > HASHED_MAX:
        return _stat_state(info)
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return f"unreadable:{info.st_size}:{info.st_mtime_ns}"


def _stat_state(info: os.stat_result) -> str:
    """A big file's state as git's index tells changes, by its stat data: size, modification and change times,
    inode. The change time moves with every write and no process can set it back, so an edit made to look old
    is still seen."""
    return f"stat:{info.st_size}:{info.st_mtime_ns}:{info.st_ctime_ns}:{info.st_ino}"


def load_record(ws: Workspace, session: str) -> SessionRecord | None:
    """The session's record; None when there is none, or none that is a small regular file: never through a link,
    never a FIFO (whose open waits for a writer that never comes, and the hook with it)."""
    # Looking makes nothing: a folder made while a cycle's agent may act would be put back as the agent's (`guarded`).
    if ws.state_dir is None or not os.path.lexists(ws.state_dir / "sessions"):
        return None
    path = _path(ws, session)
    try:
        raw = files.read_bytes(path.parent, path.name) if path is not None else None
        data = loads_json(raw.decode("utf-8")) if raw is not None else None
        found = SessionRecord(**data) if isinstance(data, dict) else None
    except (OSError, ValueError, TypeError, files.FileRefused):
        return None
    return found if found is not None and _well_formed(found) else None


def _well_formed(record: SessionRecord) -> bool:
    """A record edited or damaged by hand is no record: the stop hook compares its fields as these types."""
    return (isinstance(record.session, str) and (record.head is None or isinstance(record.head, str))
            and isinstance(record.dirty, dict) and all(isinstance(v, str) for v in record.dirty.values())
            and type(record.last_cycle) is int and isinstance(record.blocked, bool) and isinstance(record.during, str))


def save(ws: Workspace, record: SessionRecord) -> None:
    path = _path(ws, record.session)
    if path is not None:
        atomic_write(path, json.dumps(asdict(record), indent=1).encode("utf-8"))


def prune(ws: Workspace, keep: int = KEEP) -> None:
    base = folder(ws)
    if base is None or not base.is_dir():
        return
    records = sorted(((_changed(p), p) for p in base.glob("*.json")), reverse=True)
    for _, old in records[keep:]:
        old.unlink(missing_ok=True)


def _changed(record: Path) -> float:
    """When `record` itself last changed, never through a link (one may dangle); 0 (oldest) when it is gone."""
    try:
        return record.lstat().st_mtime
    except OSError:
        return 0.0


def changed_since(ws: Workspace, record: SessionRecord) -> list[str]:
    """What the session changed: files whose work-tree state differs from the start, and any commit made but the
    runner's (a cycle's or a close's, committed in this checkout or pulled: that work is the agent's)."""
    now = work_tree_fingerprint(ws)
    changed = sorted(path for path in {*now, *record.dirty} if now.get(path) != record.dirty.get(path))
    head = gitio.head_id(ws.repo)
    if head != record.head and not _only_runner_commits(ws, record.head, head):
        changed.append(f"commits since {record.head[:10] if record.head else 'the start'}")
    return changed


def _only_runner_commits(ws: Workspace, start: str | None, head: str | None) -> bool:
    """Whether HEAD only moved forward from `start` by commits a cycle or a close made (none moved it back)."""
    from gitmem.checks.rule_inputs import authorship_of

    if start is None or head is None or not gitio.exists(ws.repo, start) or not gitio.is_ancestor(ws.repo, start,
                                                                                                   head):
        return False
    emails = [ws.config.agent.email]
    return all(gitio.is_phase_commit(commit.message, commit.author.email,
                                     lambda author: authorship_of(author, emails).is_agent)
               for commit in gitio.walk_range(ws.repo, start, head))
