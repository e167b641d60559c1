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

import os
from collections.abc import Container
from datetime import datetime

from gitmem import gitio
from gitmem.confined import files
from gitmem.memory import decisions, fences, log
from gitmem.memory.log import LogEntry
from gitmem.workspace import Workspace


def resolved_before(ws: Workspace) -> Container[str] | None:
    """IDs of the decisions already resolved at the baseline; None when no cycle landed yet (all are new).

    Where history cannot say (not a git work tree, or a shallow clone that lacks the baseline commit), the
    last cycle's LOG time stands in for it: answers stamped before that entry count as already seen. That is
    the one place minute timestamps still decide, and only when git has no history to decide with."""
    known, found = _from_history(ws) if ws.state_dir is not None else (False, None)
    return found if known else _answered_before_last_cycle(ws)


def _from_history(ws: Workspace) -> tuple[bool, Container[str] | None]:
    """(whether history could say, and what it says)."""
    try:
        repo = ws.repo
        head = gitio.head_id(repo)
    except gitio.RepoError:
        return False, None
    if head is None:
        return False, None
    landed = last_landed_cycle(ws, head)
    if landed is None:
        return True, None
    baseline = _started(repo, landed) or _added_by(ws, head, landed)
    if baseline is None:
        return False, None
    blob = gitio.file_id_at(repo, baseline, ws.config.path("decisions"))
    return True, ResolvedAt(_same_in_worktree(ws, blob) or gitio.blob(repo, blob) if blob is not None else b"")


def _same_in_worktree(ws: Workspace, blob: str) -> bytes | None:
    """DECISIONS from the work tree when it is that blob (the usual case: no answer since the baseline):
    reading a file is cheaper than inflating a blob from a pack at 100x."""
    data = files.read_bytes(ws.root, ws.config.path("decisions"))
    if data is None:
        return None
    return data if len(data) == gitio.blob_size(ws.repo, blob) and gitio.blob_id(data) == blob else None


def _answered_before_last_cycle(ws: Workspace) -> Container[str] | None:
    landed = _last_landed(ws, None)
    if landed is None:
        return None
    data = files.read_bytes(ws.root, ws.config.path("decisions")) or b""
    return AnsweredBefore(data, landed.when.moment)


def last_landed_cycle(ws: Workspace, head: str) -> LogEntry | None:
    """The newest committed cycle entry that is not a salvaged run."""
    blob = gitio.file_id_at(ws.repo, head, ws.config.path("log"))
    size = gitio.blob_size(ws.repo, blob) if blob is not None else None
    return _last_landed(ws, size) if size is not None else None


def _last_landed(ws: Workspace, end: int | None) -> LogEntry | None:
    """The newest cycle entry that is not a salvaged run, in LOG's first `end` bytes (None: all of it)."""
    from gitmem.workspace.head_and_tail import FileSource

    def found(entries: tuple[LogEntry, ...]) -> bool:
        return any(_landed(entry) for entry in entries)

    source = FileSource(ws.root, ws.config.path("log"), ws.state_dir, numbered=False, end=end)
    landed = [entry for entry in log.tail_entries(source, found).entries if _landed(entry)]
    return landed[-1] if landed else None


def _landed(entry: LogEntry) -> bool:
    return entry.cycle is not None and entry.get(log.SALVAGED) is None


def _started(repo: gitio.Repo, entry: LogEntry) -> str | None:
    value = (entry.get(log.STARTED) or "").strip()
    if not value:
        return None
    try:
        return gitio.resolve_revision(repo, value)
    except gitio.RepoError:          # gone (a rewritten remote): fall back to the commit that added the entry
        return None


def _added_by(ws: Workspace, head: str, entry: LogEntry) -> str | None:
    """The first parent of the commit that added `entry` to LOG: the newest change whose parent lacks it.

    LOG is append-only (GM301 holds on every commit), so an older LOG lacks the entry exactly when it ends
    before the entry's offset in the current LOG: blob sizes answer, and no LOG is read but its end. A seal (rules
    6) is the one change that makes LOG.md smaller: its oldest entries left for a volume, so every offset moved up
    by what left. Across one, the entry's offset is looked up again in the LOG.md the seal started from (read once
    per seal crossed; none when no seal came after the entry)."""
    heading = entry.heading().encode("utf-8")
    at = _heading_offset(ws, heading)
    if at is None:
        return None
    for change in gitio.changes(ws.repo, ws.config.path("log"), head):
        before = change.parents[0] if change.parents else None
        size = gitio.blob_size(ws.repo, before) if before is not None else None
        if before is None or (size or 0) <= at:
            return change.commit.parents[0] if change.commit.parents else None
        after = gitio.blob_size(ws.repo, change.blob) if change.blob is not None else None
        if after is not None and size is not None and after < size:
            at = _offset_in(gitio.blob(ws.repo, before), heading)
            if at is None:
                return change.commit.parents[0] if change.commit.parents else None
    return None


