"""`run_close`: close every day that is due, promote what history-backed results proved, plan, commit.

A close belongs to a day (`day.close_day`: the day it runs in, or the day before when it runs within
`close.late_hours` of midnight, as a scheduler's late run does) and closes that day and every earlier day that is
not closed, oldest first, each report as of the end of its day (at most MAX_CATCH_UP days; a first close starts
at the first day with a cycle). Order matters: promotions are written first (after re-reading the live files, at
most `close.max_promotions` a run), so the latest report can list them; then the reports, oldest day first; then
one plan, for the day after the last one closed, on top of NOW; then the whole change is checked as one commit
would be, with the close's own permissions (rules may be added and retired here, nothing else that a cycle may
not do). Each cycle is in exactly one report: a report holds the cycles no earlier close reported
(`day.unreported_cycles`), so cycles run after a day's close (the close ran before the day ended) go into a
second close of that day, or else into the next close. Running it again with no such cycle changes nothing.
The writes are composed in memory by `gitmem.close.compose`; this module holds the lock, commits and pushes.
"""
from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from typing import Any

from gitmem import codes, gitio, sealing
from gitmem.checks import generation
from gitmem.checks.violation import Violation, failure_violations
from gitmem.close.commit_guard import (
    CloseError,
    changed_files,
    changed_with_stats,
    check_result,
    first_place,
    restore,
)
from gitmem.close.compose import CloseResult, compose, days_to_close
from gitmem.close.day import close_day
from gitmem.errors import ExitCode, RunFailure
from gitmem.memory.lines import one_line
from gitmem.memory_writer import MemoryWriter, WriteRefused
from gitmem.publish.closed_first import PHASE_TRAILER
from gitmem.publish.push import PushReport
from gitmem.workspace import Clock, Workspace, cyclelock, log_history


