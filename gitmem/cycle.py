"""The cycle runner: preflight, one agent run, postflight, one commit, optional push. Nothing is lost.

Preflight refuses a dirty tree, a held lock, invalid memory, an unborn or detached HEAD. The agent runs
with a deadline. Postflight reverts forbidden edits, makes sure there is exactly one LOG entry and one NOW
block, validates as `gitmem check` would, and commits as the agent. If the agent fails, whatever it changed
goes to `gitmem/salvage/cycle-N`, main's work tree is restored, and a `no-build` entry says what happened.
"""
from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gitmem import exitcodes, lock, postflight, salvage, sync
from gitmem import repo as git
from gitmem.agents.base import AgentError, AgentResult, Backend, CycleRequest
from gitmem.checks import CheckInput, has_errors, run_checks
from gitmem.config import Config
from gitmem.memory import decisions
from gitmem.memory.text import one_line
from gitmem.salvage import scrub
from gitmem.store import Clock, Memory, WriteRefused, system_clock
from gitmem.validate import check_worktree

RequestBuilder = Callable[[Path, Config, int, Clock, str], CycleRequest]   # root, config, cycle, clock, backend


class CycleRefused(Exception):
    """The cycle did not start; the message says exactly what to do. Nothing was changed."""

    exit_code = exitcodes.DIRTY


class PostflightFailed(Exception):
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
    outcome: str = "no-build"
    task: str = ""
    commit: str | None = None
    exit_code: int = exitcodes.OK
    tokens: dict[str, int] = field(default_factory=dict)
    messages: list[str] = field(default_factory=list)
    error: str | None = None
    salvage_branch: str | None = None
    side_branch: str | None = None
    pushed: bool = False
    pending: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {"cycle": self.cycle, "outcome": self.outcome, "task": self.task, "commit": self.commit,
                "exit_code": self.exit_code, "tokens": self.tokens, "error": self.error,
                "salvage_branch": self.salvage_branch, "side_branch": self.side_branch, "pushed": self.pushed,
                "pending": self.pending, "messages": self.messages}


def next_cycle(root: Path, config: Config) -> int:
    """The number this cycle gets: one past the last logged cycle, or the one NOW already opened."""
    memory = Memory(root, config)
    return max(memory.last_log_cycle() + 1, memory.top_now_cycle())


def agent_identity(config: Config) -> git.Identity:
    return git.Identity(config.agent.name, config.agent.email)


def commit_message(cycle: int, outcome: str, task: str, phase: str = "cycle") -> str:
    subject = one_line(task)
    subject = subject if len(subject) <= 100 else subject[:99] + "…"
    return f"gitmem: cycle {cycle} · {outcome} · {subject}\n\nGitmem-Cycle: {cycle}\nGitmem-Phase: {phase}\n"


# -- preflight -----------------------------------------------------------------------------------------------

def preflight(repository: Any, config: Config) -> lock.Lock:
    """Refuse to start unless HEAD is a branch tip, no cycle runs, the tree is clean and memory is valid."""
    if repository.head_is_unborn:
        raise CycleRefused("this repository has no commits yet; commit the memory files first "
                           "(git add -A && git commit -m 'start gitmem'), then run the cycle")
    if git.current_branch(repository) is None:
        head = git.head_commit(repository)
        assert head is not None         # the unborn case was refused just above
        short = str(head.id)[:10]
        raise CycleRefused(f"HEAD is detached at {short}; a cycle commits to a branch: `git switch main` "
                           "(or the branch to work on), then run the cycle")
    try:
        held = lock.acquire(git.git_dir(repository))
    except lock.LockHeld as err:
        raise CycleRefused(str(err)) from None
    try:
        _require_clean(repository, held)
        found = [v for v in check_worktree(repository, config) if v.is_error]
        if found:
            listing = "\n".join(f"  {v.path}:{v.line}: {v.code} {v.message}" for v in found)
            raise CycleRefused(f"memory does not pass `gitmem check --worktree`; fix these first:\n{listing}")
    except BaseException:
        held.release()
        raise
    return held


