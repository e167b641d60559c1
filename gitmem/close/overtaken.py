"""A close another close beat to the remote: two closes in the same moment (the scheduled close and a catch-up,
or the same close run on two machines), each committed before either pushed.

Replayed after the other, the second close's entries would report again the cycles the first one reported, and
each cycle is in exactly one report (docs/format.md, LOG). The close that lost the race holds nothing but its own
output (its commit is the only one the remote lacks, made on what the remote still holds), so it steps aside:
the branch moves to the remote's tip, and the close runs again there, as `close --push` reads what the remote
holds before it closes (`run._catch_up`): it closes what is left open, or finds its day closed.
"""
from __future__ import annotations

from dataclasses import dataclass

from gitmem import gitio
from gitmem.memory import log
from gitmem.workspace import Workspace


@dataclass(frozen=True)
class Overtaken:
    upstream: str           # the remote's tip, which holds the other close
    where: str              # `origin/main`
    line: int               # the other close entry's heading line in the remote's LOG
    when: str               # its heading's timestamp


def overtaken(ws: Workspace, parent: str, commit: str) -> Overtaken | None:
    """The remote's first close entry since `parent` (what close `commit` was made on, its only unpublished
    commit), if it added one: that close read LOG without this one, and this one without it. The remote is fetched
    and held to memory history as the push holds it; a rewritten one is the push's to refuse."""
    from gitmem.publish.push import fetch_checked

    repo = ws.repo
    branch = gitio.current_branch(repo)
    if branch is None or gitio.head_id(repo) != commit:
        return None
    remote, upstream_branch = gitio.upstream_of(repo, branch)
    if remote not in gitio.remote_names(repo):
        return None
    known = gitio.remote_branch_oid(repo, remote, upstream_branch)
    try:
        upstream, rewrite = fetch_checked(repo, remote, upstream_branch, known, ws.name or None)
    except gitio.GitCommandError:
        return None
    if upstream is None or rewrite or upstream == parent or not gitio.is_ancestor_id(repo, parent, upstream):
        return None
    path = ws.config.path("log")
    before, after = gitio.file_at(repo, parent, path), gitio.file_at(repo, upstream, path)
    if before is None or after is None:
        return None
    verdict = log.append_verdict(before, after)
    if not verdict.ok:          # sealed since, or not memory history: the push judges it
        return None
    shift = after.count(b"\n", 0, verdict.start)
    for entry in log.appended_entries(after, verdict):
        if entry.cycle is None:
            return Overtaken(upstream, f"{remote}/{upstream_branch}", entry.line + shift, str(entry.when))
    return None


def step_aside(ws: Workspace, found: Overtaken) -> None:
    """Move the branch, index and work tree to the remote's tip (the close's commit stays in the reflog)."""
    gitio.reset_hard(ws.repo, found.upstream)
