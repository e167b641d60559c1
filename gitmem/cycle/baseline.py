"""Which answers are new to a cycle: decided from history, never from minute timestamps.

A decision is newly resolved for a cycle when its answer was not in the tree the previous cycle started from:
that cycle could not have seen it, however the clocks and pushes interleaved. The runner records that tree in
each cycle's LOG entry (`- Started: <commit>`; the agent cannot set it, postflight does), and a rebase keeps it
reachable. A salvaged cycle (`- Salvaged:`) read nothing to the end, so it uses up nothing: the one before it
counts. So an answer shows as newly resolved exactly once: in the first cycle that starts after it and lands.

An interactive session reads like the next cycle: its baseline is the last committed cycle. A session's own
entry has no `Started` (it is not the runner's), so for the cycle after it the baseline is the tree just
before the commit that added that entry: what the session could have read at the latest.
"""
from __future__ import annotations

from gitmem import gitio
from gitmem.memory import decisions, log
from gitmem.memory.log import LogEntry
from gitmem.memory.text import decode
from gitmem.workspace import Workspace


def resolved_before(ws: Workspace) -> set[str] | None:
    """IDs of the decisions already resolved at the baseline; None when no cycle landed yet (all are new)."""
    repo = ws.repo
    head = gitio.head_id(repo)
    if head is None:
        return None
    landed = last_landed_cycle(ws, head)
    if landed is None:
        return None
    baseline = _started(repo, landed) or _added_by(ws, head, landed)
    if baseline is None:
        return None
    return resolved_ids(gitio.file_at(repo, baseline, ws.config.path("decisions")) or b"")


def last_landed_cycle(ws: Workspace, head: str) -> LogEntry | None:
    """The newest committed cycle entry that is not a salvaged run."""
    blob = gitio.file_id_at(ws.repo, head, ws.config.path("log"))
    size = gitio.blob_size(ws.repo, blob) if blob is not None else None
    if size is None:
        return None
    from gitmem.workspace.tail import FileSource

    def found(entries: tuple[LogEntry, ...]) -> bool:
        return any(_landed(entry) for entry in entries)

    source = FileSource(ws.path("log"), ws.config.path("log"), ws.state_dir, numbered=False, end=size)
    landed = [entry for entry in log.tail_entries(source, found).entries if _landed(entry)]
    return landed[-1] if landed else None


def _landed(entry: LogEntry) -> bool:
    return entry.cycle is not None and entry.get(log.SALVAGED) is None


def _started(repo: gitio.Repo, entry: LogEntry) -> str | None:
    value = (entry.get(log.STARTED) or "").strip()
    if not value:
        return None
    try:
        return gitio.resolve(repo, value)
    except gitio.RepoError:          # gone (a rewritten remote): fall back to the commit that added the entry
        return None


def _added_by(ws: Workspace, head: str, entry: LogEntry) -> str | None:
    """The first parent of the commit that added `entry` to LOG: the newest change whose parent lacks it."""
    heading = entry.heading().encode("utf-8")
    data = ws.path("log").read_bytes()
    at = data.rfind(heading)
    if at < 0:
        return None
    for change in gitio.changes(ws.repo, ws.config.path("log"), head):
        before = change.parents[0] if change.parents else None
        if before is None or not _holds(ws.repo, before, data, at, heading):
            return change.commit.parents[0] if change.commit.parents else None
    return None


def _holds(repo: gitio.Repo, blob: str, current: bytes, at: int, heading: bytes) -> bool:
    """Whether an older LOG blob holds the heading found at `at` in the current LOG. LOG is append-only, so an
    older LOG is normally a prefix of the current one and its size answers; a rewritten one is read."""
    size = gitio.blob_size(repo, blob) or 0
    if size <= len(current) and gitio.blob_id(memoryview(current)[:size]) == blob:
        return size > at
    return heading in gitio.blob(repo, blob)


def resolved_ids(decisions_bytes: bytes) -> set[str]:
    """The IDs under `## Resolved` (as the parser finds them: a fenced example of a heading is no heading)."""
    return decisions.resolved_ids(decode(decisions_bytes).text)