def _require_clean(repository: Any, held: lock.Lock) -> None:
    dirty = git.dirty_files(repository)
    if not dirty:
        return
    listing = "\n".join(f"  {what}: {path}" for path, what in dirty)
    lines = [f"the work tree has uncommitted changes; a cycle starts only from a clean tree:\n{listing}"]
    if held.stale is not None:
        lines.append(f"a previous cycle ({held.stale.describe()}) was killed before it finished; its stale "
                     "lock was cleared, and the changes above are most likely its partial work")
    lines.append("inspect them: git status && git diff\n"
                 "keep them: git stash push --include-untracked -m 'gitmem leftovers' (or commit them), "
                 "then run the cycle again")
    raise CycleRefused("\n".join(lines))


# -- the run -------------------------------------------------------------------------------------------------

def default_request(root: Path, config: Config, cycle: int, clock: Clock, backend: str) -> CycleRequest:
    """The reading budget (gitmem.context); over its hard limit the cycle refuses to start."""
    from gitmem.context import BudgetError, build_request

    try:
        return build_request(root, config, cycle=cycle, clock=clock, backend=backend)
    except BudgetError as err:
        raise CycleRefused(str(err)) from None


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


def run_cycle(repository: Any, config: Config, backend: Backend, *, settings: Settings | None = None,
              request_builder: RequestBuilder | None = None) -> CycleReport:
    """One cycle, start to commit (and push). Raises CycleRefused before anything changes; otherwise the
    report's exit_code is OK, or SALVAGED when the work went to a named branch."""
    settings = settings or Settings()
    clock = settings.clock or system_clock(config)
    root = git.root(repository)
    held = preflight(repository, config)
    try:
        number = next_cycle(root, config)
        report = CycleReport(number)
        if held.stale is not None:
            report.messages.append(f"cleared a stale lock left by {held.stale.describe()}")
        start, branch = git.head_commit(repository), git.current_branch(repository)
        assert branch is not None       # preflight just refused a detached HEAD
        old = postflight.memory_texts(root, config)
        request = (request_builder or default_request)(root, config, number, clock, backend.name)
        report.messages += [f"context: {warning}" for warning in request.warnings]
        report.messages.append(f"cycle {number}: running the {backend.name} backend")
        result, failure = invoke(backend, request, settings.grace)
        usage = result.usage if result is not None else getattr(failure, "usage", None)
        report.tokens = dict(usage) if isinstance(usage, dict) else {}
        if failure is None:
            failure = _fold_agent_commits(repository, start, branch, report)
        if failure is None:
            failure = _finish(repository, config, report, result, old, start, clock)
        if failure is not None:
            saved = salvage.salvage(repository, config, cycle=number, failure=failure, clock=clock, start=start,
                                    branch=branch, remote=settings.remote, message=commit_message,
                                    tokens_line=postflight.usage_line(report.tokens))
            report.exit_code, report.error, report.salvage_branch = exitcodes.SALVAGED, saved.error, saved.branch
            report.commit, report.task, report.outcome = saved.commit, saved.task, "no-build"
            report.messages += saved.messages
        if settings.push:
            _push(repository, config, report, settings)
        pending = decisions.parse(Memory(root, config).read("decisions")).pending
        report.pending = [f"{d.id} · {d.title}" for d in pending]
        return report
    finally:
        held.release()


def _finish(repository: Any, config: Config, report: CycleReport, result: AgentResult | None,
            old: dict[str, str | None], start: Any, clock: Clock) -> BaseException | None:
    """Postflight and the cycle commit; returns the failure to salvage instead, if any."""
    root = git.root(repository)
    try:
        cleaned = salvage.scrub_files(root, [path for path, _ in git.dirty_files(repository)])
        notes = [scrub(n) for n in (result.notes if result else [])]
        notes += [f"removed a secret value from {path} before committing" for path in cleaned]
        settled = postflight.settle(root, config, old, cycle=report.cycle, clock=clock, notes=notes,
                                    usage=report.tokens, why_no_log=_why(result))
        _validate(repository, config, start)
    except (PostflightFailed, WriteRefused, ValueError, OSError) as err:
        return err
    report.task, report.outcome = settled.task, settled.outcome
    report.messages += [f"runner: {note}" for note in settled.notes]
    if settled.wrote_log:
        report.messages.append("the agent wrote no LOG entry: the runner logged no-build (Rule 0)")
    paths = [path for path, _ in git.dirty_files(repository)]
    message = commit_message(report.cycle, settled.outcome, settled.task)
    report.commit = str(git.commit_worktree(repository, paths, message, author=agent_identity(config)))
    report.messages.append(f"committed {report.commit[:10]} {message.splitlines()[0]}")
    return None


