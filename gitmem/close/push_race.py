"""What `close --push` does once it committed: look for another close that reached the remote first, push, and
close again on what the remote holds, all on the branch the close began on.

Another close of the day may reach the remote before this one (gitmem.close.overtaken): seen under the close's lock,
this branch steps aside to the remote's tip; seen by the push between its fetch and its rebase, the close takes its
lock again to step aside (or, when the branch took a commit of another writer meanwhile, runs again so that the push
replays that commit and leaves the closes out); left out by the push's rebase (gitmem.publish.closed_first), it runs
again. Each time the close then runs again on what the remote holds (one try fewer: `_close_again`).

The human may `git switch` at any moment, as git takes no gitmem lock. The branch is read and moved by name
throughout, so the push goes on publishing it while it holds what the close left there (`_taken_from_the_push`).
Whatever reads HEAD (closing again, stepping aside after the push) is done only while HEAD is on that branch, at the
tip the close left or after it: elsewhere it would close, reset or push a branch the close never read. The close
then stops (exit 6, the work kept on its branch) or says what to run, in one line.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import date

from gitmem import codes, gitio
from gitmem.checks.violation import Violation, failure_violations
from gitmem.close import overtaken
from gitmem.close.compose import CloseResult
from gitmem.errors import ExitCode, RunFailure
from gitmem.memory.lines import one_line
from gitmem.publish.push import PushReport, PushStatus
from gitmem.workspace import Workspace, cyclelock

# Runs the close once more, with one try fewer to close again (gitmem.close.run.run_close, which this module does not
# import: it calls this one).
Again = Callable[[], CloseResult]


@dataclass(frozen=True)
class _Start:
    """The branch a close's push started from, and its tip then."""
    branch: str
    tip: str

    def moved(self, ws: Workspace) -> str:
        """Why HEAD is no longer where the push started, in a few words ("" when it is): the human switched to
        another branch, detached HEAD, or reset this branch below the tip. The close then neither runs again nor
        steps aside: either would commit a close on, or reset, a branch the close never read."""
        return gitio.head_off(ws.repo, self.branch, self.tip)


@dataclass(frozen=True)
class Looked:
    """What the close found under its lock, after its commit: another close that reached the remote first (`found`;
    `unmoved`: why the branch did not step aside to it), and where the push starts: the branch the close began on,
    at its tip now (its close, or the remote's tip it stepped aside to)."""
    start: _Start
    found: overtaken.Overtaken | None = None
    unmoved: str = ""


def look(ws: Workspace, result: CloseResult, branch: str, *, tries: int) -> Looked:
    """Under the close's lock (the branch moves to the remote's tip, which no cycle of this checkout may be writing):
    this close, or one made before whose push failed (the commit only on this disk), about to be pushed, steps aside
    when another close of its day reached the remote first."""
    found, unmoved = None, ""
    if tries and (result.commit is not None or _unpublished(ws, branch)):
        found = overtaken.overtaken(ws, branch)
        if found is not None:
            try:
                overtaken.step_aside(ws, found, branch)
            except gitio.RepoError as err:     # the branch took a commit since the look: it keeps it
                unmoved = str(err)
    return Looked(_Start(branch, gitio.resolve_revision(ws.repo, f"refs/heads/{branch}")), found, unmoved)


def push_close(ws: Workspace, result: CloseResult, looked: Looked, *, again: Again, tries: int) -> CloseResult:
    """After the lock: push what the branch holds (a close already made whose push failed is pushed by running it
    again), or close again on what the remote holds, once another close reached it first."""
    repo, config = ws.repo, ws.config
    start, found = looked.start, looked.found
    if found is not None and looked.unmoved:
        return _kept_here(ws, result, start.branch, f"{found.where} got another close first, made at {found.when} "
                          f"({config.path('log')}:{found.line}), and {looked.unmoved}: "
                          + _only_here(start.branch, found.where))
    if found is None and (result.commit or _unpublished(ws, start.branch)):
        where = "/".join(gitio.upstream_of(repo, start.branch))
        try:
            result.push, left_out = _push(ws, result.day, start, watch_closes=tries > 0)
        except _MovedWhilePushing as moved:        # nothing moved yet: the branch keeps what it holds
            return _kept_here(ws, result, start.branch, f"{moved.why} since this close's push began: "
                              + _only_here(start.branch, where))
        except overtaken.OvertakenWhilePushing as late:     # another close landed after the look under the lock
            return _overtaken_while_pushing(ws, result, late, start.branch, again=again)
        return _pushed(ws, result, left_out, start, again=again, tries=tries)
    if found is None:
        return result
    return _stepped_aside(ws, result, found, start, again=again)


