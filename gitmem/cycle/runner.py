"""The cycle runner: preflight, one agent run, postflight, one commit, optional push. Nothing is lost.

Preflight refuses a dirty tree, a held lock, invalid memory, an unborn or detached HEAD. The agent runs
with a deadline, inside a guard (gitmem.cycle.agent_guard): when it is done, every process it started is ended and
git state and references are put back. Postflight masks secrets, moves edits of protected paths to a proposal
branch with a decision (gitmem.cycle.proposals), reverts forbidden edits, makes sure there is exactly one LOG
entry and one NOW block dated by the clock, validates as `gitmem check` would, and commits as the agent only
paths that were not ignored when the cycle started. If the agent fails, whatever it changed goes to
`gitmem/salvage/cycle-N`, main's work tree is restored, and a `no-build` entry says what happened.
"""
from __future__ import annotations

import os
import shlex
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from gitmem import codes, gitio, sealing
from gitmem.agents import sandbox
from gitmem.agents.base import AgentError, AgentResult, Backend, CycleRequest
from gitmem.checks import CheckInput, has_errors, run_checks
from gitmem.checks.check_and_verify import check_since_checked
from gitmem.checks.violation import Violation
from gitmem.codes import Code
from gitmem.config import CONFIG_NAME, key_line
from gitmem.confined.files import FileRefused
from gitmem.cycle import allowance, killed, postflight, proposals, salvage, schedule
from gitmem.cycle.agent_guard import CycleGuard
from gitmem.cycle.human_commits import all_trusted
from gitmem.cycle.messages import commit_message
from gitmem.cycle.oversize import Held, hold_out
from gitmem.cycle.room import DiskFull, Room, full_failure, is_disk_full, short_of_room
from gitmem.errors import ExitCode, GitmemError, RunFailure
from gitmem.memory import decisions, log, placeholders
from gitmem.memory.display import masked_printable, printable
from gitmem.memory.log import Outcome
from gitmem.memory_writer import WriteRefused
from gitmem.publish.push import PushReport, PushStatus
from gitmem.secrets import scrub
from gitmem.workspace import Clock, Workspace, cyclelock, writelock

RequestBuilder = Callable[[Workspace, int, Clock, str], CycleRequest]   # workspace, cycle, clock, backend


class CycleRefused(RunFailure):
    """The cycle did not start; the message says exactly what to do. Nothing was changed, but for the commits a
    killed cycle's agent left on the branch, which are set aside first (gitmem.cycle.killed) and named."""

    exit_code = ExitCode.DIRTY

    def __init__(self, message: str, code: Code, *, where: str, line: int = 1,
                 details: Sequence[Violation] = ()) -> None:
        super().__init__(message, code=code, where=where, line=line, details=details)

    @classmethod
    def listing(cls, message: str, code: Code, found: Sequence[Violation]) -> CycleRefused:
        """A refusal over the violations `found` (which `message` lists), at the first of them."""
        return cls(message, code, where=found[0].path, line=found[0].line, details=found)

    @classmethod
    def by_setting(cls, ws: Workspace, message: str, code: Code, key: str) -> CycleRefused:
        """A refusal the gitmem.yaml setting `key` caused, at that setting's line (gitmem.config.key_line)."""
        return cls(message, code, where=CONFIG_NAME, line=key_line(ws.root, key))


class PostflightFailed(GitmemError):
    """The agent's memory is still invalid after the runner's corrections; the run is salvaged."""


@dataclass
class Settings:
    push: bool = False
    remote: str | None = None
    tries: int = 5
    backoff: float = 1.0
    sleep: Callable[[float], None] = time.sleep
    clock: Clock | None = None
    grace: float = 30.0          # seconds past the deadline before an in-process backend counts as hung


