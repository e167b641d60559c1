"""`gitmem github prepare` and `gitmem github pr`: the Action's pull-request mode."""
from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

import click

from gitmem.cli.common import CommandFailed, CommandGroup, echo, open_workspace, say, to_actions, workspace_option
from gitmem.errors import ExitCode, exit_codes_help

if TYPE_CHECKING:     # the library loads inside commands only
    from gitmem.publish.pr_workflow import Proposal
    from gitmem.publish.required_check import BranchVerdict
    from gitmem.workspace import Workspace

DEFAULT_BRANCH = "gitmem/memory"   # gitmem.publish.pullrequest.DEFAULT_BRANCH; repeated so --help loads no library
# gitmem.publish.required_check.REQUIRED_CHECK, repeated for the same reason: the check workflow's job name.
REQUIRED_CHECK = "Verify memory history"


@click.group("github", cls=CommandGroup)
def github_group() -> None:
    """Pull-request mode, for repositories whose rulesets block direct pushes to the default branch.

    \b
    gitmem github prepare               before the cycle or close: check out the memory branch
    gitmem cycle                        (or gitmem close) commits to it
    gitmem github pr --phase cycle      push it, then open its PR or update the open one
    """


# Every code each command can end with (its --help lists them, and 70 and 130, which any command can).
PREPARE_EXIT_CODES = {
    ExitCode.OK: "on the memory branch",
    ExitCode.USAGE: "usage or config error; HEAD detached or unborn, a dirty tree, diverged branches",
}
PR_EXIT_CODES = {
    ExitCode.OK: "the PR is open or updated, and its check passed",
    ExitCode.VIOLATIONS: "the PR's commits do not verify (its check is reported failed)",
    ExitCode.USAGE: "usage or config error, no repository or token to call",
    ExitCode.SALVAGED: "a GitHub call failed or the push was refused: the commits are safe on their branch",
    ExitCode.REWRITTEN: "the upstream was rewritten: nothing is built on it",
    ExitCode.LOCAL_ONLY: "the push failed: the commits are only on this machine's disk",
}


@github_group.command("prepare", epilog=exit_codes_help(PREPARE_EXIT_CODES))
@click.option("--branch", default=DEFAULT_BRANCH, show_default=True, help="The memory branch.")
@click.option("--remote", metavar="NAME", default="origin", show_default=True,
              help="The remote the memory branch lives on.")
@workspace_option
def prepare(branch: str, remote: str, workspace: str | None) -> int:
    """Continue the memory branch whose PR is still open, or start one from HEAD.

    With GITHUB_REPOSITORY and a token it asks GitHub which branch has an open PR, so a PR that was
    squash-merged or closed is never reopened: the next run starts `gitmem/memory-2` instead. A branch that
    never had a PR (a run whose PR step failed pushed it) is continued, so its commits get one.

    An open PR's branch that lacks commits of HEAD (a session or an answer landed there) first gets them by
    memory rules, as `gitmem merge` would land the branch on HEAD: HEAD's entries keep their cycle numbers, the
    branch's follow, and the branch moves on to the merge commit (never forced), so GitHub's merge button
    merges the PR with no conflict. One that does not merge by those rules is continued as it was, and said.
    Exit 0 on the branch; 2 HEAD is detached or unborn, the tree is dirty, or the branches diverged.
    """
    from gitmem.gitio import RepoError
    from gitmem.publish import pr_workflow

    try:
        done = pr_workflow.prepare_memory_branch(open_workspace(workspace), branch=branch, remote=remote,
                                                 environ=os.environ, say=lambda line: say("github prepare", line))
    except RepoError as err:
        raise CommandFailed("github prepare", str(err), exit_code=err.exit_code) from err
    how = "continuing the branch of the open PR" if done.continued else f"started from {done.base}"
    click.echo(f"on {done.branch} at {done.commit[:10]} ({how})")
    return ExitCode.OK


@github_group.command("pr", epilog=exit_codes_help(PR_EXIT_CODES))
@click.option("--phase", type=click.Choice(["cycle", "close"]), required=True,
              help="What just ran; it words the PR.")
@click.option("--branch", default=None, metavar="BRANCH",
              help=f"The memory branch (default: the one `prepare` checked out, else {DEFAULT_BRANCH}).")
