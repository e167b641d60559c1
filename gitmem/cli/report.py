"""`gitmem report`: months of an agent at a glance, as one self-contained HTML page or as Markdown with Mermaid
charts for a job summary."""
from __future__ import annotations

from datetime import date
from pathlib import Path

import click

from gitmem.cli.common import (
    DayParam,
    echo,
    one_workspace_or_all,
    open_workspace,
    ordered_window,
    workspace_option,
    write_page,
)
from gitmem.errors import ExitCode, exit_codes_help

# A chart has a point per day: 0001-01-01 would be 740,000 of them.
DAYS = DayParam()


# Every code the command can end with (its --help lists them, and 70 and 130, which any command can).
EXIT_CODES = {
    ExitCode.OK: "done",
    ExitCode.USAGE: "usage or config error, not a git repository",
}


@click.command("report", epilog=exit_codes_help(EXIT_CODES))
@click.option("--format", "fmt", type=click.Choice(["html", "summary"]), default="html", show_default=True,
              help="html: one self-contained page with charts; summary: Markdown with Mermaid charts of the last "
                   "14 days, for $GITHUB_STEP_SUMMARY.")
@click.option("--since", metavar="YYYY-MM-DD", type=DAYS,
              help="First day shown (html default: the first cycle; summary default: 14 days before --until).")
@click.option("--until", metavar="YYYY-MM-DD", type=DAYS, help="Last day shown (default: today).")
@click.option("--out", metavar="PATH", default=None,
              help="Where to write; `-` for stdout; never in place of a memory file, gitmem.yaml or a file of the "
                   "git directory. Default: html goes to .git/gitmem/report.html (never into the work tree, which a "
                   "cycle needs clean), summary to stdout.")
@workspace_option
@click.option("--all-workspaces", is_flag=True, help="Every workspace of gitmem.yaml, side by side.")
def report(fmt: str, since: date | None, until: date | None, out: str | None, workspace: str | None,
           all_workspaces: bool) -> int:
    """Charts of the whole history: cycles per day by outcome with Rule 0 streaks, decision waiting times, the
    lesson funnel and proven rules against the cap, tokens, cost and cache hits per cycle, context size against
    the budget, reverted edits and salvage branches; plus the pending decisions and the latest close report.

    Reads LOG in one pass (or only its tail for a late --since). Everything shown is redacted of secrets.
    """
    from gitmem.report import render_reports, report_target, reports

    one_workspace_or_all(workspace, all_workspaces)
    ordered_window(since, until)
    ws = open_workspace(workspace)
    found = reports(ws, fmt=fmt, since=since, until=until, all_workspaces=all_workspaces)
    _deliver(render_reports(found, fmt), report_target(ws, out, fmt))
    for problem in (problem for each in found for problem in each.problems):   # said on the page too
        echo(problem, err=True)
    return ExitCode.OK


def _deliver(text: str, target: Path | None) -> None:
    """The report on stdout (`target` None), or written to `target` and named with its size."""
    if target is None:
        echo(text, nl=False)
        return
    write_page(target, text.encode("utf-8"))
    click.echo(f"wrote {target} ({len(text.encode('utf-8')) // 1024} KB)")


COMMANDS = (report,)