def _pushed(ws: Workspace, result: CloseResult, left_out: tuple[str, ...], start: _Start, *, again: Again,
            tries: int) -> CloseResult:
    """What the push came to, told (`left_out`: the commits of this branch its rebase left out)."""
    assert result.push is not None
    left = overtaken.closes_left_out(ws, left_out)
    if left and result.push.status.exit_code == ExitCode.OK:    # the remote closed their day first
        pushed = _Start(start.branch, result.push.commit or start.tip)
        return _left_out(ws, result, left, pushed, again=again, tries=tries)
    if result.commit in left:       # rebased away and then not pushed: no commit of this close remains
        result.commit = None
    if result.push.status.exit_code == ExitCode.OK and result.commit is None:
        result.message += f"; pushed what {start.branch} held that the remote did not"
    elif result.push.status.exit_code == ExitCode.OK:
        result.commit = result.push.commit or result.commit
    else:       # conflicted, failed, rewritten, or no remote to push to: the command says so (cli.close)
        place = _branch_place(ws.repo, result.push.side_branch, start.branch)
        result.violations.append(Violation.of(codes.CLOSE_PUSH_FAILED, place, 1,
                                              message="; ".join(result.push.messages[-2:])))
    return result


def _stepped_aside(ws: Workspace, result: CloseResult, found: overtaken.Overtaken, start: _Start, *,
                   again: Again) -> CloseResult:
    """Another close pushed first, and the branch `start` stepped aside to it: close again on what it left."""
    who = overtaken.who(made_now=result.commit is not None, closes=found.closes)
    stepped = (f"{found.where} got another close first, made at {found.when} ({ws.config.path('log')}:"
               f"{found.line}): {who} stepped aside")
    said = f"{stepped} and closed again on it"
    return _close_again(ws, start, again, ran=said,
                        moved=lambda why: _not_again(result, stepped, why, f"back on {start.branch}"),
                        busy=lambda held: _not_again(result, said, *_busy(held)))


def _close_again(ws: Workspace, start: _Start, again: Again, *, ran: str, moved: Callable[[str], CloseResult],
                 busy: Callable[[cyclelock.LockHeld], CloseResult],
                 refused: Callable[[RunFailure], CloseResult] | None = None) -> CloseResult:
    """The close run again on what the remote holds, its message joined by `ran`; only while HEAD is on `start`'s
    branch at its tip or after it (else `moved(why)`): elsewhere it would close and push a branch it never read.
    A cycle that started in this checkout meanwhile holds the lock, and HEAD is its to move: `busy(held)`. A close
    that refuses to run (an uncommitted change, a git lock) is `refused(err)`, when the caller keeps that apart."""
    moved_off = start.moved(ws)
    if moved_off:
        return moved(moved_off)
    try:
        rerun = again()
    except cyclelock.LockHeld as held:
        return busy(held)
    except RunFailure as err:
        if refused is None:
            raise
        return refused(err)
    rerun.message = f"{rerun.message}; {ran}"
    return rerun


def _overtaken_while_pushing(ws: Workspace, result: CloseResult, late: overtaken.OvertakenWhilePushing, branch: str,
                             *, again: Again) -> CloseResult:
    """The push found another close of the day before it rebased. The push ran outside the lock: the branch is
    judged again under it before it steps aside, and only while HEAD is still on it (stepping aside would reset the
    branch HEAD is on now)."""
    start = _Start(branch, late.found.tip)
    busy: cyclelock.LockHeld | None = None
    moved_off = ""
    found: overtaken.Overtaken | None = None
    try:
        with cyclelock.acquire(gitio.state_dir(ws.repo), what="close"):
            moved_off = start.moved(ws)
            if not moved_off:
                found = overtaken.overtaken_by(ws, late.found.upstream, late.found.where, branch)
                if found is not None:
                    try:
                        overtaken.step_aside(ws, found, branch)
                    except gitio.RepoError as err:  # a commit since the look: the branch keeps it
                        moved_off = str(err)
    except cyclelock.LockHeld as held:      # a cycle started here meanwhile: HEAD is its to move, not ours
        busy = held
    said = f"{late.found.where} got another close while this one pushed"
    if busy is not None:
        return _kept_here(ws, result, branch, f"{said}, and " + _left_to(busy, late.found.where))
    if moved_off:
        return _kept_here(ws, result, branch, f"{said}, and {moved_off}: " + _only_here(branch, late.found.where))
    if found is None:       # a commit of another writer came in meanwhile: the branch is not the close's alone
        return _changed_while_pushing(ws, result, late.found.where, start, again=again)
    return _stepped_aside(ws, result, found, _Start(branch, found.upstream), again=again)


