"""A close another close beat to the remote: two closes in the same moment (the scheduled close and a catch-up,
or the same close run on two machines), each committed before either pushed.

The same race, lost earlier: a close whose push failed (exit 6) is pushed by a later `close --push`, after
another close of its day reached the remote.

Replayed after the other, the second close's entries would report again the cycles the first one reported, and
each cycle is in exactly one report (docs/format.md, LOG). The close that lost the race holds nothing but its own
output (every commit the remote lacks is a close's, made on what the remote still holds), so it steps aside:
the branch moves to the remote's tip, and the close runs again there, as `close --push` reads what the remote
holds before it closes (`run._catch_up`): it closes what is left open, or finds its day closed.
"""
from __future__ import annotations

from dataclasses import dataclass

from gitmem import gitio
from gitmem.memory import log
from gitmem.publish.closed_first import is_close
from gitmem.workspace import Workspace


@dataclass(frozen=True)
class Overtaken:
    upstream: str           # the remote's tip, which holds the other close
    where: str              # `origin/main`
    line: int               # the other close entry's heading line in the remote's LOG
    when: str               # its heading's timestamp
    closes: int             # this branch's close commits that step aside
    tip: str                # the branch's tip judged, which holds them: the one stepping aside moves from


def overtaken(ws: Workspace, branch: str) -> Overtaken | None:
    """The remote's first close entry since `branch` (the close's: the one it began on) parted from its upstream,
    if it added one and every commit the branch holds that the remote lacks is a close's: those closes read LOG
    without the remote's, and it without them. The remote is fetched and held to memory history as the push holds
    it; a rewritten one is the push's to refuse. A branch with other work the remote lacks (a cycle, the human's
    commit) is the push's to replay. The branch is read by name, never through HEAD: the human may have switched
    to another branch since the close began, which the close never read."""
    from gitmem.publish.push import fetched_upstream

    found = fetched_upstream(ws.repo, ws.name or None, branch)
    return None if found is None else overtaken_by(ws, *found, branch)


def overtaken_by(ws: Workspace, upstream: str, where: str, branch: str) -> Overtaken | None:
    """As `overtaken`, against `upstream` (the remote branch `where`, fetched and checked): also asked by the
    push between its fetch and its rebase, when another close may have landed since the close looked."""
    repo = ws.repo
    if not gitio.branch_exists(repo, branch):
        return None
    tip = gitio.resolve_revision(repo, f"refs/heads/{branch}")
    parent = gitio.merge_base(repo, tip, upstream)
    if parent is None or parent in (tip, upstream):
        return None
    mine = list(gitio.walk_range(repo, parent, tip))
    if not all(is_close(commit, ws.config.agent.email) for commit in mine):
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
            return Overtaken(upstream, where, entry.line + shift, str(entry.when), len(mine), tip)
    return None


class OvertakenWhilePushing(Exception):
    """Raised from the push's look at the upstream it fetched (before it rebases onto it): another close landed
    after the close's own look. Nothing moved yet; the close steps aside as it would have, or runs again when the
    branch took a commit of another writer meanwhile (gitmem.close.push_race)."""

    def __init__(self, found: Overtaken) -> None:
        super().__init__(found.where)
        self.found = found      # its `tip`: the branch's when the push looked (a retry's rebase may have moved it)


def who(*, made_now: bool, closes: int) -> str:
    """The closes made here that another close beat to the remote, as the close's message names them: `closes` of
    them, this run's among them when `made_now`."""
    if made_now and closes == 1:
        return "this close"
    return (f"this close and {closes - 1} made here before that never reached it" if made_now
            else f"the {closes} close(s) made here that never reached it")


def closes_left_out(ws: Workspace, left_out: tuple[str, ...]) -> tuple[str, ...]:
    """The close commits among `left_out`, the commits a push left out (gitmem.publish.closed_first, or whose
    change the remote already held)."""
    agent = ws.config.agent.email
    return tuple(commit for commit in left_out if is_close(gitio.commit(ws.repo, commit), agent))


def step_aside(ws: Workspace, found: Overtaken, branch: str) -> bool:
    """Move the close's own `branch` from the tip judged to the remote's tip (the closes' commits stay in the
    reflog), and the index and work tree with it only while HEAD is on it: a human who switched meanwhile keeps
    their checkout and their branch (gitio.move_branch). A branch that took a commit since it was judged is left as
    it is (RepoError): stepping aside would drop that commit. True when the checkout followed."""
    return gitio.move_branch(ws.repo, branch, found.upstream, expected=found.tip)