@dataclass
class CycleReport:
    cycle: int
    outcome: str = Outcome.NO_BUILD
    task: str = ""
    commit: str | None = None
    exit_code: int = ExitCode.OK
    tokens: dict[str, float] = field(default_factory=dict)
    messages: list[str] = field(default_factory=list)
    error: str | None = None
    salvage_branch: str | None = None
    local_branch: str | None = None       # commits made in the checkout during the cycle, kept off the branch
    proposal_branch: str | None = None    # the agent's edits to protected paths, for the human to apply or not
    proposal_decision: str | None = None  # the Pending decision that asks about them
    branches_pushed: list[str] = field(default_factory=list)   # every branch the cycle made, on the remote too
    push: PushReport | None = None        # what the push came to, when the cycle pushed
    pending: list[str] = field(default_factory=list)
    late: str = ""                        # "started late: …" when the workflow's schedule wanted it much earlier
    violations: list[Violation] = field(default_factory=list)   # GM7xx: what went wrong, as data

    @property
    def pushed(self) -> bool:
        return self.push is not None and self.push.status is PushStatus.PUSHED

    @property
    def push_status(self) -> str:
        """The push's PushStatus, "" when the cycle did not push."""
        return self.push.status if self.push is not None else ""

    @property
    def side_branch(self) -> str | None:
        """Where the work went when the push did not land where it was meant to."""
        return self.push.side_branch if self.push is not None else None

    def as_dict(self) -> dict[str, Any]:
        from gitmem.checks.render import as_data

        return {"cycle": self.cycle, "outcome": self.outcome, "task": self.task, "commit": self.commit,
                "exit_code": self.exit_code, "tokens": self.tokens, "error": self.error,
                "salvage_branch": self.salvage_branch, "side_branch": self.side_branch,
                "local_branch": self.local_branch, "proposal_branch": self.proposal_branch,
                "proposal_decision": self.proposal_decision, "branches_pushed": self.branches_pushed,
                "pushed": self.pushed, "push_status": self.push_status,
                "pending": self.pending, "late": self.late, "messages": self.messages,
                "violations": as_data(self.violations)}


def next_cycle(ws: Workspace) -> int:
    """The number this cycle gets, from memory alone: the runner never takes it from the environment."""
    return ws.cycle_for("log", from_env=False)


# -- preflight -----------------------------------------------------------------------------------------------

def preflight(ws: Workspace) -> tuple[cyclelock.Lock, killed.Leftovers]:
    """Refuse to start unless HEAD is a branch tip, no cycle runs, the tree is clean and memory is valid. First,
    with the lock, what a cycle killed while its agent ran left is cleaned up (gitmem.cycle.killed)."""
    repo = ws.repo
    head = gitio.head_id(repo)
    if head is None:
        raise CycleRefused("this repository has no commits yet; commit the memory files first "
                           "(git add -A && git commit -m 'start gitmem'), then run the cycle", codes.CYCLE_NO_COMMITS,
                           where=gitio.shown_path(repo, gitio.git_dir(repo) / "HEAD"))
    held, left = _take_the_checkout(ws)       # a killed cycle's agent may have left HEAD detached: first put back
    try:
        if gitio.current_branch(repo) is None:
            head = gitio.head_id(repo) or head
            raise CycleRefused(f"HEAD is detached at {head[:10]}; a cycle commits to a branch: "
                               f"`{switch_command(repo, head)}` (or the branch to work on), then run the cycle",
                               codes.CYCLE_DETACHED_HEAD, where=gitio.shown_path(repo, gitio.git_dir(repo) / "HEAD"))
        # Memory as it stands first: what reached the branch unchecked is named with its repair (an amendment).
        _require_valid_standing(ws)
        found = [v for v in check_since_checked(ws) if v.is_error]
        if found:
            listing = "\n".join(f"  {v.path}:{v.line}: {v.code} {v.message}"
                                + (f"\n    fix: {v.hint}" if v.hint else "") for v in found)
            raise CycleRefused.listing(f"memory does not pass `gitmem check --worktree`; fix these first:\n{listing}",
                                       codes.CYCLE_INVALID_MEMORY, found)
        _require_filled_rules(ws)
    except BaseException:
        held.release()
        raise
    return held, left


def _take_the_checkout(ws: Workspace) -> tuple[cyclelock.Lock, killed.Leftovers]:
    """The cycle lock, with the tree judged clean (after a killed cycle's leftovers are cleaned up), all under the
    memory write lock. A session's write holds that lock from its check that no cycle runs to its last byte
    (gitmem.memory_writer): so it either ends before the tree is judged, and the cycle refuses its dirty tree,
    or it starts after the cycle lock is taken, and is refused. Never does it land after the judgement, to be
    committed as the agent's words."""
    repo = ws.repo
    try:
        with writelock.held(gitio.state_dir(repo)):
            held = cyclelock.acquire(gitio.state_dir(repo))
            try:
                _require_unlocked(repo)
                branch = gitio.current_branch(repo) or ""
                left = killed.clean_up(repo, ws.root, runner_died=held.stale is not None and held.stale.what == "cycle",
                                       cycle=next_cycle(ws), remote=gitio.upstream_of(repo, branch)[0])
                _require_clean(repo, held, left)
            except BaseException:
                held.release()
                raise
    except (cyclelock.LockHeld, writelock.WritesBusy) as err:
        raise CycleRefused(str(err), codes.CYCLE_LOCK_HELD, where=gitio.shown_path(repo, err.path)) from None
    return held, left