def run_close(ws: Workspace, *, day: date | None = None, use_llm: bool = False,
              push: bool = False, clock: Clock | None = None, client: Any = None,
              overtaken_tries: int = 3) -> CloseResult:
    """Close `day` (default: `close_day`, today in the configured zone or the day before). `client` replaces the
    Anthropic client in tests. With `push`, a close another close beat to the remote closes again on it, at most
    `overtaken_tries` times (gitmem.close.overtaken)."""
    repo, config = ws.repo, ws.config
    clock = clock or ws.clock()
    moment = clock()
    tz = config.tzinfo()
    today = moment.astimezone(tz).date()
    if day is not None and day > today:
        # At LOG, where the close of that day would be written.
        raise CloseError(f"{day.isoformat()} has not happened yet (today is {today.isoformat()})",
                         where=config.path("log"), usage=True)
    head = gitio.head_id(repo)
    git_head = gitio.shown_path(repo, gitio.git_dir(repo) / "HEAD")
    if head is None:
        raise CloseError("this repository has no commits yet; commit the memory files first (git add -A && git "
                         "commit -m 'start gitmem'), then run the close", where=git_head, dirty=True)   # as a cycle
    branch = gitio.current_branch(repo)     # the one a close that pushes closes, runs again on, and publishes
    if push and branch is None:       # else the close is committed where no branch holds it
        from gitmem.cycle.runner import switch_command

        raise CloseError(f"HEAD is detached at {head[:10]}; `close --push` publishes a branch: "
                         f"`{switch_command(repo, head)}` (or the branch to publish), then run the close",
                         where=git_head, dirty=True)
    unmoved = ""        # why the branch did not step aside, when it did not
    with cyclelock.acquire(gitio.state_dir(repo), what="close"):
        locked = cyclelock.git_locks_refusal(repo)      # else the commit lands and the index write after it fails
        if locked is not None:       # at the first lock file it names, as the cycle's refusal (GM740)
            locks = gitio.lock_files(repo)
            raise CloseError(locked, where=locks[0].label if locks else ".git", dirty=True)
        unsaved = [path for path, _ in gitio.dirty_files(repo)]
        dirty = sorted(p for p in unsaved if p in config.memory_paths().values())
        if dirty:
            raise CloseError(f"memory files have uncommitted changes: {', '.join(dirty)}; commit or discard "
                             "them first (the close commits memory files whole)", where=dirty[0], dirty=True)
        if push and unsaved:        # the push may rebase, which moves the work tree to the new tip (gitio.move_branch)
            raise CloseError(f"the work tree has uncommitted changes: {', '.join(unsaved[:10])}"
                             + (f" and {len(unsaved) - 10} more" if len(unsaved) > 10 else "")
                             + "; `close --push` may rebase this branch onto the remote, which would lose them: "
                             "commit them, or `git stash push --include-untracked`, then run the close again "
                             "(or close without --push and push later)", where=unsaved[0], dirty=True)
        if push:          # under the lock: a cycle running in this checkout holds it, and HEAD is its to move
            head = _catch_up(ws) or head
        # Everything the close writes is dated by the moment it read LOG at (its report holds the cycles up to that
        # minute: `day.reported_until`), however long the model takes to word it.
        memory = MemoryWriter(ws, clock=lambda: moment, author_email=config.agent.email)
        try:
            # The close reads memory, computes and writes it back whole: a write landing in between would be
            # overwritten, so writers wait (or are told memory is busy) until the close has committed.
            with memory.locked():
                wanted, skipped = ([day], 0) if day is not None else days_to_close(
                    log_history.of(ws), close_day(moment, tz, config.close.late_hours), tz)
                result = compose(memory, config, wanted, moment, use_llm=use_llm, client=client, skipped=skipped)
                if result.status == "closed":
                    result.commit = _commit(ws, result, head)
        except BaseException as err:
            # The tree was clean at HEAD when the close began: putting HEAD back loses nothing.
            if gitio.head_id(repo) == head:
                restore(ws, head, changed_files(ws, head))
            if isinstance(err, WriteRefused):
                raise WriteRefused(f"close failed, nothing changed: {err}", err.violations) from None
            raise
        found = None
        # This close, or one made before whose push failed (the commit only on this disk), about to be pushed.
        if push and overtaken_tries and (result.commit is not None or _unpublished(ws)):
            from gitmem.close import overtaken

            # Under the lock: the branch moves to the remote's tip, which no cycle of this checkout may be writing.
            found = overtaken.overtaken(ws)
            if found is not None:
                try:
                    overtaken.step_aside(ws, found, branch or "")
                except gitio.RepoError as err:     # the branch took a commit since the look: it keeps it
                    unmoved = str(err)
        # Where the push starts: the branch the close began on, and its tip now (its close, or the remote's tip it
        # stepped aside to). What the close does after (push, run again, step aside) is done there only
        # (`_Start.moved`): the human may switch branches at any moment, as git takes no gitmem lock.
        start = _Start(branch or "", gitio.resolve_revision(repo, f"refs/heads/{branch}") if branch else head)
    if found is not None and unmoved:
        return _kept_here(ws, result, start.branch, f"{found.where} got another close first, made at {found.when} "
                          f"({config.path('log')}:{found.line}), and {unmoved}: "
                          + _only_here(start.branch, found.where))
    # A close already made whose push failed (the commit only on this disk) is pushed by running it again.
    if found is None and push and (result.commit or _unpublished(ws)):
        from gitmem.close import overtaken

        where = "/".join(gitio.upstream_of(repo, start.branch))
        try:
            result.push, left_out = _push(ws, result.day, start, watch_closes=overtaken_tries > 0)
        except _MovedWhilePushing as moved:        # nothing moved yet: the branch keeps what it holds
            return _kept_here(ws, result, start.branch, f"{moved.why} since this close's push began: "
                              + _only_here(start.branch, where))
        except overtaken.OvertakenWhilePushing as late:     # another close landed after the look above
            # The push ran outside the lock: the branch is judged again under it before it moves.
            start = _Start(start.branch, late.tip)
            busy: cyclelock.LockHeld | None = None
            moved_off = ""
            try:
                with cyclelock.acquire(gitio.state_dir(repo), what="close"):
                    moved_off = start.moved(ws)      # stepping aside would reset the branch HEAD is on now
                    if not moved_off:
                        found = overtaken.overtaken_by(ws, late.found.upstream, late.found.where)
                        if found is not None:
                            try:
                                overtaken.step_aside(ws, found, start.branch)
                                start = _Start(start.branch, found.upstream)
                            except gitio.RepoError as err:  # a commit since the look: the branch keeps it
                                moved_off = str(err)
            except cyclelock.LockHeld as held:      # a cycle started here meanwhile: HEAD is its to move, not ours
                busy = held
            if busy is not None:
                return _kept_here(ws, result, start.branch, f"{late.found.where} got another close while this one "
                                  "pushed, and " + _left_to(busy, late.found.where))
            if moved_off:
                return _kept_here(ws, result, start.branch, f"{late.found.where} got another close while this one "
                                  f"pushed, and {moved_off}: " + _only_here(start.branch, late.found.where))
            if found is None:       # a commit of another writer came in meanwhile: the branch is not the close's alone
                return _changed_while_pushing(ws, result, late.found.where, start, day=day, use_llm=use_llm,
                                              clock=clock, client=client, overtaken_tries=overtaken_tries)
        else:
            left = overtaken.closes_left_out(ws, left_out)
            if left and result.push.status.exit_code == ExitCode.OK:    # the remote closed their day first
                pushed = _Start(start.branch, result.push.commit or start.tip)
                return _left_out(ws, result, left, pushed, day=day, use_llm=use_llm, clock=clock, client=client,
                                 overtaken_tries=overtaken_tries)
            if result.commit in left:       # rebased away and then not pushed: no commit of this close remains
                result.commit = None
            if result.push.status.exit_code == ExitCode.OK and result.commit is None:
                result.message += f"; pushed what {start.branch} held that the remote did not"
            elif result.push.status.exit_code == ExitCode.OK:
                result.commit = result.push.commit or result.commit
            else:       # conflicted, failed, rewritten, or no remote to push to: the command says so (cli.close)
                where = _branch_place(repo, result.push.side_branch, start.branch)
                result.violations.append(Violation.of(codes.CLOSE_PUSH_FAILED, where, 1,
                                                      message="; ".join(result.push.messages[-2:])))
    if found is not None:           # another close pushed first: close again on what it left
        who = overtaken.who(made_now=result.commit is not None, closes=found.closes)
        stepped = (f"{found.where} got another close first, made at {found.when} ({config.path('log')}:"
                   f"{found.line}): {who} stepped aside")
        said = f"{stepped} and closed again on it"
        moved_off = start.moved(ws)
        if moved_off:
            return _not_again(result, stepped, moved_off, f"back on {start.branch}")
        try:
            again = run_close(ws, day=day, use_llm=use_llm, push=push, clock=clock, client=client,
                              overtaken_tries=overtaken_tries - 1)
        except cyclelock.LockHeld as busy:
            return _not_again(result, said, *_busy(busy))
        again.message = f"{again.message}; {said}"
        return again
    return result


