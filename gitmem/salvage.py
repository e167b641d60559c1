"""When a cycle fails: keep what the agent changed on a side branch, restore main, log `no-build`, commit.

Secrets never travel: error text and salvaged files are scrubbed of the API key and token values in the
environment, and of anything that looks like a key (the GM903 patterns).
"""
from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gitmem import repo as git
from gitmem.agents.base import AgentError
from gitmem.config import Config
from gitmem.memory import now
from gitmem.memory.text import field_value, one_line
from gitmem.store import Clock, Memory

SECRET_ENV = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "GITHUB_TOKEN", "GH_TOKEN", "GITMEM_GIT_TOKEN")
SCRUB_MAX_BYTES = 5_000_000     # larger files are not text an agent wrote by hand; left as they are
FAILED_TASK = "cycle run failed"


def _secret_values() -> list[bytes]:
    return [value.encode() for name in SECRET_ENV if len(value := os.environ.get(name, "")) >= 8]


def scrub_bytes(data: bytes) -> bytes:
    from gitmem.checks.repo_wide import SECRET_PATTERNS

    for value in _secret_values():
        data = data.replace(value, b"***")
    for pattern, _ in SECRET_PATTERNS:
        data = pattern.sub(b"***", data)
    return data


def scrub(text: str) -> str:
    """Remove secret values (the API key, tokens) from text bound for a message, a file or a log."""
    return scrub_bytes(text.encode("utf-8", "replace")).decode("utf-8", "replace")


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
        clean = scrub_bytes(data)
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


def salvage(repository: Any, config: Config, *, cycle: int, failure: BaseException, tokens_line: str | None,
            clock: Clock, start: Any, branch: str, remote: str | None,
            message: Callable[[int, str, str, str], str]) -> Salvaged:
    """Save the work tree's changes to `gitmem/salvage/cycle-N`, restore `branch` at `start`, log no-build.

    `message(cycle, outcome, subject, phase)` renders commit messages (the runner's format).
    """
    from gitmem.sync import free_branch_name

    root = git.root(repository)
    error = error_text(failure)
    if git.current_branch(repository) != branch:
        git.switch_head(repository, branch)        # the agent switched branches: back, keeping its files
    head = git.head_commit(repository)
    if head is None:
        raise git.RepoError(f"branch {branch!r} no longer exists; nothing was salvaged")
    if head.id != start.id:
        git.reset_mixed(repository, start.id)      # the agent moved HEAD: keep its files, salvage them
    changed = [path for path, _ in git.dirty_files(repository)]
    identity = git.Identity(config.agent.name, config.agent.email)
    saved_on = None
    if changed:
        scrub_files(root, changed)
        saved_on = free_branch_name(repository, f"gitmem/salvage/cycle-{cycle}",
                                    remote or git.upstream_of(repository, branch)[0])
        git.commit_worktree(repository, changed, message(cycle, "salvage", error, "salvage"), author=identity,
                            ref=f"refs/heads/{saved_on}")
        git.restore_worktree(repository)
        saved = f"its changes ({len(changed)} file(s)) are saved on branch {saved_on}"
    else:
        git.restore_worktree(repository)
        saved = "it changed no files"
    memory = Memory(root, config, clock=clock, author_email=config.agent.email)
    memory.add_log_entry(task=FAILED_TASK, outcome="no-build", cycle=cycle, evidence=tokens_line,
                         result=f"no build: the agent failed ({error}); {saved}")
    top = now.parse(memory.read("now"), max_blocks=1).top
    following = field_value(top.fields, "Next") if top is not None else None
    inspect = (f"inspect branch {saved_on}: git log -p {saved_on}" if saved_on
               else "nothing to inspect; the cycle can simply run again")
    memory.add_now_block(did=f"cycle {cycle} failed: {error}", human=inspect,
                         next=following or "run the cycle again", cycle=cycle)
    oid = git.commit_worktree(repository, [config.path("log"), config.path("now")],
                              message(cycle, "no-build", FAILED_TASK, "cycle"), author=identity)
    return Salvaged(error, str(oid), saved_on, messages=[f"the agent failed: {error}; {saved}"])