def _require_valid_standing(ws: Workspace) -> None:
    """`check --worktree` judges changes only: a bad heading committed without the check (`--no-verify`, a web
    edit) is judged by nothing after it, and the agent would build on an entry no reader finds. Judge the
    memory the cycle starts from as it stands (gitmem.checks.standing), naming each line and its repair."""
    from gitmem.checks.owned_paths import FOLDER, wrong_kind
    from gitmem.checks.standing import standing

    tree = gitio.worktree_snapshot(ws.root)
    # A folder gitmem writes into that reached the branch as a link, a file or a submodule (`history`, committed
    # before GM908 judged it) would stop every seal for good: named with its fix, never followed.
    found = standing(ws.config, tree.read) + wrong_kind(CheckInput(ws.config, None, tree), kinds=(FOLDER,))
    if found:
        listing = "\n".join(f"  {v.path}:{v.line}: {v.code} {v.message}\n    fix: {v.hint}" for v in found)
        raise CycleRefused.listing(f"memory on this branch is invalid (it was committed without `gitmem check`); "
                                   f"repair it, commit, then run the cycle:\n{listing}",
                                   codes.CYCLE_INVALID_MEMORY, found)


def switch_command(repo: gitio.Repo, head: str) -> str:
    """The switch a detached HEAD needs, naming a branch this repository has: one whose tip is HEAD, else main,
    else the first there is (a repository whose branch is `master` has no `main` to switch to)."""
    names = [ref.removeprefix("refs/heads/") for ref in gitio.references(repo, "refs/heads/")]
    at_head = [name for name in names if gitio.resolve_revision(repo, f"refs/heads/{name}") == head]
    for choice in (at_head, [name for name in names if name == "main"], names):
        if choice:
            return f"git switch {shlex.quote(choice[0])}"
    return "git switch -c main"


def _require_filled_rules(ws: Workspace) -> None:
    """RULES.md goes whole into every prompt: with the template's `<agent name>` still in it, the agent would
    start with no identity and no human to ask. Refuse, naming each line (`gitmem status` flags the same)."""
    path = ws.config.path("rules")
    found = [Violation.of(codes.CYCLE_RULES_PLACEHOLDERS, path, line, "line", text=text)
             for line, text in placeholders.find_placeholders(ws.read("rules"))]
    if found:
        listing = "\n".join(f"  {v.path}:{v.line}: {v.code} {v.message}" for v in found)
        raise CycleRefused.listing(f"{path} still holds the template's placeholders; fill them in and commit, then "
                                   f"run the cycle:\n{listing}", codes.CYCLE_RULES_PLACEHOLDERS, found)


def _require_sandbox(ws: Workspace, backend: Backend) -> None:
    """`agent.sandbox: bubblewrap` where bwrap cannot run, or a box that could not give the agent this work
    tree (`sandbox.tree_problem`): refuse before the agent starts, not salvage after."""
    if not sandbox.needed(ws.config, backend.name):
        return
    try:
        box = sandbox.choose(ws.config)
    except sandbox.SandboxUnavailable as err:
        raise CycleRefused.by_setting(ws, str(err), codes.CYCLE_NO_SANDBOX, err.key) from None
    problem = sandbox.tree_problem(ws) if box.mode == "bubblewrap" else None
    if problem is not None:          # its way out: `agent.sandbox: none`
        raise CycleRefused.by_setting(ws, problem, codes.CYCLE_NO_SANDBOX, "agent.sandbox.mode")


def _require_allowance(ws: Workspace, moment: datetime) -> None:
    """Today's cycles spent the agent's daily cap (gitmem.cycle.allowance): refuse before anything changes."""
    over = allowance.spending_refusal(ws, moment)
    if over is not None:
        raise CycleRefused.by_setting(ws, over.why, codes.CYCLE_OVER_DAILY_CAP, over.key)


def late_note(ws: Workspace, moment: datetime) -> str | None:
    """"started late: …" when the repository's workflow schedule (gitmem.cycle.schedule) wanted a cycle, after
    the last one the runner wrote (a session's entry since is no run of the schedule), well before `moment` (the
    clock's): the cycle says so in its Evidence and output."""
    crons = schedule.workflow_crons(ws.root)
    if not crons:
        return None
    last = log.last_runner_cycle(ws.log_source())
    if last is None:
        return None
    found = schedule.lateness(crons, last.when.moment, moment)
    return found.note() if found is not None else None


