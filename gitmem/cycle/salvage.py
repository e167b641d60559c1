"""When a cycle fails: keep what the agent changed on a side branch, restore main, log `no-build`, commit.

Secrets never travel: error text and salvaged files are scrubbed of the API key and token values in the
environment, and of anything that looks like a key (the GM903 patterns).
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from gitmem import gitio, secrets
from gitmem.agents.base import AgentError
from gitmem.cycle.oversize import hold_out
from gitmem.memory import log, now
from gitmem.memory.text import field_value, one_line
from gitmem.secrets import scrub
from gitmem.workspace import Clock, Workspace
from gitmem.workspace.writer import MemoryWriter

FAILED_TASK = "cycle run failed"
SCRUB_MAX_BYTES = 5_000_000     # larger files are not text an agent wrote by hand; left as they are


def error_text(err: BaseException) -> str:
    message = str(err).strip() or type(err).__name__
    if not isinstance(err, AgentError):
        message = f"{type(err).__name__}: {message}"
    text = one_line(scrub(message))
    return text if len(text) <= 300 else text[:297] + "..."


def scrub_files(root: Path, paths: list[str]) -> list[str]:
    """Replace secret values in changed files, in place, before they are committed anywhere."""
    cleaned = []
    for rel in paths:
        full = root / rel
        if full.is_symlink() or not full.is_file() or full.stat().st_size > SCRUB_MAX_BYTES:
            continue
        data = full.read_bytes()
        clean = secrets.redact_bytes(data, secrets.env_values())
        if clean != data:
            full.write_bytes(clean)
            cleaned.append(rel)
    return cleaned


@dataclass
class Salvaged:
    error: str
    commit: str
    branch: str | None = None
    task: str = FAILED_TASK
    messages: list[str] = field(default_factory=list)


def salvage(ws: Workspace, *, cycle: int, failure: BaseException, tokens_line: str | None,
            clock: Clock, start: str, branch: str, remote: str | None,
            message: Callable[[int, str, str, str], str]) -> Salvaged:
    """Save the work tree's changes to `gitmem/salvage/cycle-N`, restore `branch` at `start`, log no-build.

    `message(cycle, outcome, subject, phase)` renders commit messages (the runner's format).
    """
    from gitmem.publish.push import free_branch_name

    repo, config = ws.repo, ws.config
    error = error_text(failure)
    if gitio.current_branch(repo) != branch:
        gitio.switch_head(repo, branch)        # the agent switched branches: back, keeping its files
    head = gitio.head_id(repo)
    if head is None:
        raise gitio.RepoError(f"branch {branch!r} no longer exists; nothing was salvaged")
    if head != start:
        gitio.reset_mixed(repo, start)         # the agent moved HEAD: keep its files, salvage them
    changed = [path for path, _ in gitio.dirty_files(repo)]
    held = hold_out(ws, changed, cycle)         # too big for any branch that is pushed: kept in .git/gitmem/held
    changed = [path for path, _ in gitio.dirty_files(repo)] if held else changed
    identity = gitio.Identity(config.agent.name, config.agent.email)
    saved_on = None
    if changed:
        scrub_files(ws.root, changed)
        saved_on = free_branch_name(repo, f"gitmem/salvage/cycle-{cycle}",
                                    remote or gitio.upstream_of(repo, branch)[0])
        gitio.commit_worktree(repo, changed, message(cycle, "salvage", error, "salvage"), author=identity,
                              ref=f"refs/heads/{saved_on}")
        gitio.restore_worktree(repo)
        saved = f"its changes ({len(changed)} file(s)) are saved on branch {saved_on}"
    else:
        gitio.restore_worktree(repo)
        saved = "it changed no files"
    memory = MemoryWriter(ws, clock=clock, author_email=config.agent.email)
    # `Salvaged` marks a run that did not land: it used up nothing (gitmem.cycle.baseline) and names its branch
    # in full for the close (gitmem.close.report).
    memory.add_log_entry(task=FAILED_TASK, outcome="no-build", cycle=cycle, evidence=tokens_line,
                         result=f"no build: the agent failed ({error}); {saved}",
                         extra={log.SALVAGED: saved_on or "nothing to save"})
    top = now.parse(memory.read("now"), max_blocks=1).top
    following = field_value(top.fields, "Next") if top is not None else None
    inspect = (f"inspect branch {saved_on}: git log -p {saved_on}" if saved_on
               else "nothing to inspect; the cycle can simply run again")
    memory.add_now_block(did=f"cycle {cycle} failed: {error}", human=inspect,
                         next=following or "run the cycle again", cycle=cycle)
    oid = gitio.commit_worktree(repo, [config.path("log"), config.path("now")],
                                message(cycle, "no-build", FAILED_TASK, "cycle"), author=identity)
    notes = [item.note(config.cycle.max_file_bytes) for item in held]
    return Salvaged(error, oid, saved_on, messages=[f"the agent failed: {error}; {saved}", *notes])
