"""`gitmem merge BRANCH`: land a side branch by memory rules (gitmem.publish.sidemerge)."""
from __future__ import annotations

import os
from pathlib import Path

import click

from gitmem.cli.common import CommandFailed, echo, open_workspace, show, workspace_option
from gitmem.errors import ExitCode, exit_codes_help

EXIT_CODES = {
    ExitCode.OK: "merged, or already merged",
    ExitCode.VIOLATIONS: "not merged: a path does not merge by memory rules, or the merge would fail verify",
    ExitCode.USAGE: "usage or config error (no such branch, no git author)",
}


@click.command("merge", epilog=exit_codes_help(EXIT_CODES))
@click.argument("branch")
@workspace_option
def merge_command(branch: str, workspace: str | None) -> int:
    """Merge BRANCH into the current branch by memory rules, as one merge commit.

    Use it for the side branch a cycle or a close left (`gitmem/cycle-19`: fetch it first and name it
    `origin/gitmem/cycle-19`), or any branch another writer made. Its LOG entries and NOW blocks go after
    ours and its cycles take the numbers after our last one (a cycle number is a position in the merged
    history); decisions and lessons merge by ID, and those it added under an ID ours took too take the IDs
    after ours, answers and confirmations kept. A close of the branch's of a day the current branch closed first
    (its push failed, and another close reached the remote) is left out, with the branch's closes after it: a day
    is in one report. The result passes `gitmem check` and `gitmem verify`, or nothing changes.
    """
    from gitmem.publish.sidemerge import MergeRefused, merge_branch

    ws = open_workspace(workspace)
    try:
        done = merge_branch(ws, branch)
    except MergeRefused as err:
        raise CommandFailed("merge", str(err), exit_code=ExitCode.USAGE if err.usage else ExitCode.VIOLATIONS,
                            violations=err.violations) from None
    for line in done.messages:
        show(line)
    return ExitCode.OK


# What git reads from its merge driver: 0 merged (written into OURS), anything else a conflict left in OURS.
DRIVER_EXIT_CODES = {
    ExitCode.OK: "merged by memory rules, or by git's own line merge without a conflict",
    ExitCode.VIOLATIONS: "a conflict: git's own markers are left in OURS, with both sides' text",
    ExitCode.USAGE: "usage or config error, not a git repository",
}


@click.command("merge-driver", hidden=True, epilog=exit_codes_help(DRIVER_EXIT_CODES))
@click.argument("base", type=click.Path(dir_okay=False, path_type=Path))
@click.argument("ours", type=click.Path(dir_okay=False, path_type=Path))
@click.argument("theirs", type=click.Path(dir_okay=False, path_type=Path))
@click.argument("path")
def merge_driver_command(base: Path, ours: Path, theirs: Path, path: str) -> int:
    """git's merge driver for the memory files (`gitmem init` registers it): writes the merge into OURS and
    exits 0, or leaves git's own conflict markers there and exits 1."""
    from gitmem.publish.driver import run_driver

    done = run_driver(Path.cwd(), base, ours, theirs, path, os.environ)
    if done.said:
        echo(done.said, err=True)
    return ExitCode.OK if done.clean else ExitCode.VIOLATIONS


COMMANDS = (merge_command, merge_driver_command)
