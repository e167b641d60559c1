"""`gitmem check` and `gitmem verify`: validate memory, never write anything."""
from __future__ import annotations

import functools
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

import click

from gitmem.cli.common import echo, echo_json, format_option, open_workspace, progress, show_commands, workspace_option
from gitmem.errors import ExitCode, exit_codes_help

if TYPE_CHECKING:
    from gitmem.checks.check_and_verify import RangeResult, Span
    from gitmem.checks.violation import Violation
    from gitmem.workspace import Workspace

def _emit(violations: list[Violation], fmt: str) -> int:
    from gitmem.checks import has_errors
    from gitmem.checks.render import RENDERERS

    text = RENDERERS[fmt](violations)
    if text:     # the `github` format is gitmem's own workflow commands; the others quote memory and names
        (show_commands if fmt == "github" else functools.partial(echo_json if fmt == "json" else echo, nl=False))(text)
    return ExitCode.VIOLATIONS if has_errors(violations) else ExitCode.OK


@contextmanager
def _annotated(command: str, fmt: str) -> Iterator[None]:
    """With --format github, an error that stops the command (not a repository, a shallow clone) shows on the
    run too (gitmem.views.actions.command_failed)."""
    from gitmem.errors import GitmemError

    try:
        yield
    except GitmemError as err:
        if fmt == "github":
            from gitmem.cli.common import to_actions
            from gitmem.views.actions import command_failed

            to_actions(command_failed(command, str(err)))
        raise


def _report_to_actions(command: str, fmt: str, violations: list[Violation], code: int, detail: str) -> None:
    """Under GitHub Actions (--format github): `outcome` and a job summary (gitmem.views.actions.checked)."""
    if fmt == "github":
        from gitmem.cli.common import to_actions
        from gitmem.views.actions import checked

        to_actions(checked(command, code, detail, violations))


# Every code each command can end with (its --help lists them, and 70 and 130, which any command can).
CHECK_EXIT_CODES = {
    ExitCode.OK: "clean (warnings may be printed)",
    ExitCode.VIOLATIONS: "violations",
    ExitCode.USAGE: "usage or config error, not a git repository, no memory here (run `gitmem init`)",
}
VERIFY_EXIT_CODES = {
    ExitCode.OK: "clean (warnings may be printed)",
    ExitCode.VIOLATIONS: "violations",
    ExitCode.USAGE: "usage or config error, not a git repository, a shallow clone",
    ExitCode.REWRITTEN: "the range is not a descendant: history was rewritten",
}


@click.command("check", epilog=exit_codes_help(CHECK_EXIT_CODES))
@click.option("--worktree", is_flag=True, help="Validate the working-tree files instead of what is staged.")
@format_option
@workspace_option
def check_command(worktree: bool, fmt: str, workspace: str | None) -> int:
    """Validate staged memory against HEAD (or, with --worktree, the work tree), in every workspace.

    It reads the index git hands to hooks (GIT_INDEX_FILE) and never writes the index or the work tree.
    Prints one `path:line: GMnnn message` line per problem. Exit 0 clean, 1 violations, 2 config error.
    With --format github it also writes `outcome` to $GITHUB_OUTPUT and a job summary.
    """
    with _annotated("check", fmt):
        found = _checked(open_workspace(workspace) if worktree else _workspace_for_staged(workspace),
                         worktree=worktree, fmt=fmt)
    code = _emit(found, fmt)
    _report_to_actions("check", fmt, found, code, "the work tree" if worktree else "what is staged")
    return code


def _checked(ws: Workspace, *, worktree: bool, fmt: str) -> list[Violation]:
    """What `check` finds in every workspace: the work tree or what is staged; NoMemory when there is none."""
    from gitmem.checks.check_and_verify import check_worktree
    from gitmem.checks.clone_setup import clone_setup
    from gitmem.checks.every_workspace import check_every, check_staged_every

    found = check_every(ws, check_worktree) if worktree else check_staged_every(ws)
    _some_memory(ws, found)
    # A CI checkout merges nothing: the merge driver matters in a clone a human pulls into.
    return [*found, *(clone_setup(ws) if fmt != "github" else [])]


def _some_memory(ws: Workspace, found: list[Violation]) -> None:
    """A repository with no memory at all (every memory file of every workspace missing, GM904, and none in the
    work tree): NoMemory, exit 2 and "run `gitmem init`" once, as every other command says it
    (gitmem.views.health.require_memory), not one GM904 per file. A workspace with memory, files that are only
    unstaged or unmerged, or one workspace named (`--workspace`, whose files the human makes, not `init`), leave
    the findings as they are."""
    from gitmem import codes
    from gitmem.checks.every_workspace import each_workspace
    from gitmem.config import REQUIRED_ROLES

    missing = {v.path for v in found if v.code == codes.MEMORY_FILE_MISSING.code}
    if missing and not ws.name and all(each.config.path(role) in missing for each in each_workspace(ws)
                                       for role in REQUIRED_ROLES):
        # Off the pre-commit path: loaded only when there is no memory.
        from gitmem.views.health import require_memory

        require_memory(ws)


def _workspace_for_staged(workspace: str | None) -> Workspace:
    """The workspace, or, when the work tree's gitmem.yaml is not a regular file, the one the index holds
    (gitmem.checks.check_and_verify.workspace_from_index)."""
    from gitmem.checks.check_and_verify import workspace_from_index
    from gitmem.config import ConfigError

    try:
        return open_workspace(workspace)
    except ConfigError:
        staged = workspace_from_index(workspace)
        if staged is None:
            raise
        return staged