def _require_unlocked(repo: gitio.Repo) -> None:
    """A git lock file left in the git directory would make the runner's own index and branch writes fail after
    the agent ran; its guard removes those the agent leaves, so one there now is the human's: refuse, naming it."""
    why = cyclelock.git_locks_refusal(repo)
    if why is not None:       # at the first lock file it names (gone already when its git just ended: at .git)
        found = gitio.lock_files(repo)
        raise CycleRefused(why, codes.CYCLE_GIT_LOCKED, where=found[0].label if found else ".git")


def _require_clean(repo: gitio.Repo, held: cyclelock.Lock, left: killed.Leftovers | None = None) -> None:
    dirty = gitio.dirty_files(repo)
    if not dirty:
        return
    listing = "\n".join(f"  {what}: {path}" for path, what in dirty)
    lines = [f"the work tree has uncommitted changes; a cycle starts only from a clean tree:\n{listing}"]
    lines += left.notes() if left is not None else []
    if held.stale is not None:
        lines.append(f"a previous cycle ({held.stale.describe()}) was killed before it finished; its stale "
                     "lock was cleared, and the changes above are most likely its partial work")
    lines.append("inspect them: git status && git diff\n"
                 "keep them: git stash push --include-untracked -m 'gitmem leftovers' (or commit them), "
                 "then run the cycle again")
    raise CycleRefused("\n".join(lines), codes.CYCLE_DIRTY_TREE, where=dirty[0][0])     # the first file it names


# -- the run -------------------------------------------------------------------------------------------------

def default_request(ws: Workspace, cycle: int, clock: Clock, backend: str) -> CycleRequest:
    """The reading budget (gitmem.cycle.budget); over its hard limit the cycle refuses to start."""
    from gitmem.cycle.budget import BudgetError, build_request

    try:
        return build_request(ws, cycle=cycle, clock=clock, backend=backend)
    except BudgetError as err:
        raise CycleRefused(str(err), codes.CYCLE_OVER_BUDGET, where=err.where) from None   # the largest part


def invoke(backend: Backend, request: CycleRequest, grace: float) -> tuple[AgentResult | None, BaseException | None]:
    """Run the backend in a thread so a hung in-process backend cannot outlive the deadline by much."""
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["result"] = backend.run(request)
        except BaseException as err:   # the runner salvages on any failure, so catch everything
            box["error"] = err

    saved = {key: os.environ.get(key) for key in request.env}
    os.environ.update(request.env)
    try:
        worker = threading.Thread(target=target, name="gitmem-agent", daemon=True)
        worker.start()
        worker.join(max(0.0, request.deadline - time.monotonic()) + grace)
    except KeyboardInterrupt:
        return None, AgentError("interrupted (Ctrl-C) while the agent was running")
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
    if worker.is_alive():
        return None, AgentError(f"timed out after {request.config.cycle.timeout}s")
    return box.get("result"), box.get("error")


