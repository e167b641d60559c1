"""`gitmem report`: months of an agent at a glance, as one self-contained HTML page or as Markdown with Mermaid
charts for a job summary."""
from __future__ import annotations

from datetime import date

import click

from gitmem.cli.common import UsageError, open_workspace, workspace_option
from gitmem.errors import ExitCode

EARLIEST, LATEST = date(1970, 1, 1), date(2199, 12, 31)    # a chart has a point per day


def _day(ctx: click.Context, param: click.Parameter, value: str | None) -> date | None:
    if value is None:
        return None
    try:
        day = date.fromisoformat(value)
    except ValueError:
        raise click.BadParameter(f"{value!r} is not a date like 2026-11-30") from None
    if not EARLIEST <= day <= LATEST:      # 0001-01-01 would be 740,000 points
        raise click.BadParameter(f"{value} is out of range: give a day from {EARLIEST} to {LATEST}")
    return day


@click.command("report")
@click.option("--format", "fmt", type=click.Choice(["html", "summary"]), default="html", show_default=True,
              help="html: one self-contained page with charts; summary: Markdown with Mermaid charts of the last "
                   "14 days, for $GITHUB_STEP_SUMMARY.")
@click.option("--since", metavar="YYYY-MM-DD", callback=_day,
              help="First day shown (html default: the first cycle; summary default: 14 days before --until).")
@click.option("--until", metavar="YYYY-MM-DD", callback=_day, help="Last day shown (default: today).")
@click.option("--out", metavar="PATH", default=None,
              help="Where to write; `-` for stdout. Default: html goes to .git/gitmem/report.html (never into the "
                   "work tree, which a cycle needs clean), summary to stdout.")
@workspace_option
@click.option("--all-workspaces", is_flag=True, help="Every workspace of gitmem.yaml, side by side.")
def report(fmt: str, since: date | None, until: date | None, out: str | None, workspace: str | None,
           all_workspaces: bool) -> int:
    """Charts of the whole history: cycles per day by outcome with Rule 0 streaks, decision waiting times, the
    lesson funnel and proven rules against the cap, tokens, cost and cache hits per cycle, context size against
    the budget, reverted edits and salvage branches; plus the pending decisions and the latest close report.

    Reads LOG in one pass (or only its tail for a late --since). Everything shown is redacted of secrets.
    """
    from pathlib import Path

    from gitmem.report import build

    if all_workspaces and workspace:
        raise UsageError("use --workspace NAME or --all-workspaces, not both")
    if since and until and since > until:
        raise UsageError(f"--since {since} is after --until {until}")
    ws = open_workspace(workspace)
    text = build(ws, fmt=fmt, since=since, until=until, all_workspaces=all_workspaces)
    if out == "-" or (out is None and fmt == "summary"):
        click.echo(text, nl=False)
        return ExitCode.OK
    from gitmem.workspace.statedir import state_directory

    target = Path(out) if out is not None else state_directory(ws.state_dir or ws.root) / "report.html"
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    except OSError as err:
        raise UsageError(f"cannot write {target}: {err.strerror or err}; choose another --out") from None
    click.echo(f"wrote {target} ({len(text.encode('utf-8')) // 1024} KB)")
    return ExitCode.OK


COMMANDS = (report,)
