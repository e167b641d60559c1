"""Helpers for the hostile-input suites: an agent that does whatever a test says, and the contract checks.

The contract every hostile case asserts: the right exit code, no traceback, nothing outside the tree touched,
nothing of the human's lost, and (for checks) the right GM code.
"""
from __future__ import annotations

import json
import re
import shlex
import sys
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path

from gitmem.agents.base import AgentResult, CycleRequest
from gitmem.cycle.runner import CycleReport, Settings, run_cycle
from gitmem.memory import log
from gitmem.workspace import Workspace
from gitmem.workspace.writer import MemoryWriter
from tests.support.helpers import GitRepo

GITMEM = Path(sys.executable).parent / "gitmem"
Act = Callable[[Path, MemoryWriter, CycleRequest], None]


class FixedClock:
    """A clock a test moves by hand."""

    def __init__(self, moment: datetime | None = None) -> None:
        self.moment = moment or datetime(2026, 12, 1, 9, 0, tzinfo=timezone.utc)

    def __call__(self) -> datetime:
        return self.moment


class HostileBackend:
    """In-process: runs `act(root, memory, request)`, then (unless told not to) writes a proper LOG entry and
    NOW block, the way a well-behaved agent ends its cycle."""

    name = "hostile"

    def __init__(self, act: Act, *, finish: bool = True, fail: str | None = None) -> None:
        self.act, self.finish, self.fail = act, finish, fail

    def run(self, request: CycleRequest) -> AgentResult:
        from gitmem.agents.base import AgentError

        memory = MemoryWriter(Workspace.at(request.root, request.config), clock=request.clock,
                              author_email=request.config.agent.email)
        self.act(request.root, memory, request)
        if self.fail:
            raise AgentError(self.fail)
        if self.finish:
            memory.add_log_entry(task="hostile task", outcome="built", result="done", cycle=request.cycle)
            memory.add_now_block(did="hostile task", human="nothing", next="more", cycle=request.cycle)
        return AgentResult(turns=1, usage={}, stop_reason="end_turn")


def cycle(repo: GitRepo, act: Act, *, clock: FixedClock | None = None, finish: bool = True,
          fail: str | None = None) -> CycleReport:
    return run_cycle(repo.ws(), HostileBackend(act, finish=finish, fail=fail),
                     settings=Settings(clock=clock or FixedClock()))


def evidence(repo: GitRepo) -> str:
    """The last LOG entry's Evidence."""
    entries = log.parse(repo.read("LOG.md")).entries
    return entries[-1].get("Evidence") or ""


def command_agent(tmp_path: Path, repo: GitRepo, body: str, *, pass_env: tuple[str, ...] | None = (),
                  write_memory: bool = True) -> Path:
    """A Python agent script (outside the repo) run by the `command` backend: `body` runs with `root`, `os`,
    `subprocess` and `sys` at hand, then it writes its LOG entry and NOW block through the gitmem CLI."""
    script = tmp_path / f"hostile_agent_{abs(hash(body))}.py"
    finish = (f"subprocess.run([{str(GITMEM)!r}, 'log', 'add', '--task', 't', '--outcome', 'built', "
              f"'--result', 'r'], check=True, cwd=root)\n"
              f"subprocess.run([{str(GITMEM)!r}, 'now', 'add', '--did', 'd', '--human', 'nothing', "
              f"'--next', 'n'], check=True, cwd=root)\n") if write_memory else ""
    script.write_text("import os, subprocess, sys\nsys.stdin.read()\nroot = os.environ['GITMEM_ROOT']\n"
                      + body + "\n" + finish, encoding="utf-8")
    command = " ".join(shlex.quote(part) for part in (sys.executable, str(script)))
    text = re.sub(r"(?m)^  #? ?command: .*$", f"  command: {json.dumps(command)}",
                  repo.read("gitmem.yaml").replace("  # backend: anthropic", "  backend: command"))
    if pass_env != ("ANTHROPIC_API_KEY",):      # None: no pass_env key at all (a config from before it existed)
        listing = "".join(f"    - {name}\n" for name in pass_env or ())
        block = "" if pass_env is None else f"  pass_env:\n{listing}" if listing else "  pass_env: []\n"
        text = text.replace("  pass_env:\n    - ANTHROPIC_API_KEY\n", block)
    repo.commit_files({"gitmem.yaml": text}, "use a command agent")
    return script


def no_traceback(text: str) -> bool:
    return "Traceback (most recent call last)" not in text


def tree_files(path: Path) -> dict[str, bytes]:
    """Every regular file under `path` (for "nothing outside the tree was touched")."""
    return {p.relative_to(path).as_posix(): p.read_bytes() for p in sorted(path.rglob("*"))
            if p.is_file() and not p.is_symlink()}
