"""What several commands share: finding the repo and config, the --workspace and --format options."""
from __future__ import annotations

import errno
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from datetime import date, datetime, time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from gitmem.errors import ExitCode, GitmemError, exit_codes_help

if TYPE_CHECKING:     # the library loads inside commands only
    from typing import TypeAlias

    from gitmem.checks.violation import Violation
    from gitmem.views.actions import ActionsText
    from gitmem.workspace import Workspace

    # click 8.2 made ParamType generic in what it returns; 8.1, which gitmem supports, cannot subscript it.
    ParamTypeOfDates: TypeAlias = click.ParamType[date]
else:
    ParamTypeOfDates = click.ParamType


class UsageError(click.ClickException):
    exit_code = ExitCode.USAGE


class CommandGroup(click.Group):
    """A group of commands (`gitmem log`, `gitmem fleet`): its --help ends with the codes it can end with, as each
    command's does (`gitmem.errors.exit_codes_help`). On its own a group only dispatches: its help, or click's
    usage error for no command or an unknown one. Every group of the CLI is one (tests/cli/test_exit_codes.py)."""

    EXIT_CODES: dict[ExitCode, str] = {
        ExitCode.OK: "help shown",
        ExitCode.USAGE: "no command given, or no such command",
    }

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("epilog", exit_codes_help(self.EXIT_CODES))
        super().__init__(*args, **kwargs)


def one_workspace_or_all(workspace: str | None, all_workspaces: bool) -> None:
    """`--workspace NAME` and `--all-workspaces` ask for different things (`recall`, `report`): refuse both. A
    workspace only WORKSPACE_ENV names (the runner's cycle, for its agent) gives way to `--all-workspaces`."""
    source = click.get_current_context().get_parameter_source("workspace")
    if workspace and all_workspaces and source is not click.core.ParameterSource.ENVIRONMENT:
        raise UsageError("use --workspace NAME or --all-workspaces, not both")


def cannot_write(target: Path, err: OSError | GitmemError) -> UsageError:
    """The one refusal of writing a page the user asked for at `target` (`gitmem report`, `gitmem fleet report`)."""
    from gitmem.confined import files

    what = err.what if isinstance(err, files.FileRefused) else ""
    if "symbolic link" in what:
        why = "a link is in the way (gitmem never writes through one)"
    elif what.startswith("is "):
        why = "it is not a regular file"
    elif what or not isinstance(err, OSError):
        why = what or str(err)
    elif err.errno == errno.ENAMETOOLONG:
        why = files.NAME_TOO_LONG
    else:
        why = err.strerror or str(err)
    return UsageError(f"cannot write {target}: {why}; remove it or choose another --out")


def write_page(target: Path, data: bytes) -> None:
    """Write a page the user asked for (a report) at `target`: its folder as named (made when missing), the file
    itself as gitmem writes its own (gitmem.confined.files: never through a link, never a FIFO, replaced by a
    rename). UsageError naming what is in the way."""
    from gitmem.confined import files

    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        files.write_bytes(target.parent, target.name, data)
    except (OSError, files.FileRefused) as err:
        raise cannot_write(target, err) from None


def stderr_line(command: str | None, text: str) -> str:
    """The one shape of every line gitmem writes to stderr about itself, errors, warnings and notes alike:
    `gitmem: <command>: <text>`, or `gitmem: <text>` from gitmem as a whole. A reader (or grep) tells them
    from the agent's output and from the `path:line: GMnnn` diagnostics, which keep their own shape."""
    return f"gitmem: {command}: {text}" if command else f"gitmem: {text}"


def echo(text: str, *, err: bool = False, nl: bool = True) -> None:
    """Every line gitmem prints, but its own workflow commands (`show_commands`): memory and the agent's text
    carry no command a CI runner would act on (`gitmem.memory.display.without_log_commands`)."""
    from gitmem.memory.display import without_log_commands

    click.echo(without_log_commands(text), err=err, nl=nl)


def echo_json(text: str, *, nl: bool = True) -> None:
    """A JSON document gitmem prints for other tools: exact data, and no command a CI runner would act on
    (`gitmem.memory.display.json_without_log_commands`)."""
    from gitmem.memory.display import json_without_log_commands

    click.echo(json_without_log_commands(text), nl=nl)


def show_commands(text: str) -> None:
    """gitmem's own GitHub Actions workflow commands (gitmem.views.actions, the `github` format) on stdout,
    masked: the one output that may hold a command, its agent-written parts escaped as data by their renderer."""
    from gitmem.secrets import scrub

    click.echo(scrub(text), nl=False)


def show(text: str, *, nl: bool = True) -> None:
    """Write what a command prints of memory or of the agent's output to stdout, masked (`gitmem.secrets.scrub`):
    history keeps the secret values once written."""
    from gitmem.secrets import scrub

    echo(scrub(text), nl=nl)


