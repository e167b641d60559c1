"""`gitmem close`: the daily close (report, plan, promotions) as one commit by the agent identity."""
from __future__ import annotations

import json
from datetime import date
from typing import TYPE_CHECKING

import click

from gitmem.cli.common import DayParam, annotate, json_option, open_workspace, say, show, show_json, workspace_option
from gitmem.errors import ExitCode, exit_codes_help

if TYPE_CHECKING:   # the library loads inside the command only
    from gitmem.close import CloseResult


# Every code `gitmem close` can end with (the help lists them, and 70 and 130, which any command can).
EXIT_CODES = {
    ExitCode.OK: "done (or already closed)",
    ExitCode.VIOLATIONS: "the result would be invalid",
    ExitCode.USAGE: "usage or config error (a bad --date, a bad gitmem.yaml)",
    ExitCode.DIRTY: "memory files are dirty or a cycle holds the lock",
    ExitCode.SALVAGED: "with --push, the push conflicted, or the remote refused it for good (a protected branch: "
                       "the close is on a `gitmem/close-DAY` branch; pull-request mode is the setting for that), "
                       "or there is no remote",
    ExitCode.REWRITTEN: "with --push, the upstream was rewritten: nothing is built on it",
    ExitCode.LOCAL_ONLY: "with --push, the push failed: the close is only on this machine's disk",
}


@click.command("close", epilog=exit_codes_help(EXIT_CODES))
@click.option("--date", "day", metavar="YYYY-MM-DD", type=DayParam(), default=None,
              help="The day to close (default: today in the configured time zone).")
@click.option("--no-llm", "no_llm", is_flag=True,
              help="Build the report and rules from the data only, even when ANTHROPIC_API_KEY is set.")
@click.option("--push", is_flag=True, help="Fetch, rebase and push the close commit, retrying with backoff.")
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
    from gitmem import codes, extras
    from gitmem.checks.render import as_data
    from gitmem.checks.violation import failure_violations
    from gitmem.close import CloseError, run_close
    from gitmem.close.llm import available
    from gitmem.cycle.lock import LockHeld
    from gitmem.errors import RunFailure
    from gitmem.publish.push import PushStatus

    ws = open_workspace(workspace)
    if model:
        from dataclasses import replace

        ws = ws.with_config(replace(ws.config, close=replace(ws.config.close, model=model)))
    use_llm = not no_llm and available()
    if use_llm and not extras.installed("agent"):
        needs = extras.missing_extra_message("agent", "a close worded by the model")
        say("close", f"warning: {needs}; closing offline")
        use_llm = False
    try:
        result = run_close(ws, day=day, use_llm=use_llm, push=push)
    except (RunFailure, LockHeld) as err:
        # People read the message (the error map prints it); machines read the same failure as a violation.
        found = failure_violations(err if isinstance(err, RunFailure) else
                                   CloseError(str(err), code=codes.CLOSE_REFUSED, dirty=True))
        if as_json:
            click.echo(json.dumps({"error": str(err), "exit_code": err.exit_code, "violations": as_data(found)},
                                  indent=2, ensure_ascii=False))
        annotate(found)
        raise
    annotate(result.violations)
    if as_json:
        show_json(result.to_json(), indent=2)
    else:
        show(_text(result), nl=False)
    _report_to_actions(result)
    if result.push is not None:
        for line in result.push["messages"]:
            say("close", f"push: {line}")
        return PushStatus(result.push["status"]).exit_code
    return ExitCode.OK


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


def _report_to_actions(result: CloseResult) -> None:
    """Under GitHub Actions: `outcome` and `commit` for $GITHUB_OUTPUT, a short account for the job summary."""
    from gitmem.cli.common import append_env_file
    from gitmem.cycle.runner import push_outputs, push_summary

    account = [f"### gitmem close {result.day.isoformat()}: {result.status}", ""]
    for key in ("Cycles", "Problems", "Waiting", "Plan"):
        if result.report.get(key):
            account.append(f"- {key}: {'; '.join(result.report[key].splitlines())}")
    account += [f"- Promoted: {p['rule']} from {p['lesson']}" for p in result.promoted]
    account.append(f"- Commit: `{(result.commit or '-')[:12]}`")
    status, side = (result.push["status"], result.push["side_branch"]) if result.push else ("", None)
    account += push_summary(status, side)
    append_env_file("GITHUB_OUTPUT", f"outcome={result.status}\ncommit={result.commit or ''}\n"
                    + push_outputs(status, side))
    append_env_file("GITHUB_STEP_SUMMARY", "\n".join(account) + "\n\n")


COMMANDS = (close,)
