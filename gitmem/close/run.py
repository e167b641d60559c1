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
The writes are composed in memory by `gitmem.close.compose`; this module holds the lock and commits, and
`gitmem.close.push_race` pushes.
"""
from __future__ import annotations

from datetime import date
from typing import Any

from gitmem import codes, gitio, sealing
from gitmem.checks import generation
from gitmem.close import push_race
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
from gitmem.memory_writer import MemoryWriter, WriteRefused
from gitmem.publish.closed_first import PHASE_TRAILER
from gitmem.workspace import Clock, Workspace, cyclelock, log_history


def run_close(ws: Workspace, *, day: date | None = None, use_llm: bool = False,
              push: bool = False, clock: Clock | None = None, client: Any = None,
              overtaken_tries: int = 3) -> CloseResult:
    """Close `day` (default: `close_day`, today in the configured zone or the day before). `client` replaces the
    Anthropic client in tests. With `push`, a close another close beat to the remote closes again on it, at most
    `overtaken_tries` times (gitmem.close.push_race)."""
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
        # Where the push starts, and what it found first: from here on the close acts on the branch it began on
        # only (gitmem.close.push_race).
        looked = push_race.look(ws, result, branch, tries=overtaken_tries) if push and branch is not None else None
    if looked is None:
        return result

    def again() -> CloseResult:
        return run_close(ws, day=day, use_llm=use_llm, push=True, clock=clock, client=client,
                         overtaken_tries=overtaken_tries - 1)

    return push_race.push_close(ws, result, looked, again=again, tries=overtaken_tries)


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