def show_prompt(text: str) -> None:
    """A cycle's prompt as `context` and `cycle --dry-run` print it: memory an agent wrote, so each character a
    terminal would act on (an escape that sets the title or writes the clipboard) is shown as its `\\uXXXX`
    (`gitmem.memory.display.printable`). The check refuses such controls in memory (GM920), so an agent reading
    a valid memory's prompt through a pipe gets the same text."""
    from gitmem.memory.display import printable

    echo(printable(text), nl=False)


def show_json(data: Any, *, indent: int | None = None) -> None:
    """`data` as JSON on stdout, every string in it masked before it is encoded (`gitmem.secrets.scrub_data`)."""
    import json

    from gitmem.secrets import scrub_data

    echo_json(json.dumps(scrub_data(data), indent=indent, ensure_ascii=False))


def say(command: str | None, text: str) -> None:
    """Write `text` to stderr as `command` (see stderr_line), masked (`gitmem.secrets.scrub`): messages quote
    config values, git's errors and memory, and every command's messages pass here."""
    from gitmem.secrets import scrub

    echo(stderr_line(command, scrub(text)), err=True)


class CommandFailed(GitmemError):
    """A failure as one command words it (`gitmem: cycle: refused: …`). The command raises it and the one
    error map (`gitmem.cli.main`) prints the message after `gitmem: <command>:`, then each of `notes` on a
    line of its own after the same prefix, then `violations` as `path:line: GMnnn message` lines, and exits with
    `exit_code`."""

    def __init__(self, command: str, message: str, *, exit_code: int, notes: Sequence[str] = (),
                 violations: Sequence[Any] = ()) -> None:
        super().__init__(message, violations)
        self.command = command
        self.exit_code = exit_code
        self.notes = tuple(notes)


# The days a command line may name: memory is no older than the epoch, and a far future day is a typo.
EARLIEST_DAY = date(1970, 1, 1)
LATEST_DAY = date(2199, 12, 31)


class DayParam(ParamTypeOfDates):
    """A day on the command line (`close --date`, `report --since`): read by gitmem.memory.dates, so every
    command refuses a bad one in the same words, as a usage error (exit 2). By default a day memory can hold
    (EARLIEST_DAY to LATEST_DAY): the week before 0001-01-01 cannot be computed, and no memory is older than 1970."""

    name = "date"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> date:
        if isinstance(value, date):
            return value
        # Imported here: `gitmem check` loads this module and parses no date.
        from gitmem.memory import dates

        try:
            return dates.parse_day(str(value), EARLIEST_DAY, LATEST_DAY)
        except dates.NotADate as err:
            self.fail(str(err), param, ctx)


class DayOrTimeParam(ParamTypeOfDates):
    """A day or a moment on the command line (`recall --since`), read and refused like `DayParam`."""

    name = "date or time"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> date | datetime:
        if isinstance(value, date):
            return value
        from gitmem.memory import dates

        try:
            return dates.parse_day_or_time(str(value))
        except dates.NotADate as err:
            self.fail(str(err), param, ctx)


def ordered_window(since: date | None, until: date | None) -> None:
    """Refuse `--since` later than `--until` (UsageError, exit 2): such a window holds nothing, so a search
    in it would answer "no memory of that" about memory that is there. A day bound takes in its whole day;
    a moment with an offset beside one without is left for the reader that knows the configured zone."""
    if since is None or until is None:
        return
    start = since if isinstance(since, datetime) else datetime.combine(since, time.min)
    end = until if isinstance(until, datetime) else datetime.combine(until, time.max)
    if (start.tzinfo is None) == (end.tzinfo is None) and start > end:
        raise UsageError(f"--since {since} is after --until {until}")


# The runner names its cycle's workspace to the agent in this variable (gitmem.workspace.WORKSPACE_ENV; spelled
# here, as the CLI loads no library before a command runs): the `gitmem log add` its prompt teaches, and an MCP
# server the agent CLI starts, write that workspace's memory with no `--workspace` of their own.
WORKSPACE_ENV = "GITMEM_WORKSPACE"


def workspace_option(func: Callable[..., Any]) -> Callable[..., Any]:
    return click.option("--workspace", "-w", metavar="NAME", default=None, envvar=WORKSPACE_ENV, show_envvar=True,
                        help="Use the memory of this workspace from `workspaces:` in gitmem.yaml (inside a "
                             "cycle, the runner names the cycle's own).")(func)


def format_option(func: Callable[..., Any]) -> Callable[..., Any]:
    """`--format text|github|json`, and `--json` for `--format json` as every other command spells it; the
    command sees only `fmt`."""
    import functools

    @functools.wraps(func)
    def with_json(*args: Any, as_json: bool, fmt: str, **kwargs: Any) -> Any:
        if as_json:
            source = click.get_current_context().get_parameter_source("fmt")
            if fmt != "json" and source is not click.core.ParameterSource.DEFAULT:
                raise UsageError(f"--json and --format {fmt} ask for different output; give one")
            fmt = "json"
        return func(*args, fmt=fmt, **kwargs)

    with_format = click.option("--format", "fmt", type=click.Choice(["text", "github", "json"]), default="text",
                               show_default=True, help="Output format: text lines, GitHub annotations, or JSON.")
    with_flag = click.option("--json", "as_json", is_flag=True, help="Print JSON for other tools (--format json).")
    return with_flag(with_format(with_json))