def _why(result: AgentResult | None) -> str:
    turns = result.turns if result is not None else 0
    why = f" ({result.stop_reason})" if result is not None and result.stop_reason else ""
    return f"it stopped after {turns} turn(s){why} without saying what it did"


def _fold_agent_commits(repository: Any, start: Any, branch: str, report: CycleReport) -> BaseException | None:
    """An agent CLI may commit on its own. Its commits are folded into the one cycle commit."""
    head = git.head_commit(repository)
    if git.current_branch(repository) != branch or head is None:
        where = git.current_branch(repository) or "a detached HEAD"
        return AgentError(f"the agent switched from {branch} to {where}")
    if head.id == start.id:
        return None
    if not git.is_ancestor(repository, start, head):
        return AgentError(f"the agent moved {branch} off {str(start.id)[:10]}")
    git.reset_mixed(repository, start.id)
    report.messages.append(f"runner: the agent committed on its own; folded into the cycle commit "
                           f"(its commits remain reachable as {str(head.id)[:10]})")
    return None


def _validate(repository: Any, config: Config, start: Any) -> None:
    paths = list(config.memory_paths().values())
    found = run_checks(CheckInput(config, git.commit_snapshot(repository, start, paths),
                                  git.worktree_snapshot(git.root(repository), paths), config.agent.email))
    errors = [v for v in found if v.is_error]
    if has_errors(errors):
        first = "; ".join(f"{v.path}:{v.line}: {v.code} {v.message}" for v in errors[:3])
        raise PostflightFailed(f"memory failed validation after the agent ran: {first}")


def _push(repository: Any, config: Config, report: CycleReport, settings: Settings) -> None:
    from gitmem.merge import resolver_for

    result = sync.publish(repository, conflict_branch=f"gitmem/cycle-{report.cycle}", remote=settings.remote,
                          tries=settings.tries, backoff=settings.backoff, sleep=settings.sleep, scrub=scrub,
                          resolver=resolver_for(config))
    report.messages += result.messages
    if report.salvage_branch and result.status in ("pushed", "conflict"):
        try:
            git.push(repository, result.remote, report.salvage_branch, report.salvage_branch)
            report.messages.append(f"pushed {report.salvage_branch} to {result.remote}")
        except git.GitCommandError as err:
            report.messages.append(f"could not push {report.salvage_branch}: {scrub(str(err))}")
    if result.ok:
        report.pushed = True
        report.commit = result.commit
        report.messages.append(f"pushed to {result.remote}/{result.branch}")
        return
    report.exit_code = exitcodes.SALVAGED
    if result.status == "conflict":
        report.side_branch = result.side_branch
        report.commit = result.commit


# -- reporting for CI ------------------------------------------------------------------------------------------

def github_output(report: CycleReport) -> str:
    """Lines for $GITHUB_OUTPUT; the Action reads cycle, outcome and commit."""
    return f"cycle={report.cycle}\noutcome={report.outcome}\ncommit={report.commit or ''}\n"


def step_summary(report: CycleReport) -> str:
    """A short markdown account for $GITHUB_STEP_SUMMARY."""
    tokens = ", ".join(f"{k} {v}" for k, v in report.tokens.items()) or "not reported"
    lines = [f"### gitmem cycle {report.cycle}: {report.outcome}", "",
             f"- Task: {one_line(report.task) or '-'}", f"- Commit: `{(report.commit or '-')[:12]}`",
             f"- Tokens: {tokens}"]
    if report.error:
        lines.append(f"- Error: {report.error}")
    for name, value in (("Salvage branch", report.salvage_branch), ("Conflict branch", report.side_branch)):
        if value:
            lines.append(f"- {name}: `{value}`")
    waiting = "; ".join(report.pending) if report.pending else "none"
    lines.append(f"- Decisions waiting: {waiting}")
    return "\n".join(lines) + "\n\n"