@dataclass(frozen=True)
class _Start:
    """The branch a close's push started from, and its tip then."""
    branch: str
    tip: str

    def moved(self, ws: Workspace) -> str:
        """Why HEAD is no longer where the push started, in a few words ("" when it is): the human switched to
        another branch, detached HEAD, or reset this branch below the tip. The close then neither runs again nor
        steps aside: either would commit a close on, or reset, a branch the close never read, and its push
        publishes whatever branch HEAD is on."""
        repo = ws.repo
        head = gitio.head_id(repo)
        return _off_branch(repo, self.branch) or (
            "" if head is not None and gitio.is_ancestor_id(repo, self.tip, head)
            else f"{self.branch} no longer holds {self.tip[:10]}, where the push started")


def _off_branch(repo: gitio.Repo, branch: str) -> str:
    """Why HEAD is not on `branch` ("" when it is)."""
    now = gitio.current_branch(repo)
    if now is None:
        return f"HEAD left {branch} (it is detached now)"
    return f"HEAD is on {now} now, not {branch}" if now != branch else ""


class _MovedWhilePushing(Exception):
    """Raised from the push's look at the upstream it fetched, before it rebases: HEAD left the close's branch."""

    def __init__(self, why: str) -> None:
        super().__init__(why)
        self.why = why


def _only_here(branch: str, where: str) -> str:
    """What a close that stopped short of pushing leaves, and what to run: the close runs on its own branch only."""
    return (f"nothing was pushed, and what {branch} holds that {where} lacks is only on this disk until `gitmem close "
            f"--push` runs again on {branch}")


