"""When a cycle fails: keep what the agent changed on a side branch, restore main, log `no-build`, commit.

Secrets never travel: error text and salvaged files are scrubbed of the API key and token values in the
environment, and of anything that looks like a key (the GM903 patterns).
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from gitmem import codes, gitio, sealing, secrets
from gitmem.agents.base import AgentError
from gitmem.cycle.ignore_rules import is_ignore_file
from gitmem.cycle.oversize import hold_out
from gitmem.cycle.scrub import Scrubbed, scrub_paths
from gitmem.errors import ExitCode, RunFailure
from gitmem.memory import log, now
from gitmem.memory.display import masked_printable
from gitmem.memory.fields import field_value
from gitmem.memory.lines import one_line
from gitmem.memory_writer import MemoryWriter, WriteRefused
from gitmem.workspace import Clock, Workspace

if TYPE_CHECKING:
    from gitmem.cycle.agent_guard import CycleGuard

FAILED_TASK = "cycle run failed"


def error_text(err: BaseException) -> str:
    message = str(err).strip() or type(err).__name__
    if not isinstance(err, AgentError | RunFailure):
        message = f"{type(err).__name__}: {message}"
    text = one_line(masked_printable(message))      # it quotes the agent's stderr: no escape reaches LOG or a terminal
    return text if len(text) <= 300 else text[:297] + "..."


def scrub_candidates(ws: Workspace, guard: CycleGuard, start: str) -> Scrubbed:
    """The paths a cycle may commit (not ignored when it started), scrubbed of secrets: contents, link targets,
    new files' names. The secrets allowlist is the start commit's: the agent's edits to it count for nothing."""
    repo = ws.repo
    allow = secrets.Allowlist.parse(gitio.file_at(repo, start, secrets.ALLOWLIST_FILE))
    return scrub_paths(ws.root, guard.candidates(), allow=allow,
                       tracked=lambda path: gitio.file_id_at(repo, start, path) is not None)


class LogRefused(RunFailure):
    """The memory rules refused the runner's own no-build entry (GM721): the branch is left at the start, and
    `branch` (None when the agent changed nothing) holds the agent's work. The cycle ends with a documented code,
    never with the writer's refusal."""

    exit_code = ExitCode.SALVAGED

    def __init__(self, message: str, *, branch: str | None, where: str, line: int, details: Sequence[Any]) -> None:
        super().__init__(message, code=codes.CYCLE_LOG_REFUSED, where=where, line=line, details=details)
        self.branch = branch


@dataclass
class Salvaged:
    error: str
    commit: str
    branch: str | None = None
    task: str = FAILED_TASK
    messages: list[str] = field(default_factory=list)


