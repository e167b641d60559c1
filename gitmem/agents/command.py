"""The `command` backend: any agent CLI (`claude -p`, `codex exec`, a script) run in the repository root.

The prompt goes on stdin; GITMEM_CYCLE, GITMEM_ROOT and GITMEM_TIMESTAMP go in the environment. The agent
writes memory with `gitmem log add`, `gitmem now add` and the like, and edits other files itself. A non-zero
exit or the timeout is an AgentError, so the runner salvages whatever it changed.

Its environment has no tokens, keys or credentials (gitmem.secrets.agent_environment) except the variables
`agent.pass_env` names: the template passes ANTHROPIC_API_KEY, because an agent CLI needs its model's key.
GitHub tokens never pass. Whatever it leaves running is ended with the cycle (gitmem.cycle.reaper).
"""
from __future__ import annotations

import os
import shlex
import signal
import subprocess
import time
from typing import Any

from gitmem import secrets
from gitmem.agents.base import AgentError, AgentResult, CycleRequest

TAIL_CHARS = 400      # how much of the agent's stderr an error message quotes


class CommandBackend:
    """`agent.command` from config (or `command=`); `timeout` seconds, else the request's deadline."""

    name = "command"

    def __init__(self, config: Any = None, *, command: str | None = None, timeout: float | None = None) -> None:
        self.command = command if command is not None else (config.agent.command if config is not None else "")
        self.timeout = timeout

    def environment(self, request: CycleRequest) -> dict[str, str]:
        kept = secrets.agent_environment(os.environ, request.config.agent.pass_env)
        return {**kept, "GITMEM_CYCLE": str(request.cycle), "GITMEM_ROOT": str(request.root),
                "GITMEM_TIMESTAMP": request.timestamp,
                **secrets.agent_environment(request.env, request.config.agent.pass_env)}

    def run(self, request: CycleRequest) -> AgentResult:
        argv = shlex.split(self.command)
        if not argv:
            raise AgentError("agent.command is empty: set it in gitmem.yaml, for example `command: claude -p`")
        limit = request.deadline - time.monotonic()
        if self.timeout is not None:
            limit = min(limit, self.timeout)
        started = time.monotonic()
        try:
            # Its own session, so a timeout can stop the agent and everything it started.
            process = subprocess.Popen(argv, cwd=request.root, env=self.environment(request), text=True,
                                       stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                       start_new_session=True)
        except OSError as err:
            raise AgentError(f"cannot start the agent command `{argv[0]}`: {err.strerror or err}") from None
        try:
            out, err_text = process.communicate(request.prompt_text(), timeout=max(0.0, limit))
        except subprocess.TimeoutExpired:
            _stop(process)
            shown = f"{limit:.0f}" if limit >= 10 else f"{limit:.1f}"
            raise AgentError(f"the agent command `{argv[0]}` timed out after {shown}s") from None
        except BaseException:
            _stop(process)
            raise
        _stop(process, waited=True)       # the agent's own process group ends with it (the cycle's reaper does the rest)
        if process.returncode != 0:
            tail = " ".join(err_text.strip().split())[-TAIL_CHARS:] or "no error output"
            raise AgentError(f"the agent command `{argv[0]}` exited with code {process.returncode}: {tail}")
        notes = [f"agent command `{argv[0]}` finished in {time.monotonic() - started:.1f}s"]
        last = next((line.strip() for line in reversed(out.splitlines()) if line.strip()), "")
        if last:
            notes.append(f"its last output line: {last[:200]}")
        return AgentResult(turns=1, usage={}, notes=notes)


def _stop(process: subprocess.Popen[str], *, waited: bool = False) -> None:
    """SIGTERM the agent's process group, then SIGKILL what is left after a few seconds. After a normal exit
    (`waited`), what is left of the group is killed at once."""
    if waited:
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        return
    for sig, wait in ((signal.SIGTERM, 5.0), (signal.SIGKILL, 5.0)):
        try:
            os.killpg(process.pid, sig)
        except (ProcessLookupError, PermissionError):
            break
        try:
            process.communicate(timeout=wait)
            return
        except subprocess.TimeoutExpired:
            continue