def json_option(func: Callable[..., Any]) -> Callable[..., Any]:
    return click.option("--json", "as_json", is_flag=True, help="Print JSON for other tools.")(func)


def open_workspace(workspace: str | None, path: str | Path | None = None) -> Workspace:
    """The repository around `path` (default: the current directory) and its config; warns on unknown keys."""
    from gitmem.workspace import Workspace

    found = Workspace.open(path, workspace=workspace)
    for warning in found.config.warnings:
        say(None, f"warning: {warning}")
    return found


def open_memory(workspace: str | None) -> Workspace:
    """`open_workspace` for a command that reads or writes the memory files: with none of them here, NoMemory
    (exit 2, "run `gitmem init`"), as `gitmem status` says, rather than an empty memory's answer."""
    from gitmem.views.health import require_memory

    found = open_workspace(workspace)
    require_memory(found)
    return found


def append_env_file(variable: str, text: str) -> None:
    """Append to the file named by $VARIABLE (GitHub Actions' GITHUB_OUTPUT, GITHUB_STEP_SUMMARY), if set,
    masked (`gitmem.secrets.scrub`): the job summary is shown to whoever reads the run, and quotes git's errors."""
    import os

    from gitmem.secrets import scrub

    path = os.environ.get(variable)
    if path:
        with open(path, "a", encoding="utf-8") as handle:
            handle.write(scrub(text))


def to_actions(text: ActionsText) -> None:
    """Write a command's part of a GitHub Actions run (rendered by gitmem.views.actions): its workflow commands
    to stdout, its outputs and job summary to the files the runner names; all masked, as everything shown is."""
    if text.annotations:
        show_commands(text.annotations)
    append_env_file("GITHUB_OUTPUT", text.outputs)
    append_env_file("GITHUB_STEP_SUMMARY", text.summary)


def annotate(violations: Sequence[Violation]) -> None:
    """Under GitHub Actions, what went wrong in a cycle or close also shows as annotations on the run."""
    import os

    if violations and os.environ.get("GITHUB_ACTIONS") == "true":
        from gitmem.checks.render import render_github

        show_commands(render_github(violations))


def colour_option(func: Callable[..., Any]) -> Callable[..., Any]:
    """`--color/--no-color` after a command that colours its output, as the top group takes it before the command:
    `gitmem status --no-color` is how a user types it. It sets the context's colour; the command sees nothing."""
    def chosen(ctx: click.Context, _param: click.Parameter, value: bool | None) -> None:
        if value is not None:
            ctx.color = value

    return click.option("--color/--no-color", default=None, expose_value=False, callback=chosen,
                        help="Colour the output, or not (default: on a terminal, unless NO_COLOR is set).")(func)


def colour_wanted(stream: Any) -> bool:
    """Colour for `stream`: --color / --no-color when given, none with NO_COLOR set, else on a terminal."""
    ctx = click.get_current_context(silent=True)
    if ctx is not None and ctx.color is not None:
        return bool(ctx.color)
    import os

    if os.environ.get("NO_COLOR"):
        return False
    return bool(stream is not None and stream.isatty())


# Shorter work finishes before a bar would be worth drawing.
PROGRESS_MIN = 200


def _progress_wanted() -> bool:
    import os
    import sys

    stream = sys.stderr
    return bool(stream is not None and stream.isatty() and not os.environ.get("CI"))


def progress_count(label: str) -> Callable[[int, int], None] | None:
    """A `label: done/total` line on stderr, redrawn in place, for work whose size the library learns as it
    goes (`progress(done, total)`); None (nothing shown) in pipes, files and CI, and for small work."""
    if not _progress_wanted():
        return None

    def show(done: int, total: int) -> None:
        if total >= PROGRESS_MIN:
            click.echo(f"\r{label}: {done}/{total}", err=True, nl=done >= total)
    return show


@contextmanager
def progress(total: int | Callable[[], int], label: str) -> Iterator[Callable[[int], None] | None]:
    """click's progress bar on stderr for long work on a terminal; None (no bar) in pipes, files and CI.

    `total` may be a function: it is called only when a bar can be shown, so counting costs nothing in a
    hook or in CI. Pass what this yields as the library's `progress` callback: `advance(n)` after n items.
    """
    if not _progress_wanted():
        yield None
        return
    length = total() if callable(total) else total
    if length < PROGRESS_MIN:
        yield None
        return
    import sys

    with click.progressbar(length=length, label=label, file=sys.stderr, show_pos=True) as bar:
        yield bar.update