def run_cycle(ws: Workspace, backend: Backend, *, settings: Settings | None = None,
              request_builder: RequestBuilder | None = None) -> CycleReport:
    """One cycle, start to commit (and push). Raises CycleRefused before anything changes; otherwise the
    report's exit_code is OK, or SALVAGED when the work went to a named branch."""
    settings = settings or Settings()
    clock = settings.clock or ws.clock()
    repo = ws.repo
    branches = set(gitio.references(repo, "refs/heads/"))     # what the cycle makes beyond these is pushed too
    held, left = preflight(ws)
    branch: str | None = None       # the cycle's: HEAD's when it took the lock; whatever HEAD is on later is not read
    try:
        _require_sandbox(ws, backend)
        _require_allowance(ws, clock())
        late = late_note(ws, clock())
        number = next_cycle(ws)
        report = CycleReport(number)
        if held.stale is not None:
            report.messages.append(f"cleared a stale lock left by {held.stale.describe()}")
        report.messages += left.notes()
        start, branch = gitio.head_id(repo), gitio.current_branch(repo)
        assert start is not None and branch is not None     # preflight refused an unborn or detached HEAD
        known = _known_upstream(repo, settings, branch) if settings.push else None    # before the agent can touch it
        old = postflight.memory_files(ws)
        request = (request_builder or default_request)(ws, number, clock, backend.name)
        context = postflight.context_note(request.total_tokens, ws.config.cycle.max_context_tokens)
        runner_notes = [context, *([late] if late else []), *left.notes()]
        report.messages += [f"context: {warning}" for warning in request.warnings]
        report.messages += [f"runner: {late}"] if late else []
        report.late = late or ""
        report.messages.append(f"cycle {number}: running the {backend.name} backend")
        began = clock()
        killed.open_window(repo, start=start, branch=branch)     # before the guard's snapshot: it is the runner's
        guard = CycleGuard.begin(ws, start=start, branch=branch, cycle=number,
                                 confined=sandbox.confines_disk(ws.config, backend.name))
        room, full = Room(None), None
        try:
            try:  # room on the disk for what the runner writes after the agent (gitmem.cycle.room), made after
                room = Room.keep(ws)                  # the guard's snapshot of .git and given back before its restore
            except DiskFull as err:
                full = err
            # Without a backup of the human's unpushed refs the agent does not run (gitmem.cycle.refs_backup).
            unsafe = guard.unsafe or full
            result, failure = (None, unsafe) if unsafe else invoke(backend, request, settings.grace)
        finally:  # whatever failed above: the agent's processes ended, the walk unpinned
            guard.agent_done()
            room.release()
        try:
            failure = guard.restore() or failure      # git state and refs first: nothing below runs the agent's hooks
        except Exception as err:
            failure = _disk_full(err, "restoring the git state and references after the agent", ws, guard)
        killed.close_window(repo)        # the branch is the runner's from here (its salvage moves it back itself)
        report.messages += [f"runner: {line}" for line in guard.messages]
        if guard.anchor_note:
            report.violations.append(Violation.of(codes.CYCLE_TRUST_ANCHOR_CHANGED, guard.anchors_changed[0], 1,
                                                  message=guard.anchor_note))
        seen = _arrived(ws, guard, report, settings, known) if settings.push and known is not None else None
        usage = result.usage if result is not None else getattr(failure, "usage", None)
        report.tokens = dict(usage) if isinstance(usage, dict) else {}
        if failure is None:
            kept = _local_commits(ws, start, guard, report, settings.remote)
            if isinstance(kept, BaseException):
                failure = kept
            elif kept != start:          # the human's own signed commits: the cycle goes on top of them
                start, old = kept, postflight.memory_files_at(ws, kept)
        if failure is None:
            try:
                failure = _finish(ws, report, result, old, start, clock, runner_notes, guard, began,
                                  settings.remote)
            except Exception as err:
                failure = _disk_full(err, "writing memory and the cycle's commit", ws, guard)
            if failure is not None and is_disk_full(failure) and not isinstance(failure, DiskFull):
                failure = full_failure(failure, "writing memory and the cycle's commit", ws.repo)
        if failure is not None:
            guarded = "".join(f"\nrunner: {printable(note)}" for note in guard.notes)
            spent = postflight.usage_line(report.tokens)
            try:
                _salvage(ws, report, failure, clock=clock, start=start, branch=branch, remote=settings.remote,
                         guard=guard, tokens_line="\n".join(f"runner: {printable(note)}" for note in runner_notes)
                         + f"{guarded}\n{spent}")
            except Exception as err:
                full = _disk_full(err, "saving the failed cycle's work and its no-build entry", ws, guard)
                _salvage_failed(report, full, failure)
        if settings.push:
            _push(ws, report, settings, branch, known, seen, branches)
        pending = decisions.parse(ws.read("decisions")).awaiting
        report.pending = [f"{d.id} · {d.title}" for d in pending]
        # What is printed is masked like what is committed, and shows no escape: a message may quote the agent's
        # own words, or a file name it chose (a salvaged cycle's notes too).
        report.messages = [masked_printable(message) for message in report.messages]
        report.task = scrub(report.task)
        report.error = masked_printable(report.error) if report.error else report.error
        return report
    except BaseException as err:
        if settings.push:       # a failure past the salvage must not leave its branches on this disk alone
            for line in _push_branches_made(ws, settings, branches, branch)[1]:
                err.add_note(f"cycle: {line}")
        raise
    finally:
        held.release()