def _left_out(ws: Workspace, result: CloseResult, left: tuple[str, ...], pushed: _Start, *, day: date | None,
              use_llm: bool, clock: Clock | None, client: Any, overtaken_tries: int) -> CloseResult:
    """The push published the rest of the branch and left out `left`, close commits made here (this one among
    them, or closes an earlier push left here): the remote held a close of their day first, or the same change
    (gitmem.publish.closed_first). No commit of this close was published, so none is named as committed: the close
    runs again on what the remote now holds, as a close that stepped aside does, and reports what they alone held
    (once more at most `overtaken_tries` times), as long as HEAD is still on the branch `pushed` (at its tip or
    after it)."""
    from gitmem.close import overtaken

    assert result.push is not None
    where = "/".join(gitio.upstream_of(ws.repo, pushed.branch))
    made_now = result.commit is not None and result.commit in left
    who = overtaken.who(made_now=made_now, closes=len(left))
    said = f"{where} held a close of the same day first: the push left out {who}"
    if overtaken_tries <= 0:
        result.commit = None if made_now else result.commit
        result.message += f"; {said}"
        return result
    moved_off = pushed.moved(ws)
    if moved_off:
        return _not_again(result, said, moved_off, f"back on {pushed.branch}")
    try:
        again = run_close(ws, day=day, use_llm=use_llm, push=True, clock=clock, client=client,
                          overtaken_tries=overtaken_tries - 1)
    except cyclelock.LockHeld as busy:
        return _not_again(result, said, *_busy(busy))
    again.message = f"{again.message}; {said}, and the close ran again on what {where} holds"
    first = result.push
    again.push = first if again.push is None else PushReport(
        again.push.status, again.push.side_branch, again.push.commit, [*first.messages, *again.push.messages])
    return again


def _changed_while_pushing(ws: Workspace, result: CloseResult, where: str, start: _Start, *, day: date | None,
                           use_llm: bool, clock: Clock | None, client: Any, overtaken_tries: int) -> CloseResult:
    """The push found another close of the day on `where` before it rebased, and when the close held its lock again
    to step aside, the branch held a commit of another writer (the human's, a cycle's): stepping aside would drop it.
    The close runs again instead, as `_left_out` does (once more at most `overtaken_tries` times): its push replays
    that commit and leaves the closes made here out, as `where` closed their day first
    (gitmem.publish.closed_first), and the close then run on what `where` holds reports what only they held. It runs
    again only while HEAD is on the branch `start` (at its tip or after it): elsewhere it would close and push a
    branch it never read."""
    said = f"{where} got another close while this one pushed, and this branch changed since"
    moved_off = start.moved(ws)
    if moved_off:
        return _kept_here(ws, result, start.branch, f"{said}, and {moved_off}: the close did not run again; "
                          + _only_here(start.branch, where))
    try:
        again = run_close(ws, day=day, use_llm=use_llm, push=True, clock=clock, client=client,
                          overtaken_tries=overtaken_tries - 1)
    except cyclelock.LockHeld as busy:      # a cycle took the lock after the look: HEAD is its to move
        return _kept_here(ws, result, start.branch, f"{said}, and {_left_to(busy, where)}")
    except RunFailure as refused:           # an uncommitted change, a git lock: the close refused to run again
        # The refusal stays a diagnostic of its own, with its code and place; GM803 names it in one line.
        result.violations += failure_violations(refused)
        return _kept_here(ws, result, start.branch, f"{said}, and the close could not run again: {refused}; what "
                          f"this branch holds that {where} lacks is only on this disk until `gitmem close --push` "
                          "runs again")
    again.message = f"{again.message}; {said}: the close ran again on it"
    return again


def _left_to(busy: cyclelock.LockHeld, where: str) -> str:
    """Why a close that found another close of its day on `where` while it pushed left the branch to a cycle."""
    return (f"{busy.holder_named} runs in this checkout now, so the branch was left to it: nothing was pushed, and "
            f"what this branch holds that {where} lacks is only on this disk; once it ends, run `gitmem close "
            f"--push` again (a close of a day {where} closed first is left out)")


def _kept_here(ws: Workspace, result: CloseResult, branch: str, said: str) -> CloseResult:
    """The close's push stopped before anything moved: `branch` keeps what it holds, only on this disk (exit 6).
    What it says is one line (a refusal it quotes may hold several: its own diagnostic lists them)."""
    from gitmem.publish.push import PushStatus

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