def _unpublished(ws: Workspace, branch: str) -> bool:
    """Whether `branch` holds commits its upstream lacks (a close whose push failed left them only here), as far
    as the last fetch knows; with no upstream to compare with, pushing is what says so."""
    repo = ws.repo
    if not gitio.branch_exists(repo, branch):
        return False
    tip = gitio.resolve_revision(repo, f"refs/heads/{branch}")
    upstream = gitio.remote_branch_oid(repo, *gitio.upstream_of(repo, branch))
    return upstream is None or not gitio.is_ancestor_id(repo, tip, upstream)


class _MovedWhilePushing(Exception):
    """Raised from the push's look at the upstream it fetched, before it rebases: the close's branch holds what the
    close did not leave there, while HEAD is elsewhere (`_taken_from_the_push`)."""

    def __init__(self, why: str) -> None:
        super().__init__(why)
        self.why = why


def _taken_from_the_push(repo: gitio.Repo, start: _Start, left: str | None) -> str:
    """Why the push must stop before it rebases `start`'s branch, in a few words ("" when it goes on). The push
    publishes the branch by name, and its rebase moves it by compare-and-swap from the tip it read (gitio.move_branch),
    the index and work tree following only while HEAD is on it: a human who switched to another branch keeps their
    checkout, and their branch is neither moved nor pushed. So HEAD elsewhere does not stop the push, as long as the
    branch holds the tip the close left there (`left`, where the push's own last rebase left it, else the start's
    tip): the close's own commit, which it read and made. Any other tip is work the close never read, put there while
    HEAD was elsewhere (`git branch -f`, a commit in another work tree): that is not published. With HEAD on the
    branch, what the checkout commits there is the human's to publish, and the push replays it."""
    away = gitio.head_off(repo, start.branch)
    if not away:
        return ""
    expected = left or start.tip
    now = gitio.resolve_revision(repo, f"refs/heads/{start.branch}") if gitio.branch_exists(repo, start.branch) \
        else None
    if now == expected:
        return ""
    return f"{away}, and {start.branch} was moved from {expected[:10]} to {now[:10] if now else 'nothing (deleted)'}"


def _push(ws: Workspace, day: date, start: _Start, *, watch_closes: bool) -> tuple[PushReport, tuple[str, ...]]:
    """What the push came to, and the commits of this branch its rebase left out (gitmem.publish.push.SyncResult).
    The push rebases and publishes `start`'s branch, by name: each time it fetched, before it rebases, the branch
    must still be the close's (`_taken_from_the_push`)."""
    from gitmem.publish.merge import resolver_for
    from gitmem.publish.push import publish

    def still_the_closes(left: str | None) -> None:
        moved_off = _taken_from_the_push(ws.repo, start, left)
        if moved_off:
            raise _MovedWhilePushing(moved_off)

    def before_rebase(upstream: str, left: str | None) -> None:
        """Also: another close that landed after the close's own look would be replayed under (two reports of a
        day)."""
        still_the_closes(left)
        if not watch_closes:
            return
        found = overtaken.overtaken_by(ws, upstream, f"{remote}/{upstream_branch}", start.branch)
        if found is not None:
            raise overtaken.OvertakenWhilePushing(found)

    still_the_closes(None)
    # The upstream and the branch published are the close's, whichever branch HEAD is on by the time publish runs.
    remote, upstream_branch = gitio.upstream_of(ws.repo, start.branch)
    # Merged by this workspace's config: its memory files are the ones the rules merge (a LOG append each side).
    outcome = publish(ws.repo, conflict_branch=f"gitmem/close-{day.isoformat()}", resolver=resolver_for(ws.config),
                      remote=remote, branch=upstream_branch, workspace=ws.name or None, before_rebase=before_rebase,
                      local=start.branch)
    # After a rebase the published commit is a new one: report that id, not the local one it replaced.
    return outcome.report(), outcome.left_out


def _only_here(branch: str, where: str) -> str:
    """What a close that stopped short of pushing leaves, and what to run: the close runs on its own branch only."""
    return (f"nothing was pushed, and what {branch} holds that {where} lacks is only on this disk until `gitmem close "
            f"--push` runs again on {branch}")


def _left_out(ws: Workspace, result: CloseResult, left: tuple[str, ...], pushed: _Start, *, again: Again,
              tries: int) -> CloseResult:
    """The push published the rest of the branch and left out `left`, close commits made here (this one among
    them, or closes an earlier push left here): the remote held a close of their day first, or the same change
    (gitmem.publish.closed_first). No commit of this close was published, so none is named as committed: the close
    runs again on what the remote now holds, as a close that stepped aside does, and reports what they alone held
    (once more at most `tries` times), as long as HEAD is still on the branch `pushed` (at its tip or after it)."""
    assert result.push is not None
    where = "/".join(gitio.upstream_of(ws.repo, pushed.branch))
    made_now = result.commit is not None and result.commit in left
    who = overtaken.who(made_now=made_now, closes=len(left))
    said = f"{where} held a close of the same day first: the push left out {who}"
    if tries <= 0:
        result.commit = None if made_now else result.commit
        result.message += f"; {said}"
        return result
    first = result.push
    rerun = _close_again(ws, pushed, again, ran=f"{said}, and the close ran again on what {where} holds",
                         moved=lambda why: _not_again(result, said, why, f"back on {pushed.branch}"),
                         busy=lambda held: _not_again(result, said, *_busy(held)))
    if rerun is not result:     # the push report tells both pushes
        rerun.push = first if rerun.push is None else PushReport(
            rerun.push.status, rerun.push.side_branch, rerun.push.commit, [*first.messages, *rerun.push.messages])
    return rerun