ZERO_SHA = "0" * 40


def _is_zero(rev: str) -> bool:
    return bool(rev) and rev.strip("0") == ""


def _push_spans(ws: Workspace, remote: str | None) -> list[Span]:
    """What a push sends: pre-commit's PRE_COMMIT_* variables, else git's pre-push lines on stdin."""
    from gitmem.checks.check_and_verify import Span, pushed_span

    to_ref = os.environ.get("PRE_COMMIT_TO_REF")
    if to_ref:
        from_ref = os.environ.get("PRE_COMMIT_FROM_REF") or ZERO_SHA
        return [Span(None if _is_zero(from_ref) else from_ref, to_ref)]
    # A push that includes the root commit: pre-commit gives no refs, only the local branch.
    local = os.environ.get("PRE_COMMIT_LOCAL_BRANCH")
    if local:
        return [Span(None, local)]
    spans: list[Span] = []
    stdin = sys.stdin
    for line in ([] if stdin is None or stdin.isatty() else stdin.read().splitlines()):
        parts = line.split()
        if len(parts) == 4 and not _is_zero(parts[1]):      # a zero local sha deletes a branch: nothing to check
            spans.append(pushed_span(ws, None if _is_zero(parts[3]) else parts[3], parts[1], remote=remote))
    return spans


def _parse_range(ws: Workspace, rev_range: str, branch: str | None = None) -> list[Span]:
    """A..B as given; A...B from the merge base (a pull request); an all-zero A is a new branch (the commits
    of B that no other remote branch has), as GitHub's `before` and git's pre-push give it."""
    from gitmem import gitio
    from gitmem.checks.check_and_verify import Span, new_branch

    if "..." in rev_range:
        start, end = rev_range.split("...", 1)
        return [Span(gitio.merge_base(ws.repo, start or "HEAD", end or "HEAD"), end or "HEAD")]
    if rev_range.count("..") != 1:
        raise click.BadParameter("expected A..B or A...B", param_hint="--range")
    start, end = rev_range.split("..")
    if _is_zero(start):
        return [new_branch(ws, end or "HEAD", pushed=True, branch=branch)]
    return [Span(start or "HEAD", end or "HEAD")]


@click.command(epilog=exit_codes_help(VERIFY_EXIT_CODES))
@click.option("--range", "rev_range", metavar="A..B",
              help="Check every commit in A..B against its parent; A...B starts at the merge base; an all-zero A "
                   "(a new branch) checks only the commits no other remote branch has.")
@click.option("--pre-push", "pre_push", is_flag=True,
              help="Take the range from the push being made (pre-commit or a plain git pre-push hook).")
@click.option("--branch", metavar="NAME", default=None,
              help="With an all-zero A: the name the new branch was pushed as, so that every other remote branch "
                   "counts as verified history (CI passes the pushed ref).")
@click.option("--remote", metavar="NAME", default=None,
              help="With --pre-push: the remote pushed to (git gives it to the hook as $1). A new branch is "
                   "checked from where it leaves that remote's branches (default: any remote's).")
@format_option
@workspace_option
def verify(rev_range: str | None, pre_push: bool, branch: str | None, remote: str | None, fmt: str,
           workspace: str | None) -> int:
    """Check every commit in a range, each against its parent, in every workspace: for CI and pre-push.

    If B does not descend from A (history was rewritten), it fails with exit code 5. A shallow clone whose
    history stops inside the range is an error that says to fetch the whole history (`fetch-depth: 0`).
    With --format github it also writes `outcome` to $GITHUB_OUTPUT and a job summary.
    """
    if pre_push == bool(rev_range):
        raise click.UsageError("give exactly one of --range A..B or --pre-push")
    with _annotated("verify", fmt):
        ws = open_workspace(workspace)
        result = _verify(ws, _parse_range(ws, rev_range, branch) if rev_range else _push_spans(ws, remote or None))
    return _verdict(result, fmt)


def _verify(ws: Workspace, spans: list[Span]) -> RangeResult:
    """Every span verified in every workspace (gitmem.checks.every_workspace), with a progress bar on a terminal."""
    from gitmem.checks.check_and_verify import RangeResult
    from gitmem.checks.every_workspace import span_work, verify_every

    result = RangeResult()
    for span in spans:
        with progress(functools.partial(span_work, ws, span), "verifying commits") as advance:
            part = verify_every(ws, span.start, span.end, hide=span.hide, progress=advance)
        result.violations += part.violations
        result.commits += part.commits
        result.before_adoption += part.before_adoption
        result.rewritten = result.rewritten or part.rewritten
    return result


def _verdict(result: RangeResult, fmt: str) -> int:
    """The violations in `fmt`, a clean range said in text, and the exit code: 5 when history was rewritten."""
    violations = sorted(result.violations)
    code = _emit(violations, fmt)
    if fmt == "text" and result.before_adoption:       # said once, never a GM904 per file and commit
        click.echo(f"{result.before_adoption} commit(s) from before gitmem was adopted (no gitmem.yaml and not "
                   "every memory file): nothing in them to check", err=True)
    if fmt == "text" and not result.violations:
        click.echo(f"{result.commits} commit(s) verified, memory history is clean", err=True)
    code = ExitCode.REWRITTEN if result.rewritten else code
    _report_to_actions("verify", fmt, violations, code, f"{result.commits} commit(s) verified")
    return code


COMMANDS = (check_command, verify)