def salvage(ws: Workspace, *, cycle: int, failure: BaseException, tokens_line: str | None,
            clock: Clock, start: str, branch: str, remote: str | None,
            message: Callable[[int, str, str, str], str], guard: CycleGuard) -> Salvaged:
    """Save the work tree's changes to `gitmem/salvage/cycle-N`, restore `branch` at `start`, log no-build.

    Whatever the agent did to refs, `branch` ends at `start` (recreated if it was deleted); commits the agent
    made on it are kept on `gitmem/local/cycle-N`. Only paths that were not ignored when the cycle started are
    saved and cleaned up (`guard`). `message(cycle, outcome, subject, phase)` renders commit messages.
    """
    from gitmem.publish.push import free_branch_name

    repo, config = ws.repo, ws.config
    error = error_text(failure)
    who = "the cycle failed" if isinstance(failure, RunFailure) else "the agent failed"   # the runner's, or the agent's
    upstream = remote or gitio.upstream_of(repo, branch)[0]
    if gitio.current_branch(repo) != branch:
        gitio.switch_head(repo, branch)        # the agent switched branches: back, keeping its files
    head = gitio.head_id(repo)
    notes: list[str] = []
    if head is None:
        gitio.set_reference(repo, f"refs/heads/{branch}", start)
        notes.append(f"recreated branch {branch} at {start[:10]}")
    elif head != start:
        if not gitio.is_ancestor(repo, head, start):
            kept = guard.keep_tip(head, upstream)
            notes.append(f"commits the agent made are kept on branch {kept}")
        gitio.reset_mixed(repo, start)         # the agent moved HEAD: keep its files, salvage them
    candidates, held = guard.listed()                  # a folder nested too deep is held first
    held += hold_out(ws, candidates, cycle)   # too big for any branch that is pushed: kept in .git/gitmem/held
    cleaned = scrub_candidates(ws, guard, start)
    changed = cleaned.paths
    identity = config.agent.identity
    saved_on = None
    if changed:
        saved_on = free_branch_name(repo, f"gitmem/salvage/cycle-{cycle}", upstream)
        gitio.commit_worktree(repo, changed, message(cycle, "salvage", error, "salvage"), author=identity,
                              ref=f"refs/heads/{saved_on}")
        # The human's ignore files first: the agent's `*` would keep what it hid in the tree, and out of the reset.
        gitio.restore_paths(repo, [path for path in changed if is_ignore_file(path)])
        gitio.restore_worktree(repo, only=changed)
        saved = f"its changes ({len(changed)} file(s)) are saved on branch {saved_on}"
    else:
        gitio.restore_worktree(repo, only=())
        saved = "it changed no files"
    saved = "; ".join([saved, *notes])
    memory = MemoryWriter(ws, clock=clock, author_email=config.agent.email)
    # `Salvaged` marks a run that did not land: it used up nothing (gitmem.cycle.baseline) and names its branch
    # in full for the close (gitmem.close.day_report).
    try:
        memory.add_log_entry(task=FAILED_TASK, outcome=log.Outcome.NO_BUILD, cycle=cycle, evidence=tokens_line,
                             result=f"no build: {who} ({error}); {saved}",
                             extra={log.SALVAGED: saved_on or "nothing to save"})
        top = now.parse(memory.read("now"), max_blocks=1).top
        following = field_value(top.fields, "Next") if top is not None else None
        inspect = (f"inspect branch {saved_on}: git log -p {saved_on}" if saved_on
                   else "nothing to inspect; the cycle can simply run again")
        memory.add_now_block(did=f"cycle {cycle} failed: {error}", human=inspect,
                             next=following or "run the cycle again", cycle=cycle)
    except WriteRefused as err:
        gitio.restore_worktree(repo, only=[config.path("log"), config.path("now")])
        found = "; ".join(f"{v.path}:{v.line}: {v.code} {v.message}" for v in err.violations[:3])
        # At the branch holding the agent's work; with none, at what the rules refused (else the cycle's branch).
        where, line = (err.violations[0].path, err.violations[0].line) if err.violations and not saved_on \
            else (gitio.ref_path(repo, saved_on or branch), 1)
        raise LogRefused(f"{who} ({error}), and the memory rules refused the runner's no-build entry for cycle "
                         f"{cycle} ({found or err}): nothing was committed to {branch}; {saved}; fix the memory "
                         "on the branch (`gitmem check --worktree`, `gitmem status`), then run the cycle again",
                         branch=saved_on, where=where, line=line, details=err.violations) from None
    sealed = sealing.seal_worktree(ws)       # in the commit of the entry that made it due (gitmem.sealing)
    try:
        oid = gitio.commit_worktree(repo, [config.path("log"), config.path("now"), *sealed.paths],
                                    message(cycle, log.Outcome.NO_BUILD, FAILED_TASK, "cycle"), author=identity)
    except BaseException:
        sealing.undo(ws, sealed)
        raise
    held_notes = [item.note(config.cycle.max_file_bytes) for item in held]
    return Salvaged(error, oid, saved_on, messages=[f"{who}: {error}; {saved}", *held_notes,
                                                    *(f"runner: {note}" for note in [*cleaned.notes, *sealed.notes])])