def _changed_while_pushing(ws: Workspace, result: CloseResult, where: str, start: _Start, *,
                           again: Again) -> CloseResult:
    """The push found another close of the day on `where` before it rebased, and when the close held its lock again
    to step aside, the branch held a commit of another writer (the human's, a cycle's): stepping aside would drop it.
    The close runs again instead, as `_left_out` does (once more at most as many times as it may): its push replays
    that commit and leaves the closes made here out, as `where` closed their day first
    (gitmem.publish.closed_first), and the close then run on what `where` holds reports what only they held. It runs
    again only while HEAD is on the branch `start` (at its tip or after it): elsewhere it would close and push a
    branch it never read."""
    said = f"{where} got another close while this one pushed, and this branch changed since"

    def refused(err: RunFailure) -> CloseResult:
        """An uncommitted change, a git lock: the close refused to run again. The refusal stays a diagnostic of its
        own, with its code and place; GM803 names it in one line."""
        result.violations += failure_violations(err)
        return _kept_here(ws, result, start.branch, f"{said}, and the close could not run again: {err}; what "
                          f"this branch holds that {where} lacks is only on this disk until `gitmem close --push` "
                          "runs again")

    return _close_again(ws, start, again, ran=f"{said}: the close ran again on it",
                        moved=lambda why: _kept_here(ws, result, start.branch, f"{said}, and {why}: the close did not "
                                                     "run again; " + _only_here(start.branch, where)),
                        busy=lambda held: _kept_here(ws, result, start.branch, f"{said}, and {_left_to(held, where)}"),
                        refused=refused)


def _left_to(busy: cyclelock.LockHeld, where: str) -> str:
    """Why a close that found another close of its day on `where` while it pushed left the branch to a cycle."""
    return (f"{busy.holder_named} runs in this checkout now, so the branch was left to it: nothing was pushed, and "
            f"what this branch holds that {where} lacks is only on this disk; once it ends, run `gitmem close "
            f"--push` again (a close of a day {where} closed first is left out)")


def _kept_here(ws: Workspace, result: CloseResult, branch: str, said: str) -> CloseResult:
    """The close's push stopped before anything moved: `branch` keeps what it holds, only on this disk (exit 6).
    What it says is one line (a refusal it quotes may hold several: its own diagnostic lists them)."""
    repo = ws.repo
    said = one_line(said)
    tip = gitio.resolve_revision(repo, f"refs/heads/{branch}") if branch else gitio.head_id(repo)
    result.push = PushReport(PushStatus.FAILED, None, tip, [said])
    place = _branch_place(repo, None, branch)
    result.violations.append(Violation.of(codes.CLOSE_PUSH_FAILED, place, 1, message=said))
    return result


def _busy(busy: cyclelock.LockHeld) -> tuple[str, str]:
    """Why a close did not close again when a cycle holds the lock, and when to run it (`_not_again`)."""
    return f"{busy.holder_named} runs in this checkout now", "once it ends"


def _not_again(result: CloseResult, said: str, why: str, when: str) -> CloseResult:
    """The close would run again on what the remote holds (its own commit stepped aside, or the push left it out), but
    `why`: a cycle started in this checkout meanwhile holds the lock, and HEAD is the cycle's to move; or HEAD left
    the branch the close pushed, which is the only one it closes. Nothing is lost: the remote holds a close of the
    day, and the cycles only this close reported are in LOG for the next close, to run `when`. No commit of this
    close stands, so none is named."""
    result.commit = None
    result.message += (f"; {said}; it did not close again, as {why}: {when}, run `gitmem close --push` again to "
                       "report what only the close(s) left out held")
    return result


def _branch_place(repo: gitio.Repo, side_branch: str | None, branch: str) -> str:
    """Where a push failure of the close points: the side branch that holds the close, else the close's own `branch`
    (`.git/HEAD` with none), as the cycle's (docs/format.md, "Diagnostics"). Never the branch HEAD is on now: the
    human may have switched while the close pushed."""
    held = side_branch or branch
    return gitio.ref_path(repo, held) if held else gitio.shown_path(repo, gitio.git_dir(repo) / "HEAD")