def _finish(ws: Workspace, report: CycleReport, result: AgentResult | None, old: postflight.MemoryFiles,
            start: str, clock: Clock, runner_notes: list[str], guard: CycleGuard, began: datetime,
            remote: str | None) -> BaseException | None:
    """Postflight and the cycle commit; returns the failure to salvage instead, if any."""
    repo, config = ws.repo, ws.config
    try:
        limit = config.cycle.max_file_bytes
        candidates, held = guard.listed()
        held += hold_out(ws, candidates, report.cycle, exempt=config.memory_paths().values())
        _report_held(report, held, limit)
        cleaned = salvage.scrub_candidates(ws, guard, start)
        proposed = proposals.hold_back(guard, cleaned.paths, clock=clock, remote=remote)
        report.proposal_branch, report.proposal_decision = proposed.branch, proposed.decision
        # The backend's notes quote the agent (its stderr, its last words): no escape may reach LOG or a terminal.
        notes = [masked_printable(n) for n in (result.notes if result else [])]
        # The runner's own notes quote names the agent chose: none may carry an escape either.
        notes += [printable(note) for note in [*guard.notes, *cleaned.notes, *proposed.notes,
                                               *(item.note(limit) for item in held), *runner_notes]]
        settled = postflight.settle(ws, old, cycle=report.cycle, clock=clock, notes=notes,
                                    usage=report.tokens, why_no_log=_why(result), started=start[:12],
                                    kept=report.local_branch, began=began)
        # The seal goes into the commit of the entry that made it due, and is judged with it.
        sealed = sealing.seal_worktree(ws)
        try:
            warned = _validate(ws, start)
        except BaseException:
            sealing.undo(ws, sealed)      # the salvage keeps the agent's work, not the runner's seal
            raise
    except (PostflightFailed, WriteRefused, FileRefused, ValueError, OSError) as err:
        return err       # FileRefused: the agent left a link or a directory where a memory file belongs
    report.task, report.outcome = settled.task, settled.outcome
    report.messages += [f"runner: {note}" for note in [*cleaned.notes, *proposed.notes, *settled.notes]]
    # What the checks report without refusing (GM310: another writer's clock ran fast) reaches the output too.
    report.messages += [f"runner: {v.path}:{v.line}: {v.code} {v.message}" for v in warned]
    report.violations += warned
    if settled.wrote_log:
        report.messages.append(f"the agent wrote no LOG entry: the runner logged no-build (Rule 0): {_why(result)}")
    report.messages += [f"runner: {note}" for note in sealed.notes]
    paths = [*guard.candidates(), *sealed.paths]
    message = commit_message(report.cycle, settled.outcome, settled.task)
    try:
        report.commit = gitio.commit_worktree(repo, paths, message, author=config.agent.identity)
    except BaseException:
        sealing.undo(ws, sealed)
        raise
    report.messages.append(f"committed {report.commit[:10]} {message.splitlines()[0]}")
    return None


def _salvage(ws: Workspace, report: CycleReport, failure: BaseException, *, clock: Clock, start: str, branch: str,
             remote: str | None, guard: CycleGuard, tokens_line: str) -> None:
    """The failed cycle's work to its salvage branch and a no-build entry committed (gitmem.cycle.salvage), into
    the report. Exit 4 either way: when the memory rules refuse even the no-build entry (GM721), nothing is
    committed and the report says why, never the writer's own exit code."""
    try:
        saved = salvage.salvage(ws, cycle=report.cycle, failure=failure, clock=clock, start=start, branch=branch,
                                remote=remote, message=commit_message, guard=guard, tokens_line=tokens_line)
    except salvage.LogRefused as refused:
        report.exit_code, report.error, report.salvage_branch = refused.exit_code, str(refused), refused.branch
        report.messages.append(f"runner: {refused}")
        report.violations.append(Violation.of(refused.code, refused.where, refused.line, message=str(refused)))
        return
    report.exit_code, report.error, report.salvage_branch = ExitCode.SALVAGED, saved.error, saved.branch
    report.commit, report.task, report.outcome = saved.commit, saved.task, Outcome.NO_BUILD
    report.messages += saved.messages
    if isinstance(failure, RunFailure):      # the runner's own failure, with its code
        report.violations.append(Violation.of(failure.code, failure.where, failure.line, message=saved.error))
    else:                                    # at the branch that holds the agent's work, else the cycle's own
        report.violations.append(Violation.of(codes.CYCLE_AGENT_FAILED, gitio.ref_path(ws.repo, saved.branch or branch),
                                              1, message=f"the agent failed: {saved.error}"))


def _disk_full(err: Exception, doing: str, ws: Workspace, guard: CycleGuard) -> DiskFull:
    """`err` as the cycle's DiskFull failure when it says the disk is full, or when a git write failed and the
    disk has less room than the largest file the cycle was writing; any other error goes on up."""
    if isinstance(err, DiskFull):
        return err
    if is_disk_full(err) or (isinstance(err, OSError | gitio.RepoError) and short_of_room(ws.root, guard.candidates())):
        return full_failure(err, doing, ws.repo)
    raise err


