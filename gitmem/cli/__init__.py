"""The `gitmem` command: a thin click layer over the library. Heavy modules load inside commands only."""
from __future__ import annotations

import gc
import sys
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import click

from gitmem import __version__
from gitmem.errors import HELP, ExitCode, GitmemError

T = TypeVar("T")

# Command name -> the module that defines it. Each module exports COMMANDS and imports only click at top
# level. Modules load only when their command runs, so `gitmem check` on the pre-commit path pays for
# nothing else.
COMMANDS: dict[str, str] = {
    "check": "check", "verify": "check",
    "log": "write", "now": "write", "decision": "write", "lesson": "write", "roadmap": "write",
    "init": "init", "demo": "demo", "context": "context", "cycle": "cycle", "close": "close",
    "status": "status", "pending": "pending", "recall": "recall", "github": "github", "config": "config",
    "report": "report", "hook": "hook", "mcp": "mcp", "fleet": "fleet", "merge": "merge",
    "merge-driver": "merge", "import": "interop", "export": "interop",
}


# Commands that run without the cyclic garbage collector. Starting a command imports click, pygit2 and gitmem:
# modules, classes and functions that live as long as the process, and little garbage, so the collector's passes
# over them are wasted (49 passes, about 6 ms of a `gitmem check`; the check itself, once imported, makes one).
# The entry points import this module with it off (`gitmem.__main__.start`); `main` keeps it off until the command
# is chosen, and turns it back on for every command not named here: a short-lived one, whose garbage reference
# counting frees, and which reads a bounded part of history (`verify`, which reads whole ranges, is not one).
SHORT_LIVED = frozenset({"check"})
# The youngest generation's threshold for the other commands (the default is 700). The threshold counts objects
# made and not yet freed; what a cycle or a close makes and keeps is memory parsed once for the whole process (at
# 100x 3,000 lessons and 4,000 decisions, under 100,000 objects), and each pass of the collector walks all of it
# again: with the default, 52 ms of a close at 100x (two full passes), with 10,000 still 20 ms; with this, none.
# Reference counting frees what a command drops; only garbage cycles (rare here) wait for a pass.
YOUNG_THRESHOLD = 100_000


class Collector:
    """The cyclic garbage collector around one `main` call: off from its start, on again once a command that is
    not SHORT_LIVED is chosen, and as it was before once `main` returns (tests run the CLI in their own process).
    When the call is all the process does (`ends_process`, the entry points), it stays off after it: putting the
    default threshold back would start a pass over everything the command kept at the next allocation, and the
    interpreter makes one more as it exits (27 ms at 100x), freeing nothing the exit does not."""

    def __init__(self, ends_process: bool = False) -> None:
        self.ends_process = ends_process
        self.was_on = gc.isenabled()
        self.thresholds = gc.get_threshold()

    def __enter__(self) -> Collector:
        self.was_on = gc.isenabled()
        self.thresholds = gc.get_threshold()
        gc.disable()
        return self

    def __exit__(self, *_: object) -> None:
        gc.disable()
        gc.set_threshold(*self.thresholds)
        if self.was_on and not self.ends_process:
            gc.enable()

    def chosen(self, command: str | None) -> None:
        if self.was_on and command not in SHORT_LIVED:
            gc.set_threshold(max(YOUNG_THRESHOLD, self.thresholds[0]), *self.thresholds[1:])
            gc.enable()


class OutputClosed(Exception):
    """stdout (or stderr) went to a pipe whose reader stopped reading (`gitmem demo | head -1`). Raised in place of
    the BrokenPipeError, which click would otherwise turn into a silent exit 1 (what violations mean); not an
    OSError, so no handler on the way mistakes it for a file it could not write."""


def _closed_output_stops(run: Callable[[], T]) -> T:
    try:
        return run()
    except BrokenPipeError as err:
        raise OutputClosed() from err


