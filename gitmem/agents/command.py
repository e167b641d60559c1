"""The `command` backend: any agent CLI (`claude -p`, `codex exec`, a script) run in the repository root.

The prompt goes on stdin; GITMEM_CYCLE, GITMEM_ROOT, GITMEM_TIMESTAMP and GITMEM_WORKSPACE (the cycle's
workspace, which the `gitmem` commands it runs write to) go in the environment, and the chosen model
(`--model`, agent.model, the Action's `model` input) as ANTHROPIC_MODEL and GITMEM_MODEL. The agent writes
memory with `gitmem log add`, `gitmem now add` and the like, and edits other files itself. A non-zero exit or
the timeout is an AgentError, so the runner salvages whatever it changed.

Its environment has no tokens, keys or credentials (gitmem.secrets.agent_environment) except the variables
`agent.pass_env` names: the template passes ANTHROPIC_API_KEY, because an agent CLI needs its model's key.
GitHub tokens never pass. A model key it names for Anthropic, OpenAI or Gemini is held by the runner, and the
agent gets a placeholder and a loopback endpoint that adds the key (gitmem.agents.key_stand_in); masking stays
the second line. The model variables are set by gitmem from the config, after that scrubbing, so the
parent's cannot override the chosen model. Whatever it leaves running is ended with the cycle
(gitmem.cycle.reaper).

What the CLI prints is read (gitmem.agents.cli_output): token usage and cost where it reports them (`claude -p
--output-format json`, `codex exec --json`) go to the cycle's Evidence, and permission refusals are named, so a
cycle that logged nothing says why: a refusal gets the permissions fix, shell commands that could not start
(exit 127) get the PATH fix, a run that simply did nothing gets its last words. A run that failed is named by
the reason its JSON gives (Codex's `turn.failed`), not by its stderr, and a missing variable that
`agent.pass_env` withholds is named as such.

It runs inside the bubblewrap sandbox `agent.sandbox` chooses (gitmem.agents.sandbox), and the Evidence says
which mode ran.
"""
from __future__ import annotations

import os
import re
import shlex
import shutil
import signal
import subprocess
import time
from typing import Any

from gitmem import secrets
from gitmem.agents import key_stand_in, sandbox
from gitmem.agents.base import AgentError, AgentResult, CycleRequest
from gitmem.agents.cli_output import Reading, read_output
from gitmem.agents.output_tail import Streams

TAIL_CHARS = 400      # how much of the agent's stderr an error message, or a run's Evidence, quotes
TAIL_LINES = 5        # the last lines of stderr a successful run keeps in Evidence
LINE_CHARS = 80       # of each line a failure quotes
FAILURE_TAIL_CHARS = 200
# Codex: "Missing environment variable: `OPENAI_API_KEY`."
MISSING_VARIABLE_RE = re.compile(r"[Mm]issing environment variable:? `?([A-Z][A-Z0-9_]*)`?")
PERMISSIONS_FIX = ("`claude -p --permission-mode acceptEdits --allowedTools \"Bash(gitmem log add:*),Bash(gitmem now "
                   "add:*),…\"` (the template's gitmem.yaml lists them all)")


