"""A close of a day the upstream closed first is left out of the push's replay; the other commits are replayed.

A close whose push failed stays on this disk (exit 6). Should another clone's close of the same day reach the remote
before this branch is pushed again (by the next close, or by a cycle), replaying it after that close would put the
day in two reports, each cycle of it in both (docs/format.md, LOG). When the branch holds nothing but closes, the
close steps aside before it pushes (gitmem.close.overtaken); when other work sits between it and the remote (a
human's commit, a cycle), the rebase replays that work and leaves the close out: the close only writes its own
output, which the other close wrote for that day. Every close made here after it is left out too: each one read
LOG with it, and would count what it reported as reported. The cycles they held that the remote's close did not
report land below it, and the next close reports them (gitmem.close.day): nothing is lost and nothing is reported
twice. A close commit is the agent's, with the close's trailer: a human's commit is never left out.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import date

from gitmem import gitio
from gitmem.config import Config
from gitmem.memory import log
from gitmem.publish.merge import pick_after_left_out, resolver_for

# The trailer that marks the close's one commit (gitmem.close.run writes it; a close commit is left out here and
# steps aside in gitmem.close.overtaken).
PHASE_TRAILER = "Gitmem-Phase: close"


def is_close(commit: gitio.Commit, agent_email: str) -> bool:
    """A commit the close made: one parent, by the agent's identity, with the close's phase trailer."""
    return len(commit.parents) == 1 and commit.author.email == agent_email and f"\n{PHASE_TRAILER}\n" in commit.message


@dataclass(frozen=True)
class ClosedFirst:
    """What a replay leaves out (gitmem.gitio.Leaving): our close commits from the first one of a day the upstream
    closed since the sides parted."""

    commits: frozenset[str]
    days: tuple[date, ...]          # the days of ours the upstream closed first
    resolver: gitio.Resolver        # for each commit replayed after one left out

    def describe(self, *, of: str = "made here", by: str = "the remote") -> str:
        days = ", ".join(day.isoformat() for day in self.days)
        return (f"left out {len(self.commits)} close commit(s) {of}: {by} closed {days} first, and a "
                "day is in one report (the next close reports what only they held)")


def leaver_for(config: Config) -> Callable[[Callable[[str, str], bytes | None], str, str, tuple[gitio.Commit, ...]],
                                          ClosedFirst | None]:
    """For gitmem.gitio.rebase_onto: the closes of ours a replay onto the upstream leaves out (None: none)."""
    log_path, agent = config.path("log"), config.agent.email
    merge = resolver_for(config)

    def resolve_after(path: str, base: bytes | None, upstream: bytes | None, ours: bytes | None) -> bytes | None:
        # Its parent holds the close entries left out and the tip does not: what it appended goes on the tip.
        if path == log_path and base is not None and upstream is not None and ours is not None:
            return pick_after_left_out(base, upstream, ours)
        return merge(path, base, upstream, ours)

    def leave(read: Callable[[str, str], bytes | None], fork: str, upstream: str,
              ours: tuple[gitio.Commit, ...]) -> ClosedFirst | None:
        if not any(is_close(commit, agent) for commit in ours):     # a cycle's push, mostly: no LOG is read
            return None
        closed = _closed_days(read(fork, log_path), read(upstream, log_path))
        if not closed:
            return None
        mine = [(commit.id, _closed_days(read(commit.parents[0], log_path), read(commit.id, log_path)))
                for commit in ours if is_close(commit, agent)]
        left = mine[log.closes_left_out_from([days for _, days in mine], closed):]
        days = set().union(*(days & closed for _, days in left))
        return ClosedFirst(frozenset(commit for commit, _ in left), tuple(sorted(days)), resolve_after) if left \
            else None

    return leave


def _closed_days(old: bytes | None, new: bytes | None) -> set[date]:
    """The days the close entries that `new` appends to `old` closed (none when it is no append)."""
    if old is None or new is None:
        return set()
    verdict = log.append_verdict(old, new)
    if not verdict.ok:
        return set()
    return {day for entry in log.appended_entries(new, verdict)
            if entry.cycle is None and (day := log.closed_day(entry)) is not None}
