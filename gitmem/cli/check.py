"""`gitmem check` and `gitmem verify`: validate memory, never write anything."""
from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING

import click

from gitmem.cli.common import format_option, open_workspace, workspace_option
from gitmem.errors import ExitCode

if TYPE_CHECKING:
    from gitmem.checks.violation import Violation
    from gitmem.workspace import Workspace


def _emit(violations: list[Violation], fmt: str) -> int:
    from gitmem.checks import has_errors
    from gitmem.checks.render import RENDERERS

    text = RENDERERS[fmt](violations)
    if text:
        click.echo(text, nl=False)
    return ExitCode.VIOLATIONS if has_errors(violations) else ExitCode.OK


@click.command()
@click.option("--worktree", is_flag=True, help="Validate the working-tree files instead of what is staged.")
@format_option
@workspace_option
def check(worktree: bool, fmt: str, workspace: str | None) -> int:
    """Validate staged memory against HEAD (or, with --worktree, the work tree).

    It reads the index git hands to hooks (GIT_INDEX_FILE) and never writes the index or the work tree.
    Prints one `path:line: GMnnn message` line per problem. Exit 0 clean, 1 violations, 2 config error.
    """
    from gitmem.checks.targets import check_staged, check_worktree, staged_config

    if worktree:
        return _emit(check_worktree(open_workspace(workspace)), fmt)
    ws = _workspace_for_staged(workspace)
    # What is staged is judged by the staged config, so a commit that changes limits is checked by them.
    return _emit(check_staged(ws.with_config(staged_config(ws))), fmt)


def _workspace_for_staged(workspace: str | None) -> Workspace:
    """The workspace, judged by what is staged. A gitmem.yaml in the work tree that is not a regular file (a
    link, a directory) says nothing about the commit being made: the staged one is read, and GM908 reports it
    if it is staged as such too."""
    from gitmem.config import CONFIG_NAME, ConfigError

    try:
        return open_workspace(workspace)
    except ConfigError:
        from gitmem import gitio
        from gitmem.checks.targets import config_at
        from gitmem.workspace import Workspace, files

        repo = gitio.open_repo()
        root = gitio.work_tree(repo)
        if root is None or files.problem(root, CONFIG_NAME) is None:
            raise
        staged = gitio.index_snapshot(repo, [CONFIG_NAME]).read(CONFIG_NAME)
        return Workspace.for_repo(repo, config_at(staged, workspace=workspace))


ZERO_SHA = "0" * 40


def _push_ranges() -> list[tuple[str | None, str]]:
    """What a push sends: pre-commit's PRE_COMMIT_* variables, else git's pre-push lines on stdin."""
    to_ref = os.environ.get("PRE_COMMIT_TO_REF")
    if to_ref:
        from_ref = os.environ.get("PRE_COMMIT_FROM_REF") or ZERO_SHA
        return [(None if from_ref == ZERO_SHA else from_ref, to_ref)]
    # A push that includes the root commit: pre-commit gives no refs, only the local branch.
    local = os.environ.get("PRE_COMMIT_LOCAL_BRANCH")
    if local:
        return [(None, local)]
    ranges: list[tuple[str | None, str]] = []
    stdin = sys.stdin
    for line in ([] if stdin is None or stdin.isatty() else stdin.read().splitlines()):
        parts = line.split()
        if len(parts) == 4 and parts[1] != ZERO_SHA:
            ranges.append((None if parts[3] == ZERO_SHA else parts[3], parts[1]))
    return ranges


def _parse_range(ws: Workspace, rev_range: str) -> list[tuple[str | None, str]]:
    """A..B as given; A...B from the merge base (a pull request); an all-zero A means "from the root"."""
    from gitmem import gitio

    if "..." in rev_range:
        start, end = rev_range.split("...", 1)
        return [(gitio.merge_base(ws.repo, start or "HEAD", end or "HEAD"), end or "HEAD")]
    if rev_range.count("..") != 1:
        raise click.BadParameter("expected A..B or A...B", param_hint="--range")
    start, end = rev_range.split("..")
    return [(None if start.strip("0") == "" and start else (start or "HEAD"), end or "HEAD")]


@click.command()
@click.option("--range", "rev_range", metavar="A..B", help="Check every commit in A..B against its parent; A...B starts at the merge base.")
@click.option("--pre-push", "pre_push", is_flag=True,
              help="Take the range from the push being made (pre-commit or a plain git pre-push hook).")
@format_option
@workspace_option
def verify(rev_range: str | None, pre_push: bool, fmt: str, workspace: str | None) -> int:
    """Check every commit in a range, each against its parent: for CI and pre-push.

    If B does not descend from A (history was rewritten), it fails with exit code 5.
    """
    from gitmem.checks.targets import RangeResult, verify_range

    if pre_push == bool(rev_range):
        raise click.UsageError("give exactly one of --range A..B or --pre-push")
    ws = open_workspace(workspace)
    ranges = _parse_range(ws, rev_range) if rev_range else _push_ranges()
    result = RangeResult()
    for start_rev, end_rev in ranges:
        part = verify_range(ws, start_rev, end_rev)
        result.violations += part.violations
        result.commits += part.commits
        result.rewritten = result.rewritten or part.rewritten
    code = _emit(sorted(result.violations), fmt)
    if fmt == "text" and not result.violations:
        click.echo(f"{result.commits} commit(s) verified, memory history is clean", err=True)
    return ExitCode.REWRITTEN if result.rewritten else code


COMMANDS = (check, verify)