def _offset_in(data: bytes, heading: bytes) -> int | None:
    """Where the last line `heading` outside fenced code starts in LOG bytes `data`; None when it has none."""
    found = data.rfind(heading)
    while found >= 0:
        if (found == 0 or data[found - 1:found] == b"\n") and not fences.open_after(data, 0, found):
            return found
        found = data.rfind(heading, 0, found)
    return None


def _heading_offset(ws: Workspace, heading: bytes, chunk: int = 1 << 16) -> int | None:
    """Where the last line `heading` outside fenced code starts in LOG, reading back from its end in growing
    chunks (a quoted copy of the heading in a later entry's code block is text, not the entry)."""
    from gitmem.workspace.head_and_tail import fence_open_at_end

    rel = ws.config.path("log")
    handle = files.open_read(ws.root, rel)
    if handle is None:
        return None
    with handle:
        size = handle.seek(0, os.SEEK_END)
        # The fence state at LOG's end, counted from its bytes (never from a cache: it decides which line is the
        # entry); the state at an offset is that, flipped once for each fence line between the offset and the end.
        open_at_end = fence_open_at_end(ws.root, rel)
        end = size
        while True:
            start = max(0, end - chunk)
            handle.seek(start)
            data = handle.read(size - start)
            found = data.rfind(heading, 0, end - start + len(heading))
            while found >= 0:
                at = start + found
                if (at == 0 or data[found - 1:found] == b"\n") and open_at_end == fences.open_after(data, found):
                    return at
                found = data.rfind(heading, 0, found)
            if start == 0:
                return None
            end, chunk = start, chunk * 4


class ResolvedAt:
    """Which decisions a DECISIONS blob holds answered, asked one ID at a time: the Pending section is read line
    by line (a fenced example of a heading is no heading) to find where Resolved starts, and parsed for the
    decisions answered in place there (rules 4; Pending is small: GM209 bounds it); after that an ID is looked
    up by its heading, so a cycle that asks about the newest few answers reads no more."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.start = _resolved_offset(data)
        head = data[:self.start].decode("utf-8", "replace") if self.start is not None else ""
        self.in_place = {d.id: d for d in decisions.parse(head).pending if d.is_answered}

    def __contains__(self, decision_id: object) -> bool:
        if not isinstance(decision_id, str):
            return False
        if decision_id in self.in_place:
            return True
        if self.start is None:
            return False
        return self.data.find(b"\n### %s " % decision_id.encode("ascii", "replace"), self.start - 1) >= 0


class AnsweredBefore(ResolvedAt):
    """The stand-in when history cannot say: answered decisions whose `Answered` time is before `since`."""

    def __init__(self, data: bytes, since: datetime) -> None:
        super().__init__(data)
        self.since = since

    def __contains__(self, decision_id: object) -> bool:
        if not isinstance(decision_id, str):
            return False
        found = self.in_place.get(decision_id)
        if found is None and self.start is not None:
            at = self.data.find(b"\n### %s " % decision_id.encode("ascii", "replace"), self.start - 1)
            if at >= 0:
                end = self.data.find(b"\n### ", at + 1)
                body = self.data[at:len(self.data) if end < 0 else end].decode("utf-8", "replace")
                parsed = decisions.parse("# DECISIONS\n\n## Resolved\n" + body).resolved
                found = parsed[0] if parsed else None
        answered = found.answered if found is not None else None
        return answered is not None and answered[0].moment < self.since


def _resolved_offset(data: bytes) -> int | None:
    """The offset of the line after the `## Resolved` heading (outside code fences); None without one. Reads
    only as far as that heading: the Pending section."""
    for at in fences.headings(data, b"## "):
        if fences.line_starting_at(data, at).rstrip() == b"## Resolved":
            end = data.find(b"\n", at)
            return len(data) if end < 0 else end + 1
    return None