def _salvage_failed(report: CycleReport, full: DiskFull, failure: BaseException) -> None:
    """Not even the salvage could be written: nothing was committed and the agent's changes are where it left
    them, in the work tree; the report says so (exit 4, GM725), never a traceback."""
    said = f"{full}; the cycle had failed first: {salvage.error_text(failure)}" if failure is not full else str(full)
    report.exit_code, report.error, report.outcome = ExitCode.SALVAGED, said, Outcome.NO_BUILD
    report.messages.append(f"runner: {said}; nothing was committed and the agent's changes are left in the work "
                           "tree as they are")
    report.violations.append(Violation.of(full.code, full.where, 1, message=said))


def _report_held(report: CycleReport, held: list[Held], limit: int) -> None:
    for item in held:
        report.messages.append(f"runner: {item.note(limit)}")
        report.violations.append(Violation.of(item.code, item.path, 1, message=item.note(limit)))


def _why(result: AgentResult | None) -> str:
    if result is not None and result.diagnosis:
        return masked_printable(result.diagnosis)     # the agent's last words, for LOG: scrubbed, no escapes
    turns = result.turns if result is not None else 0
    why = f" ({result.stop_reason})" if result is not None and result.stop_reason else ""
    return f"it stopped after {turns} turn(s){why} without saying what it did"


def _local_commits(ws: Workspace, start: str, guard: CycleGuard, report: CycleReport,
                   remote: str | None) -> str | BaseException:
    """Commits made in this checkout while the agent ran. Authorship proves nothing here (the agent can commit
    under the human's name), so they never land on the branch as anyone's word: they are kept on a named
    branch (never deleted) and reported, while their files stay in the work tree for postflight to judge.
    The exception: commits all signed by a key in `trust.signing_keys` are the human's; they stay, and the
    cycle is judged and committed on top of them. Returns the commit to judge against, or the failure."""
    repo, branch = ws.repo, guard.branch
    head = gitio.head_id(repo)
    if gitio.current_branch(repo) != branch or head is None:
        where = gitio.current_branch(repo) or "a detached HEAD"
        return AgentError(f"the agent switched from {branch} to {where}")
    if head == start:
        return start
    if not gitio.is_ancestor(repo, start, head):
        return AgentError(f"the agent moved {branch} off {start[:10]}")
    made = list(gitio.walk_range(repo, start, head))
    if all_trusted(repo, [c.id for c in made], ws.config.trust.signing_keys):
        report.messages.append(f"runner: {len(made)} commit(s) signed by a trusted key were made during the "
                               f"cycle; the cycle goes on top of them ({head[:10]})")
        return head
    name = guard.keep_tip(head, remote)
    gitio.reset_mixed(repo, start)
    who = ", ".join(sorted({str(c.author) for c in made}))
    message = (f"{len(made)} commit(s) were made in the runner's checkout during the cycle (by {who}); they are "
               f"kept on branch {name}, not on {branch}: a human's answer reaches memory through the remote "
               "(push it, or merge a pull request), or as a commit signed by a key in trust.signing_keys")
    report.messages.append(f"runner: {message}")
    report.local_branch = name
    report.violations.append(Violation.of(codes.CYCLE_LOCAL_COMMITS, gitio.ref_path(repo, name), 1, message=message))
    return start


def _validate(ws: Workspace, start: str) -> list[Violation]:
    """Refuse memory the checks find errors in (PostflightFailed); return their warnings."""
    from gitmem.checks.check_and_verify import derived_commit
    from gitmem.checks.owned_paths import trusted_paths

    config, repo = ws.config, ws.repo
    paths = trusted_paths(config)
    new = gitio.worktree_snapshot(ws.root, repo=repo)
    found = run_checks(CheckInput(config, derived_commit(repo, start, paths, new.read), new, config.agent.email))
    errors = [v for v in found if v.is_error]
    if has_errors(errors):
        first = "; ".join(f"{v.path}:{v.line}: {v.code} {v.message}" for v in errors[:3])
        raise PostflightFailed(f"memory failed validation after the agent ran: {first}")
    return [v for v in found if not v.is_error]


def _known_upstream(repo: gitio.Repo, settings: Settings, branch: str) -> str | None:
    from gitmem.publish.push import known_upstream

    return known_upstream(repo, settings.remote, branch)


