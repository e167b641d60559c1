"""The session hooks of Claude Code and GitHub Copilot CLI: the JSON each sends on stdin in, the JSON it reads from
stdout out.

The two hosts differ only where this module says so (HOSTS): Claude Code sends `session_id` and reads the
context under `hookSpecificOutput`; Copilot CLI (its `.github/hooks/*.json`, events sessionStart and agentStop)
sends `sessionId` and reads a top-level `additionalContext`. Both send `cwd` and `stop_hook_active`, and both
read a Stop hook's `{"decision": "block", "reason": …}` (tried with Copilot CLI 1.0.102: the reason reaches the
model, and the next stop comes with `stop_hook_active` true).

- SessionStart (on startup, resume, clear and after a compaction): the compact memory
  (gitmem.sessions.context) as `additionalContext`, and, the first time a session id is seen, a record of
  the work tree (gitmem.sessions.record): while a cycle or a close runs in the checkout, of the committed tree
  for the paths it may change, whose uncommitted state is its agent's.
- Stop (after every assistant turn): Rule 0 for an interactive session. If the session changed files since
  it started but wrote no LOG entry, block once, with a reason telling the agent to log. Never when
  `stop_hook_active` is set (Claude Code is already continuing because of a stop hook), never twice in a
  session, so it cannot loop.

Both stay silent (None: print nothing) inside a runner cycle (GITMEM_CYCLE set: the cycle has its own
budget and its own Rule 0), outside a memory repository, and when anything goes wrong: a hook must never
break the human's session. What went wrong is returned as a note for stderr. Stop is silent too while a cycle or
a close runs in the checkout: what changes in the tree then is its agent's, not the session's (nor are the
commits the runner makes: gitmem.sessions.record).
"""
from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from gitmem.errors import GitmemError
from gitmem.sessions.locate import find_workspace, working_directory
from gitmem.workspace import Workspace, cyclelock, runner_cycle

PROJECT_ENV = "CLAUDE_PROJECT_DIR"
CLAUDE, COPILOT = "claude", "copilot"
HOSTS = (CLAUDE, COPILOT)
SHOWN_PATHS = 5


@dataclass(frozen=True)
class HookAnswer:
    output: dict[str, Any] | None = None     # the JSON to print; None: print nothing
    note: str = ""                           # for stderr (Claude Code shows it in verbose mode only)


def _workspace(payload: Mapping[str, Any], workspace: str | None) -> Workspace | None:
    cwd = payload.get("cwd")         # the payload is the host's: a cwd that is not text is no place to look
    return find_workspace([cwd if isinstance(cwd, str) else None, os.environ.get(PROJECT_ENV), working_directory()],
                          workspace)


def _session_id(payload: Mapping[str, Any]) -> str:
    """The host's session id: Claude Code's `session_id`, Copilot CLI's `sessionId`."""
    return str(payload.get("session_id") or payload.get("sessionId") or "")


def _context_answer(context: str, host: str) -> dict[str, Any]:
    if host == COPILOT:
        return {"additionalContext": context}
    return {"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": context}}


def session_start_answer(payload: Mapping[str, Any], *, workspace: str | None = None, host: str = CLAUDE) -> HookAnswer:
    try:
        if runner_cycle() is not None:
            return HookAnswer(note="inside a runner cycle: the cycle prompt already holds the memory")
        ws = _workspace(payload, workspace)
        if ws is None:
            return HookAnswer(note="not in a gitmem memory repository: nothing to add")
        from gitmem.sessions import record
        from gitmem.sessions.context import session_context

        session = _session_id(payload)
        unrecorded = ""
        try:
            if session and ws.state_dir is not None and record.load_record(ws, session) is None:
                unrecorded = _record_start(ws, session)
        except GitmemError as err:        # a planted link in .git/gitmem: the session still gets its memory
            unrecorded = f"{err}: the session's start is not recorded, so Rule 0 is not enforced at its end"
        context = session_context(ws)
    except (GitmemError, OSError, ValueError) as err:
        return HookAnswer(note=f"{err}: the session starts without the memory")
    return HookAnswer(_context_answer(context, host), note=unrecorded)


def _record_start(ws: Workspace, session: str) -> str:
    """Record the session's start (gitmem.sessions.record), unless a cycle's agent may be acting now: its guard would
    remove the record as the agent's change. A note saying so, or ""."""
    from gitmem.sessions import record

    if record.guarded(ws):
        return ("a cycle's agent is running in this checkout, and the runner puts .git/gitmem back after it: the "
                "session's start is recorded at its first Stop after the agent")
    record.prune(ws)
    record.save(ws, record.snapshot_session(ws, session))
    return ""