class LazyGroup(click.Group):
    """A group that imports a command's module on first use (listing all of them for --help)."""

    # Both ends of a run that print: reading the command line (--help, --version) and running the command.
    def make_context(self, info_name: str | None, args: list[str], parent: click.Context | None = None,
                     **extra: Any) -> click.Context:
        return _closed_output_stops(lambda: super(LazyGroup, self).make_context(info_name, args, parent, **extra))

    def invoke(self, ctx: click.Context) -> Any:
        return _closed_output_stops(lambda: super(LazyGroup, self).invoke(ctx))

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def resolve_command(self, ctx: click.Context,
                        args: list[str]) -> tuple[str | None, click.Command | None, list[str]]:
        # click suggests close names from `self.commands`, which a lazy group leaves empty: suggest from
        # COMMANDS instead, as for every eager group (`gitmem log ad` -> `add`).
        name = click.utils.make_str(args[0]) if args else ""
        if name and name not in COMMANDS and not name.startswith("-") and not ctx.resilient_parsing:
            import difflib

            close = difflib.get_close_matches(name, sorted(COMMANDS))
            hint = "" if not close else f" Did you mean {close[0]!r}?" if len(close) == 1 else \
                f" (Possible commands: {', '.join(map(repr, close))})"
            raise click.UsageError(f"No such command {name!r}.{hint}", ctx)
        return super().resolve_command(ctx, args)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        module_name = COMMANDS.get(cmd_name)
        if module_name is None:
            return None
        import importlib

        module = importlib.import_module(f"gitmem.cli.{module_name}")
        return next((c for c in module.COMMANDS if c.name == cmd_name), None)


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
             epilog=HELP)
@click.version_option(__version__, "--version", prog_name="gitmem")
@click.option("--color/--no-color", "color", default=None,
              help="Colour the output, or not (default: on a terminal, unless NO_COLOR is set).")
@click.pass_context
def cli(ctx: click.Context, color: bool | None) -> None:
    """Git-native long-term memory for AI agents: NOW, DECISIONS, LOG, LESSONS and RULES, enforced.

    \b
    Validate:  gitmem check | gitmem verify --range A..B
    Write:     gitmem log add | now add | decision ask/answer | lesson add/confirm
    Human:     gitmem pending | decision answer D-0001 --answer "…"
    Run:       gitmem context | cycle | close | status | recall QUERY | report
    Fleet:     gitmem fleet pending | status | report | pages | dispatch   (many agents, one human)
    Start:     gitmem init [DIR] [--agent claude|codex|copilot|cursor|gemini|opencode|qwen] | gitmem demo
    Move in:   gitmem import claude|codex|gemini|cline|agent-memory-repo|notes | export --to FORMAT
    Sessions:  gitmem mcp | gitmem hook session-start|stop
    Complete:  eval "$(_GITMEM_COMPLETE=bash_source gitmem)"   (zsh_source, fish_source)
    """
    import os

    if isinstance(ctx.obj, Collector):
        ctx.obj.chosen(ctx.invoked_subcommand)
    # click strips colour from every echo when ctx.color is False and keeps it in pipes when True; child
    # contexts inherit it. NO_COLOR (any value) means no colour unless --color says otherwise.
    ctx.color = color if color is not None else (False if os.environ.get("NO_COLOR") else None)


def _show(err: click.ClickException) -> None:
    """click's own errors (a bad option, an unknown command) in the one shape of a command error, `gitmem:
    <message>` where click says `Error: <message>`; a usage error keeps click's usage line and hint above it. A
    group named without a command shows its help on stderr once (exit 2), not as an error's message."""
    from gitmem.cli.common import say

    if isinstance(err, click.exceptions.NoArgsIsHelpError):     # a group named alone: its help, once, as it is
        click.echo(err.format_message(), err=True, color=err.ctx.color if err.ctx else None)
        return
    ctx = err.ctx if isinstance(err, click.UsageError) else None
    if ctx is not None:
        hint = f"Try '{ctx.command_path} {ctx.help_option_names[0]}' for help." if ctx.help_option_names else ""
        click.echo(f"{ctx.get_usage()}\n{hint}\n", err=True, color=ctx.color)
    say(None, err.format_message())


