"""`gitmem close`: the daily close (report, plan, promotions) as one commit by the agent identity."""
from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import date
from typing import TYPE_CHECKING

import click

from gitmem.cli.common import (
    DayParam,
    annotate,
    json_option,
    open_memory,
    say,
    show,
    show_json,
    to_actions,
    workspace_option,
)
from gitmem.errors import ExitCode, exit_codes_help

if TYPE_CHECKING:   # the library loads inside the command only
    from gitmem.close import CloseResult
    from gitmem.workspace import Workspace


# Every code `gitmem close` can end with (the help lists them, and 70 and 130, which any command can).
EXIT_CODES = {
    ExitCode.OK: "done (or already closed)",
    ExitCode.VIOLATIONS: "the result would be invalid",
    ExitCode.USAGE: "usage or config error (a bad --date, a bad gitmem.yaml), or no memory here (run `gitmem init`)",
    ExitCode.DIRTY: "memory files are dirty, a cycle holds the lock, or --push on a detached HEAD or with "
                    "uncommitted changes, which its rebase would lose (nothing written)",
    ExitCode.SALVAGED: "with --push, the push conflicted, or the remote refused it for good (a protected branch: "
                       "the close is on a `gitmem/close-DAY` branch; pull-request mode is the setting for that), "
                       "or there is no remote",
    ExitCode.REWRITTEN: "with --push, the upstream was rewritten: nothing is built on it",
    ExitCode.LOCAL_ONLY: "with --push, the push failed: the close is only on this machine's disk",
}


@click.command("close", epilog=exit_codes_help(EXIT_CODES))
@click.option("--date", "day", metavar="YYYY-MM-DD", type=DayParam(), default=None,
              help="The day to close (default: today in the configured time zone; run less than close.late_hours "
                   "(12) hours after midnight, the day before, as a scheduler's late run).")
@click.option("--no-llm", "no_llm", is_flag=True,
              help="Build the report and rules from the data only, even when ANTHROPIC_API_KEY is set.")
@click.option("--push", is_flag=True,
              help="Fetch, rebase and push the close commit, retrying with backoff. Run again after a push that "
                   "failed, it pushes the close left on this machine.")
@click.option("--model", metavar="MODEL", default=None,
              help="The model that words the close (overrides close.model in gitmem.yaml).")
@json_option
@workspace_option
def close(day: date | None, no_llm: bool, push: bool, model: str | None, as_json: bool,
          workspace: str | None) -> int:
    """Close a day: report it in LOG, flag problems (Rule 0), plan tomorrow on top of NOW, and promote
    lessons that two later cycles confirmed to proven rules. Each cycle is in one report: a second close the
    same day reports the cycles run since the first (else it changes nothing), the next day's close the rest.
    """
    from gitmem.close import run_close
    from gitmem.views.actions import day_closed

    ws, use_llm = _settings(open_memory(workspace), model=model, no_llm=no_llm)
    with _failure_reported(as_json, ws):
        result = run_close(ws, day=day, use_llm=use_llm, push=push)
    annotate(result.violations)
    _show(result, as_json=as_json)
    to_actions(day_closed(result))
    return _pushed(result)


def _settings(ws: Workspace, *, model: str | None, no_llm: bool) -> tuple[Workspace, bool]:
    """The workspace with --model applied, and whether the model words the close: not with --no-llm, nor without
    a key, nor without the `agent` extra (said as a warning: the close runs offline)."""
    from gitmem import extras
    from gitmem.close.llm import api_key_set

    if model:
        from dataclasses import replace

        ws = ws.with_config(replace(ws.config, close=replace(ws.config.close, model=model)))
    use_llm = not no_llm and api_key_set()
    if use_llm and not extras.installed("agent"):
        needs = extras.missing_extra_message("agent", "a close worded by the model")
        say("close", f"warning: {needs}; closing offline")
        use_llm = False
    return ws, use_llm


@contextmanager
def _failure_reported(as_json: bool, ws: Workspace) -> Iterator[None]:
    """A close that fails or is refused: people read the message (the error map prints it); machines read the
    same failure as a violation, in --json and as an annotation."""
    from gitmem import codes, gitio
    from gitmem.checks.render import as_data
    from gitmem.checks.violation import failure_violations
    from gitmem.close import CloseError
    from gitmem.errors import RunFailure
    from gitmem.workspace.cyclelock import LockHeld

    try:
        yield
    except (RunFailure, LockHeld) as err:
        found = failure_violations(err if isinstance(err, RunFailure) else      # at the lock file, as the cycle's
                                   CloseError(str(err), where=gitio.shown_path(ws.repo, err.path),
                                              code=codes.CLOSE_REFUSED, dirty=True))
        if as_json:
            show_json({"error": str(err), "exit_code": err.exit_code, "violations": as_data(found)}, indent=2)
            err.shown_as_json = True
        annotate(found)
        raise


def _pushed(result: CloseResult) -> int:
    """What the push (with --push) said, and the exit code it makes of the close."""
    if result.push is None:
        return ExitCode.OK
    for line in result.push.messages:
        say("close", f"push: {line}")
    return result.push.status.exit_code


def _show(result: CloseResult, *, as_json: bool) -> None:
    """The close quotes the agent (tasks, results, decision titles): no terminal escape and no secret reaches the
    screen, as in `status` and `pending`."""
    from gitmem.memory.display import masked_printable, printable_data
    from gitmem.secrets import scrub_data

    if as_json:
        show_json(scrub_data(printable_data(result.to_json())), indent=2)
    else:
        show(masked_printable(_text(result)), nl=False)


def _text(result: CloseResult) -> str:
    """The message, the close entry as written to LOG, the commit and the model's usage."""
    lines = [result.message]
    for key, value in result.report.items():
        first, *rest = value.split("\n")
        lines += [f"  {key}: {first}", *(f"    {line}" for line in rest)]
    if result.commit:
        lines.append(f"committed {result.commit[:10]} gitmem: close {result.day.isoformat()}")
    if result.llm:
        lines.append(f"model {result.llm}")
    return "\n".join(lines) + "\n"


COMMANDS = (close,)
