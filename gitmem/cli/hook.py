"""`gitmem hook session-start|stop`: the session hooks of Claude Code and GitHub Copilot CLI (their JSON on stdin,
ours on stdout)."""
from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

import click

from gitmem.cli.common import CommandGroup, say, show_json, workspace_option
from gitmem.config.nesting import loads_json
from gitmem.errors import ExitCode, exit_codes_help

if TYPE_CHECKING:     # the library loads inside commands only
    from gitmem.sessions.hooks import HookAnswer


class _HookGroup(CommandGroup):
    """A hook's command line is written by a CLI's settings, perhaps for another gitmem version (a flag or a hook
    this one lacks): a usage error is a note on stderr and exit 0, as every hook ends. Claude Code takes a Stop
    hook's exit 2 for "keep going" and feeds its stderr to the model, so a bad flag would never let it stop."""

    EXIT_CODES = {
        ExitCode.OK: "help shown, or a hook this gitmem lacks or a bad flag of a hook (a note on stderr, nothing "
                     "done)",
        ExitCode.USAGE: "no hook named, or a bad option before it",
    }

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except click.UsageError as err:
            _note(f"{err.format_message().rstrip('.')}: nothing done (a hook never breaks the session)")
        return None          # the command's end: exit 0


@click.group("hook", cls=_HookGroup)
def hook_group() -> None:
    """Session hooks; `gitmem init --agent claude` sets them up in .claude/settings.json, `--agent copilot` in
    .github/hooks/gitmem.json (Copilot CLI's sessionStart and agentStop).

    Each reads the hook's JSON on stdin and prints Claude Code's hook JSON, or nothing. They always exit 0
    (a hook must never break the session) and stay silent inside a runner cycle (GITMEM_CYCLE set) and
    outside a memory repository.
    """


def _note(text: str) -> None:
    """Every hook note is one line on stderr, `gitmem: hook: <what it found>: <what it does about it>`."""
    say("hook", text)


def _payload() -> dict[str, Any]:
    # Bytes, decoded as UTF-8 here: JSON is UTF-8 (RFC 8259), where the locale's text layer decodes stdin as it
    # likes (strictly under en_US.UTF-8, so one stray byte was a traceback; as Latin-1 under a Latin-1 locale).
    stream = sys.stdin            # None when the host started the hook with stdin closed
    try:
        data = stream.buffer.read() if stream is not None and not stream.isatty() else b""
        text = data.decode("utf-8")
        found = loads_json(text) if text.strip() else {}
    except UnicodeDecodeError as err:
        _note(f"stdin is not the hook's JSON (not UTF-8: {err.reason} at byte {err.start}): going on without it")
        return {}
    except (ValueError, OSError) as err:     # not JSON, nested past the bound (gitmem.config.nesting), unreadable
        _note(f"stdin is not the hook's JSON ({err}): going on without it")
        return {}
    return found if isinstance(found, dict) else {}


def _answer(answer: HookAnswer) -> int:
    if answer.output is not None:
        show_json(answer.output)
    if answer.note:
        _note(answer.note)
    return ExitCode.OK


# Every code the command can end with (its --help lists them, and 70 and 130, which any command can).
EXIT_CODES = {
    ExitCode.OK: "always, whatever the hook's input or arguments (a hook never breaks the session)",
}


@hook_group.command("session-start", epilog=exit_codes_help(EXIT_CODES))
# gitmem.sessions.hooks.HOSTS (this module loads only click until a command runs)
@click.option("--host", type=click.Choice(("claude", "copilot")), default="claude", show_default=True,
              help="The CLI that runs the hook, which decides the shape of the answer (gitmem.sessions.hooks).")
@workspace_option
def session_start_command(host: str, workspace: str | None) -> int:
    """SessionStart: the compact memory (under 9,000 characters) as additionalContext, on startup, resume,
    clear and after a compaction; records the work tree the first time a session is seen (while a cycle or a
    close runs in the checkout, the committed tree for the paths it may change: its files are its agent's)."""
    from gitmem.sessions import hooks

    return _answer(hooks.session_start_answer(_payload(), workspace=workspace, host=host))


@hook_group.command("stop", epilog=exit_codes_help(EXIT_CODES))
@workspace_option
def stop_command(workspace: str | None) -> int:
    """Stop: Rule 0 for an interactive session. Blocks once, telling the agent to log, when the session
    changed files since it started but wrote no LOG entry; never when stop_hook_active is set, nor while a
    cycle or a close runs in the checkout (what changes then is its agent's; its commits are not the session's)."""
    from gitmem.sessions import hooks

    return _answer(hooks.stop_answer(_payload(), workspace=workspace))


COMMANDS = (hook_group,)