def _undecodable(args: Sequence[str]) -> str | None:
    """Why an argument is refused, or None. Python hands bytes that are not UTF-8 over as lone surrogates, which
    no memory file (UTF-8) can hold: every command's text meets them here, before any of them runs."""
    for position, arg in enumerate(args, 1):
        if any("\udc80" <= char <= "\udcff" for char in arg):
            shown = arg.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
            shown = shown if len(shown) <= 60 else shown[:60] + "…"
            return f"argument {position} is not UTF-8 text: '{shown}'; gitmem reads and writes UTF-8 only"
    return None


# Commands whose stdout is a protocol's channel: `mcp` speaks MCP's JSON-RPC there, a session hook answers its
# agent CLI there. Their failures go to stderr only, as every failure of theirs does: never a JSON failure object
# on stdout, which the client would read as a message of the protocol, even when the words ask for JSON.
PROTOCOL_STDOUT = frozenset({"mcp", "hook"})


def _asks_for_json(args: Sequence[str]) -> bool:
    """Whether the command line asks for JSON (`--json`, `--format json`): read from the words themselves, so a
    failure before or during click's parsing of them (an unknown option, a bad value) is answered in JSON too.
    Never for a command in PROTOCOL_STDOUT."""
    words = list(args)
    words = words[:words.index("--")] if "--" in words else words
    if next((word for word in words if not word.startswith("-")), None) in PROTOCOL_STDOUT:
        return False
    return "--json" in words or "--format=json" in words or any(
        word == "--format" and following == "json" for word, following in zip(words, words[1:], strict=False))


def _json_failure(err: BaseException, exit_code: int, message: str) -> None:
    """A failure as the one JSON object on stdout a command asked for with --json: its GM code (when it has one),
    its message and its exit code, and the violations behind it; the text goes to stderr as always. A failure
    the command already answered in JSON (`cycle`'s refusal, `close`'s failure) is not answered twice."""
    from gitmem.checks.render import as_data
    from gitmem.cli.common import show_json

    if getattr(err, "shown_as_json", False):
        return
    violations = _violations_of(err)
    code = getattr(getattr(err, "code", None), "code", None) or (violations[0].code if violations else None)
    show_json({"error": message, "code": code, "exit_code": int(exit_code), "violations": as_data(violations)})


def main(argv: Sequence[str] | None = None, *, ends_process: bool = False) -> int:
    """Run the CLI and return its exit code. The one error map: a known error prints its message (and its
    violations) and exits with its own code; anything else is a bug, printed with its traceback, exit 70. With
    --json, every failure is also one JSON object on stdout (`_json_failure`). Output a closed pipe no longer
    reads ends any command quietly, exit 141 as git's (`_output_closed`). `ends_process`: the process exits when
    this returns (`Collector` says what that changes)."""
    args = list(argv) if argv is not None else sys.argv[1:]
    try:
        return _answered(args, ends_process)
    except (OutputClosed, BrokenPipeError):      # the latter from the error map's own output below
        return _output_closed(ends_process)


def _output_closed(ends_process: bool) -> int:
    """The reader of stdout went away: say nothing (there is no one to say it to, and stderr may be the same
    pipe), and, when the process ends next, point stdout at /dev/null so the interpreter's last flush of what is
    still buffered fails on nothing; 141, as git and coreutils end when SIGPIPE stops them (128 + 13)."""
    import os

    if not ends_process:         # a caller in its own process (a test) keeps its stdout
        return ExitCode.OUTPUT_CLOSED
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):   # not a real file (a test's captured stream): nothing to flush
        pass
    return ExitCode.OUTPUT_CLOSED