def _commit(ws: Workspace, result: CloseResult, head: str) -> str:
    """One commit by the agent identity, after the whole change passes the checks and the close's permissions."""
    config = ws.config
    files, stats = changed_with_stats(ws, head)
    # The seal goes into the commit of the entry that made it due (gitmem.sealing), and is judged with it.
    sealed = sealing.seal(ws, files.get(config.path("log")), files.get(config.path("now")))
    try:
        files.update(sealed.files)       # their stats went with the bytes they replaced: the commit refreshes them
        stats = {path: stat for path, stat in stats.items() if path not in sealed.files}
        problems = check_result(ws, head, files)
        if problems:
            where, line = first_place(problems)
            raise CloseError("the close would leave invalid memory; nothing was committed:\n" + "\n".join(problems),
                             where=where, line=line, code=codes.CLOSE_INVALID_RESULT)
        body = [result.message] + [f"promoted {p['rule']} from {p['lesson']}" for p in result.promoted]
        message = (f"gitmem: close {result.day.isoformat()}\n\n" + "\n".join(body)
                   + f"\n\n{PHASE_TRAILER}\n{generation.trailer()}\n")
        result.message += "".join(f"; {note}" for note in sealed.notes)
        # The close may run in the human's checkout: what else they staged (a merge's conflicts too) stays as it was.
        return gitio.commit_files(ws.repo, files, message, author=config.agent.identity, stats=stats,
                                  keep_staged=True)
    except BaseException:
        sealing.undo(ws, sealed)
        raise


def _catch_up(ws: Workspace) -> str | None:
    """Before a close that pushes reads LOG: the remote branch's commits, when it only added to this branch (a
    fast-forward; the new tip), so that the close reports on the memory it publishes onto. A human's clone pulled
    this morning would otherwise close a day the scheduled close already closed, and report its cycles twice.
    Nothing happens when the remote cannot be read, or has nothing new, or this branch has commits of its own
    (the push rebases them), or the fast-forward would touch an uncommitted change (git refuses it). Nor when
    the remote was rewritten since this checkout last saw it (a force-push, or new commits that rewrite memory):
    the remote-tracking branch is put back, and the push refuses it as it refuses any rewritten upstream,
    keeping the close on a side branch (gitmem.publish.push)."""
    from gitmem.publish.push import fetched_upstream

    repo = ws.repo
    found = fetched_upstream(repo, ws.name or None)
    if found is None or found[0] == gitio.head_id(repo):
        return None
    try:
        gitio.run_git(repo, "merge", "--ff-only", "--quiet", found[0])
    except gitio.GitCommandError:
        return None
    return gitio.head_id(repo)


def _unpublished(ws: Workspace) -> bool:
    """Whether the branch holds commits its upstream lacks (a close whose push failed left them only here), as far
    as the last fetch knows; with no upstream to compare with, pushing is what says so."""
    repo = ws.repo
    branch, head = gitio.current_branch(repo), gitio.head_id(repo)
    if branch is None or head is None:
        return False
    upstream = gitio.remote_branch_oid(repo, *gitio.upstream_of(repo, branch))
    return upstream is None or not gitio.is_ancestor_id(repo, head, upstream)


def _push(ws: Workspace, day: date, start: _Start, *, watch_closes: bool) -> tuple[PushReport, tuple[str, ...]]:
    """What the push came to, and the commits of this branch its rebase left out (gitmem.publish.push.SyncResult).
    The push rebases and publishes `start`'s branch, by name: each time it fetched, before it rebases, HEAD must
    still be on it (`_MovedWhilePushing`)."""
    from gitmem.close import overtaken
    from gitmem.publish.merge import resolver_for
    from gitmem.publish.push import publish

    def on_the_branch() -> None:
        """HEAD on another branch (the human's `git switch` while the push fetched) would be rebased onto this
        branch's upstream and published. A retry's rebase moves the tip, so only the branch is held here."""
        moved_off = _off_branch(ws.repo, start.branch)
        if moved_off:
            raise _MovedWhilePushing(moved_off)

    def before_rebase(upstream: str) -> None:
        """Also: another close that landed after the close's own look would be replayed under (two reports of a
        day)."""
        on_the_branch()
        if not watch_closes:
            return
        found = overtaken.overtaken_by(ws, upstream, f"{remote}/{upstream_branch}")
        if found is not None:
            raise overtaken.OvertakenWhilePushing(found, gitio.head_id(ws.repo) or start.tip)

    on_the_branch()
    # The upstream and the branch published are the close's, whichever branch HEAD is on by the time publish runs.
    remote, upstream_branch = gitio.upstream_of(ws.repo, start.branch)
    # Merged by this workspace's config: its memory files are the ones the rules merge (a LOG append each side).
    outcome = publish(ws.repo, conflict_branch=f"gitmem/close-{day.isoformat()}", resolver=resolver_for(ws.config),
                      remote=remote, branch=upstream_branch, workspace=ws.name or None, before_rebase=before_rebase,
                      local=start.branch)
    # After a rebase the published commit is a new one: report that id, not the local one it replaced.
    return outcome.report(), outcome.left_out