def _arrived(ws: Workspace, guard: CycleGuard, report: CycleReport, settings: Settings, known: str) -> str | None:
    """Fetch the upstream after the agent and name, in Evidence, the commits that changed DECISIONS on it during
    the cycle (gitmem.publish.arrivals): the agent may have pushed an answer as the human. Returns the tip seen."""
    from gitmem.publish.arrivals import decisions_arrived, describe_arrivals

    repo = ws.repo
    remote, branch = gitio.upstream_of(repo, guard.branch)
    remote = settings.remote or remote
    if remote not in gitio.remote_names(repo):
        return None
    try:
        upstream = gitio.fetch(repo, remote, branch)
    except gitio.RepoError as err:
        report.messages.append(f"runner: could not fetch {remote}/{branch} to see what arrived during the cycle: "
                               f"{scrub(str(err))}")
        return None
    if upstream is None or upstream == known or not gitio.is_ancestor(repo, known, upstream):
        return upstream           # nothing new, or a rewrite: the push refuses that (gitmem.publish.push)
    path = ws.config.path("decisions")
    arrived = decisions_arrived(repo, known, upstream, path)
    if arrived:
        note = describe_arrivals(arrived, f"{remote}/{branch}", path)
        guard.notes.append(scrub(note))
        report.messages.append(f"runner: {scrub(note)}")
    return upstream


def _push_branches_made(ws: Workspace, settings: Settings, before: set[str], branch: str | None,
                        skip: tuple[str, ...] = ()) -> tuple[list[str], list[str]]:
    """Push the branches the cycle made (gitmem.publish.push.push_new_branches) to the remote of `branch`, the
    cycle's (None: the cycle failed before it read it), never to the remote of whatever branch HEAD is on by now (a
    human may have switched to a branch of theirs that tracks another remote): (names, messages)."""
    from gitmem.publish.push import push_new_branches

    repo = ws.repo
    remote = settings.remote or (gitio.upstream_of(repo, branch)[0] if branch else "origin")
    if remote not in gitio.remote_names(repo):
        return [], []
    return push_new_branches(repo, remote, before, skip=(*(b for b in (branch,) if b), *skip))


def _push(ws: Workspace, report: CycleReport, settings: Settings, branch: str, known: str | None = None,
          seen: str | None = None, branches: set[str] | None = None) -> None:
    """Publish `branch`, the cycle's, by name: HEAD was checked to be on it (`_local_commits`), and a switch since
    publishes nothing else."""
    from gitmem.publish.merge import resolver_for
    from gitmem.publish.push import publish
    from gitmem.publish.renumber import renumberer_for

    repo = ws.repo
    result = publish(repo, conflict_branch=f"gitmem/cycle-{report.cycle}", remote=settings.remote,
                     tries=settings.tries, backoff=settings.backoff, sleep=settings.sleep,
                     resolver=resolver_for(ws.config), workspace=ws.name or None, known=known,
                     watch=(seen, ws.config.path("decisions")) if seen else None,
                     renumber=renumberer_for(ws.config), local=branch)
    report.messages += result.messages
    report.push = result.report()
    if result.renumbered is not None and result.ok:      # another writer took our number: ours is the next one
        report.cycle = ws.last_log_cycle()
    if result.status.reached_remote:    # a runner's checkout is thrown away: every branch the cycle made goes too
        made = branches if branches is not None else set()
        report.branches_pushed, lines = _push_branches_made(ws, settings, made, branch,
                                                            skip=(result.side_branch or "",))
        report.messages += lines
    if result.ok:
        report.commit = result.commit
        report.messages.append(f"pushed to {result.remote}/{result.branch}")
        return
    report.exit_code = result.status.exit_code
    # At the branch that holds the work: the side branch the push left it on, else the branch it could not push.
    where = gitio.ref_path(repo, result.side_branch or branch)
    if result.status is PushStatus.REWRITTEN:   # never built on: a human decides (gitmem.publish.push)
        report.violations.append(Violation.of(codes.CYCLE_UPSTREAM_REWRITTEN, where, 1,
                                              message="; ".join(result.messages[-2:])))
    elif result.status in (PushStatus.CONFLICT, PushStatus.REFUSED):
        report.commit = result.commit
        code = codes.CYCLE_PUSH_CONFLICT if result.status is PushStatus.CONFLICT else codes.CYCLE_PUSH_REFUSED
        report.violations.append(Violation.of(code, where, 1, message="; ".join(result.messages[-2:])))
    else:
        report.violations.append(Violation.of(codes.CYCLE_PUSH_FAILED, where, 1,
                                              message="; ".join(result.messages[-2:]) or result.status))
