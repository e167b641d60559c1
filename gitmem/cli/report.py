"""`gitmem report`: months of an agent at a glance, as one self-contained HTML page or as Markdown with Mermaid
charts for a job summary."""
from __future__ import annotations

import errno
import os
import stat
from datetime import date
from pathlib import Path

import click

from gitmem.cli.common import DayParam, UsageError, open_workspace, workspace_option
from gitmem.confined import files
from gitmem.errors import ExitCode, exit_codes_help

# A chart has a point per day: 0001-01-01 would be 740,000 of them.
DAYS = DayParam(earliest=date(1970, 1, 1), latest=date(2199, 12, 31))


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
        write_no_link(target, text.encode("utf-8"))
    except OSError as err:
        if err.errno == errno.ENAMETOOLONG:
            raise UsageError(f"cannot write {target}: {files.NAME_TOO_LONG}; choose a shorter --out") from None
        why = "a link is in the way (gitmem never writes through one)" if err.errno == errno.ELOOP else \
            "it is not a regular file" if err.errno == errno.EISDIR else err.strerror or str(err)
        raise UsageError(f"cannot write {target}: {why}; remove it or choose another --out") from None
    click.echo(f"wrote {target} ({len(text.encode('utf-8')) // 1024} KB)")
    return ExitCode.OK


def write_no_link(target: Path, data: bytes) -> None:
    """Write `target` without following a link planted at it (an agent can reach .git/gitmem/report.html), nor
    opening a FIFO or a device there: O_NOFOLLOW and O_NONBLOCK, then only a regular file is truncated."""
    fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, 0o644)
    with os.fdopen(fd, "wb") as handle:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(errno.EISDIR, "not a regular file")
        handle.truncate(0)
        handle.write(data)


COMMANDS = (report,)