class CommandBackend:
    """`agent.command` from config (or `command=`); `timeout` seconds, else the request's deadline."""

    name = "command"

    def __init__(self, config: Any = None, *, command: str | None = None, timeout: float | None = None) -> None:
        self.command = command if command is not None else (config.agent.command if config is not None else "")
        self.timeout = timeout

    def environment(self, request: CycleRequest) -> dict[str, str]:
        model = request.config.agent.model
        chosen = {"ANTHROPIC_MODEL": model, "GITMEM_MODEL": model} if model else {}
        # request.env is gitmem's own GITMEM_* of the cycle (budget.CYCLE_ENV): set after the scrubbing.
        return {**secrets.agent_environment(os.environ, request.config.agent.pass_env), **request.env, **chosen}

    def run(self, request: CycleRequest) -> AgentResult:
        """The agent's run, with the model's keys kept outside it (gitmem.agents.key_stand_in): which keys and
        where they go depends on the CLI config the box lets it read."""
        try:
            box = sandbox.choose(request.config)
        except sandbox.SandboxUnavailable as err:    # the runner refuses first; this is for other callers
            raise AgentError(str(err)) from None
        fresh = sandbox.fresh_homes(box, request.config.agent.sandbox.writable)
        with key_stand_in.serving(shlex.split(self.command), self.environment(request), fresh=fresh) as stand_in:
            return self._run(request, stand_in, box)

    def _run(self, request: CycleRequest, stand_in: key_stand_in.StandIn, box: sandbox.SandboxChoice) -> AgentResult:
        argv = stand_in.argv
        if not argv:
            raise AgentError("agent.command is empty: set it in gitmem.yaml (the template's gitmem.yaml has a Claude "
                             "Code command that can write memory)")
        limit = request.deadline - time.monotonic()
        if self.timeout is not None:
            limit = min(limit, self.timeout)
        agent, env = request.config.agent, stand_in.env
        if box.mode == "bubblewrap" and not _findable(argv[0], env.get("PATH"), request.root):
            # Inside, bwrap would start and then fail to exec: say what is missing, as a plain start would.
            relative = "" if os.path.isabs(argv[0]) else " (a relative path is the work tree's)"
            where = (f"no such file {os.path.normpath(os.path.join(request.root, argv[0]))}{relative}"
                     if os.sep in argv[0] else "not found on PATH")
            raise AgentError(f"cannot start the agent command `{argv[0]}`: {where}")
        run_argv, env = box.wrap(argv, env, workspace=request.workspace, keep=(*agent.pass_env, "ANTHROPIC_MODEL"),
                                 writable=agent.sandbox.writable)
        hidden = sandbox.hidden(box, agent.sandbox.writable)
        started = time.monotonic()
        try:
            # Its own session, so a timeout can stop the agent and everything it started.
            process = subprocess.Popen(run_argv, cwd=request.root, env=env,
                                       stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                       start_new_session=True)
        except OSError as err:
            raise AgentError(f"cannot start the agent command `{argv[0]}`: {err.strerror or err}") from None
        # Its output is read as it comes and only a bounded tail is kept (gitmem.agents.output_tail).
        streams = Streams(process, request.prompt_text().encode("utf-8", "surrogateescape"))
        try:
            streams.wait(limit)
        except subprocess.TimeoutExpired:
            _stop(process)
            streams.close()
            shown = f"{limit:.0f}" if limit >= 10 else f"{limit:.1f}"
            raise AgentError(f"the agent command `{argv[0]}` timed out after {shown}s"
                             + "".join(f"; {line}" for line in hidden)) from None
        except BaseException:
            _stop(process)
            streams.close()
            raise
        # The agent's own process group ends with it (the cycle's reaper does the rest).
        _stop(process, waited=True)
        streams.close()
        out, err_text = streams.out.text(), streams.err.text()
        hidden = [*hidden, *(note for note in (streams.out.note("output"), streams.err.note("stderr")) if note)]
        if process.returncode != 0:
            raise AgentError(_failure(argv[0], process.returncode, out, err_text, agent.pass_env)
                             + "".join(f"; {line}" for line in hidden))
        return _result(argv[0], out, err_text, time.monotonic() - started,
                       "; ".join(filter(None, [box.note, *hidden, stand_in.note])))


def _findable(program: str, path: str | None, root: os.PathLike[str]) -> bool:
    """Whether `program` names a file (a path, even one this user may not stat; relative to the work tree
    `root`, where the command runs) or a program on `path`."""
    if os.sep in program:
        return os.path.lexists(os.path.join(root, program))
    return shutil.which(program, path=path) is not None