def stop_answer(payload: Mapping[str, Any], *, workspace: str | None = None) -> HookAnswer:
    try:
        inside = runner_cycle() is not None
    except GitmemError as err:
        return HookAnswer(note=f"{err}; not enforcing Rule 0")
    if inside:
        return HookAnswer(note="inside a runner cycle: the runner enforces Rule 0")
    if payload.get("stop_hook_active"):
        return HookAnswer(note="a stop hook already made this session continue: not blocking again")
    try:
        ws = _workspace(payload, workspace)
        session = _session_id(payload)
        if ws is None or not session or ws.state_dir is None:
            return HookAnswer(note="no memory repository or no session id: nothing to enforce")
        holder = cyclelock.running_elsewhere(ws.state_dir)
        if holder is not None:
            # What changes in the tree now is the running agent's, and a session's LOG write is refused until it
            # ends (MemoryWriter.require_session_may_write): asking the session to log would ask for the refused.
            # A start not recorded yet (its hook ran while the agent could act) is recorded now, if it may be.
            from gitmem.sessions import record

            waiting = _record_start(ws, session) if record.load_record(ws, session) is None else ""
            return HookAnswer(note=f"a {holder.what} is running in this checkout ({holder.describe()}): its files "
                                   "are its agent's, not this session's; Rule 0 is not enforced until it ends"
                                   + (f"; {waiting}" if waiting else ""))
        return _judge(ws, session)
    except (GitmemError, OSError, ValueError) as err:
        return HookAnswer(note=f"{err}: not enforcing Rule 0")


def _judge(ws: Workspace, session: str) -> HookAnswer:
    from gitmem.sessions import record

    started = record.load_record(ws, session)
    if started is None:          # the hooks were set up mid-session: judge from here on
        record.save(ws, record.snapshot_session(ws, session))
        return HookAnswer(note="no record of this session's start: recorded the work tree now")
    if started.blocked:
        return HookAnswer(note="this session was already told to log once")
    if record.run_killed(ws, started):
        record.save(ws, record.snapshot_session(ws, session))
        return HookAnswer(note=f"the {started.during} running when this session started ended without finishing: what "
                               "it left uncommitted cannot be told from this session's work, so the work tree was "
                               "recorded now")
    if _logged_since(ws, started.last_cycle):
        return HookAnswer(note="the session wrote its LOG entry")
    changed = record.changed_since(ws, started)
    if not changed:
        return HookAnswer(note="the session changed no files: nothing to log yet")
    started.blocked = True
    record.save(ws, started)
    return HookAnswer({"decision": "block", "reason": block_reason(ws, changed)})


def _logged_since(ws: Workspace, last_cycle: int) -> bool:
    """An interactive entry after the session's start: runner cycles pulled in meanwhile are not the session's.
    LOG is read back to the session's start, however many cycles a pull or a merge put after its entry (a day
    of scheduled cycles): a fixed look-back would miss the entry and tell the session to log a second time."""
    from gitmem.memory import log

    def back_to_the_start(entries: tuple[log.LogEntry, ...]) -> bool:
        return any(entry.cycle is not None and entry.cycle <= last_cycle for entry in entries)

    return any(entry.cycle is not None and entry.cycle > last_cycle and entry.interactive
               for entry in log.tail_entries(ws.log_source(), back_to_the_start).entries)


def block_reason(ws: Workspace, changed: list[str]) -> str:
    shown = ", ".join(changed[:SHOWN_PATHS]) + (f" and {len(changed) - SHOWN_PATHS} more"
                                                if len(changed) > SHOWN_PATHS else "")
    cycle, last = ws.cycle_for("log"), ws.last_log_cycle()
    if last and ws.uncommitted_log_cycle(last):       # a session writes one entry (MemoryWriter): that one first
        return (f"gitmem Rule 0: this session changed files ({shown}), and LOG's last entry (cycle {last}) is "
                "not committed yet: a session writes one LOG entry, so a new one is refused until it is. Ask the "
                "human to commit the memory files with that work first, then log this session; or, if this is "
                f"the same piece of work, say so in the cycle {last} entry in {ws.config.path('log')}. This "
                "reminder comes once per session.")
    return (f"gitmem Rule 0: this session changed files ({shown}) but wrote no LOG entry. Before you finish, "
            f"log it as cycle {cycle}: the gitmem MCP tool log_entry (or `gitmem log add --task \"…\" --outcome "
            "built|published|no-build --result \"…\"`) saying what was built, or why nothing was; then one NOW "
            "block (now_block, or `gitmem now add --did … --human … --next …`). Then commit the memory files "
            f"with the work. This reminder comes once per session.")