def _answered(args: list[str], ends_process: bool) -> int:
    as_json = _asks_for_json(args)
    try:
        return _run(args, ends_process)
    except OutputClosed:
        raise
    except GitmemError as err:
        if as_json:
            _json_failure(err, err.exit_code, str(err))
        return _shown(err)
    except click.ClickException as err:
        if as_json:
            _json_failure(err, err.exit_code, err.format_message())
        _show(err)
        return err.exit_code
    except (click.Abort, KeyboardInterrupt) as err:
        if as_json:
            _json_failure(err, ExitCode.INTERRUPTED, "interrupted")
        click.echo("Aborted.", err=True)
        return ExitCode.INTERRUPTED
    except Exception as bug:
        import traceback

        if as_json:
            _json_failure(bug, ExitCode.INTERNAL, f"unexpected error: {type(bug).__name__}; the traceback is on stderr")
        click.echo("gitmem: unexpected error; please report it with this traceback:", err=True)
        click.echo(_masked_traceback(traceback.format_exc(), bug), err=True, nl=False)
        return ExitCode.INTERNAL


def _run(args: list[str], ends_process: bool) -> int:
    try:
        undecodable = _undecodable(args)
        if undecodable is not None:
            raise click.UsageError(undecodable)
        with Collector(ends_process) as collector:
            result = cli.main(args=args, prog_name="gitmem", standalone_mode=False, obj=collector)
        return result if isinstance(result, int) else ExitCode.OK
    except click.exceptions.Exit as stop:
        return stop.exit_code


def _violations_of(err: BaseException, *, for_people: bool = False) -> list[Any]:
    """The GM violations a failure is shown with, in its JSON and on stderr as `path:line: GMnnn message`: those
    it carries, or, for a failure that is itself one (a cycle's or a close's GM7xx/GM8xx, `context` over its
    hard limit), that one and what lies behind it (`gitmem.checks.violation.failure_violations`); a config refusal,
    whose message is its one line, as that violation, in JSON only (its path, line and code as data). `for_people`
    (stderr): a failure whose message already lists what lies behind it, as `path:line: GMnnn` lines, is not
    listed a second time."""
    from gitmem.config import ConfigError
    from gitmem.errors import RunFailure

    if not isinstance(err, GitmemError):
        return []
    if isinstance(err, ConfigError) and err.code is not None and not err.violations:   # its message is the line
        from gitmem.checks.violation import Violation

        return [] if for_people else [Violation(err.path, err.line, err.code.code, err.text)]
    if err.violations or not isinstance(err, RunFailure) or (for_people and err.details):
        return list(err.violations)
    from gitmem.checks.violation import failure_violations

    return failure_violations(err)


def _shown(err: GitmemError) -> int:
    """A known error on stderr: its message (and its notes, and its violations); its exit code."""
    from gitmem.checks.render import render_text
    from gitmem.cli.common import CommandFailed, echo, say

    # Config errors quote the bad value; it may be a key pasted into the wrong place.
    speaker, notes = (err.command, err.notes) if isinstance(err, CommandFailed) else (None, ())
    for line in (str(err), *notes):
        say(speaker, line)
    for line in getattr(err, "__notes__", ()):     # what was done before the failure: branches pushed
        say(None, str(line))
    violations = _violations_of(err, for_people=True)
    if violations:               # they may quote memory, as the message may: masked as everything shown is
        from gitmem.secrets import scrub

        echo(scrub(render_text(violations)), err=True, nl=False)
    return err.exit_code


def _masked_traceback(text: str, bug: Exception) -> str:
    """A bug's traceback, masked as everything shown is: an exception's message may quote what it worked on. If
    masking is itself broken, only the exceptions' names are shown, never an unmasked message."""
    try:
        from gitmem.secrets import scrub

        return scrub(text)
    except Exception as failed:          # quote nothing that could not be masked
        return (f"{type(bug).__name__}, then {type(failed).__name__} while masking its traceback: neither message "
                "is shown, as it could not be masked\n")