def _failure(program: str, code: int, out: str, err_text: str, passed: tuple[str, ...]) -> str:
    """Why the agent command failed: the reason its JSON gives (Codex's `turn.failed`, Claude Code's error
    result), else the tail of its stderr, which for a CLI that reports in JSON is often an unrelated warning."""
    reason = read_output(out, err_text).error
    if not reason:
        # Long lines shortened, so the last ones fit in the 300 characters an error keeps (gitmem.cycle.salvage).
        lines = [line if len(line) <= LINE_CHARS else "…" + line[-LINE_CHARS:] for line in err_text.splitlines()]
        tail = " ".join(" ".join(lines).split())[-FAILURE_TAIL_CHARS:] or "no error output"
        return f"the agent command `{program}` exited with code {code}: {tail}"
    said = f"the agent command `{program}` exited with code {code}: {reason}"
    wanted = [name for name in MISSING_VARIABLE_RE.findall(reason) if name not in passed]
    if wanted:
        said += (f" ({', '.join(wanted)} is withheld from the agent unless agent.pass_env in gitmem.yaml names "
                 "it)")
    return said


def _result(program: str, out: str, err_text: str, seconds: float, sandboxed: str) -> AgentResult:
    reading = read_output(out, err_text)
    notes = [f"agent command `{program}` finished in {seconds:.1f}s", sandboxed]
    if reading.last_words:
        what = "its final message" if reading.structured else "its last output line"
        notes.append(f"{what}: {reading.last_words}")
    if reading.refusals:
        notes.append(f"it was refused {len(reading.refusals)} tool call(s) for lack of permission: "
                     + "; ".join(reading.refusals[:3]))
    if reading.error:
        notes.append(f"it reported an error: {reading.error}")
    if reading.not_started:
        notes.append(f"{len(reading.not_started)} shell command(s) could not start: "
                     + "; ".join(reading.not_started[:3]))
    tail = stderr_tail(err_text)
    if tail and tail != reading.last_words:
        notes.append(f"its stderr ended with: {tail}")
    return AgentResult(turns=reading.turns or 1, usage=reading.usage, notes=notes, stop_reason="exit 0",
                       diagnosis=_diagnosis(program, reading))


def stderr_tail(err_text: str) -> str:
    """The last TAIL_LINES non-blank lines of the agent's stderr on one line (` | ` between them), at most
    TAIL_CHARS characters, secrets masked: a warning it printed on its way out reaches Evidence."""
    lines = [" ".join(line.split()) for line in err_text.splitlines() if line.strip()][-TAIL_LINES:]
    text = " | ".join(lines)
    text = text if len(text) <= TAIL_CHARS else "…" + text[-(TAIL_CHARS - 1):]
    return secrets.scrub(text)


def _diagnosis(program: str, reading: Reading) -> str:
    """Why a run that exited 0 may have written no LOG entry, from what it printed."""
    if reading.refusals:
        return (f"`{program}` was refused {len(reading.refusals)} tool call(s) for lack of permission ("
                + "; ".join(reading.refusals[:3]) + "); allow the memory commands in agent.command, e.g. "
                f"{PERMISSIONS_FIX}")
    if reading.error:
        return f"`{program}` reported an error: {reading.error}"
    if reading.not_started:
        return (f"`{program}` ran {len(reading.not_started)} shell command(s) whose program was not found (exit "
                "127): " + "; ".join(reading.not_started[:3]) + ". `gitmem` is not on the PATH of its shell: "
                "Codex runs commands in a login shell, whose profile resets PATH, unless .codex/config.toml says "
                "`allow_login_shell = false` (gitmem init --agent codex writes it; the project must be trusted)")
    said = f"; it ended with: {reading.last_words}" if reading.last_words else "; it printed nothing"
    return (f"`{program}` exited 0 without running `gitmem log add` and with no permission refusal in its "
            f"output{said}. Check that it reads the prompt on stdin and acts on it")


def _stop(process: subprocess.Popen[bytes], *, waited: bool = False) -> None:
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
            process.wait(timeout=wait)
            return
        except subprocess.TimeoutExpired:
            continue