@click.option("--base", default=None, metavar="BRANCH",
              help="The PR's base (default: the branch `prepare` started from, else GITHUB_REF_NAME, else main).")
@click.option("--remote", metavar="NAME", default="origin", show_default=True,
              help="The remote the memory branch lives on.")
@click.option("--status-name", default=REQUIRED_CHECK, show_default=True, metavar="NAME",
              help="Verify the branch and report it as a commit status of this name on the PR head: the required "
                   "check a PR opened with GITHUB_TOKEN never gets from a workflow. '' reports none.")
@workspace_option
def pr(phase: str, branch: str | None, base: str | None, remote: str, status_name: str,
       workspace: str | None) -> int:
    """Push the memory branch (never forced), then open its pull request or update the open one.

    A failed cycle's `gitmem/salvage/*` branches are pushed too. Needs GITHUB_REPOSITORY and a token
    (GITMEM_GIT_TOKEN or GITHUB_TOKEN); GITHUB_API_URL defaults to the public API. Sets `pr` and `pr-url`
    in $GITHUB_OUTPUT.

    A PR opened with the workflow's GITHUB_TOKEN starts no workflow, so a required "Verify memory history"
    check would never run on it. This step verifies the branch as that job does (`gitmem verify --range
    BASE...HEAD`) and posts the verdict as a commit status of that name on the PR head (the workflow needs
    `statuses: write`). Or give the action a GitHub App token, whose PRs do start workflows.

    Exit 0 done (or nothing to propose); 1 the branch fails verification (reported on the PR); 2 no token or
    repository; 4 the push or an API call failed: the commits are safe on a branch; 5 the memory branch was
    rewritten upstream (nothing is built on it; the commits are on a side branch).
    """
    from gitmem.publish import pr_workflow

    ws = open_workspace(workspace)
    branch, base = _branches(ws, branch, base)
    with _failures_summarised():
        proposal = pr_workflow.open_pull_request(ws, phase=phase, branch=branch, base=base, remote=remote,
                                                 environ=os.environ, say=lambda line: say("github pr", line))
        if not _show_proposal(proposal) or not status_name:
            return ExitCode.OK
        verdict = pr_workflow.report_check(ws, proposal, name=status_name, environ=os.environ)
    return _show_verdict(status_name, proposal, verdict)


def _branches(ws: Workspace, branch: str | None, base: str | None) -> tuple[str, str]:
    from gitmem.publish.pr_workflow import branches

    branch, base = branches(ws.repo, branch, base, os.environ)
    if base == branch:
        raise click.UsageError("the PR base cannot be the memory branch itself; pass --base (e.g. main)")
    return branch, base


@contextmanager
def _failures_summarised() -> Iterator[None]:
    """A failed step as `gitmem: github pr: …` with what to change, and in the job summary too."""
    from gitmem.publish.pr_workflow import PullRequestFailed
    from gitmem.views.actions import step_failed

    try:
        yield
    except PullRequestFailed as err:
        if err.what:
            to_actions(step_failed(err.what, err.notes))
        raise CommandFailed("github pr", str(err), exit_code=err.exit_code, notes=err.notes) from err


def _show_proposal(proposal: Proposal) -> bool:
    """Say what became of the PR; whether one is open."""
    from gitmem.views.actions import pull_request_opened

    opened, branch, base = proposal.opened, proposal.branch, proposal.base
    if opened is None:
        click.echo(f"nothing to propose: {branch} adds no commit to {base}")
        return False
    verb = "opened" if opened.created else "updated"
    click.echo(f"{verb} pull request #{opened.number} {opened.url} ({branch} -> {base}, "
               f"{len(proposal.commits)} commit(s))")
    to_actions(pull_request_opened(opened, branch=branch, base=base, commits=len(proposal.commits)))
    return True


def _show_verdict(name: str, proposal: Proposal, verdict: BranchVerdict) -> int:
    from gitmem.views.actions import check_reported

    click.echo(f"reported {name!r}: {verdict.state} on {proposal.head[:10]} ({verdict.description})")
    to_actions(check_reported(name, verdict))
    if verdict.ok:
        return ExitCode.OK
    for line in verdict.findings:
        echo(line, err=True)
    return ExitCode.VIOLATIONS


COMMANDS = (github_group,)
