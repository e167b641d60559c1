"""`gitmem github prepare` and `gitmem github pr`: the Action's pull-request mode."""
from __future__ import annotations

import os
from typing import TYPE_CHECKING

import click

from gitmem.cli.common import CommandFailed, append_env_file, open_workspace, say, workspace_option
from gitmem.errors import ExitCode, exit_codes_help

if TYPE_CHECKING:     # the library loads inside commands only
    from gitmem.workspace import Workspace

DEFAULT_BRANCH = "gitmem/memory"   # gitmem.publish.pullrequest.DEFAULT_BRANCH; repeated so --help loads no library
# gitmem.publish.required_check.REQUIRED_CHECK, repeated for the same reason: the check workflow's job name.
REQUIRED_CHECK = "Verify memory history"


@click.group("github")
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
def prepare(branch: str, remote: str) -> int:
    """Continue the memory branch whose PR is still open, or start one from HEAD.

    With GITHUB_REPOSITORY and a token it asks GitHub which branch has an open PR, so a PR that was
    squash-merged or closed is never reopened: the next run starts `gitmem/memory-2` instead.
    Exit 0 on the branch; 2 HEAD is detached or unborn, the tree is dirty, or the branches diverged.
    """
    from gitmem.gitio import RepoError, open_repo
    from gitmem.publish import pullrequest
    from gitmem.publish.github_api import GitHubError, GitHubSetupError, client_from_env

    try:
        client = client_from_env(os.environ)
    except GitHubSetupError:
        client = None      # offline: a memory branch main does not contain is taken to be open

    def is_open(name: str) -> bool:
        assert client is not None
        try:
            return client.open_pull(name) is not None
        except GitHubError as err:
            # Continuing a branch is always safe; starting a second PR beside an open one is not.
            say("github prepare", f"{err}; taking {name} to be open")
            return True

    try:
        done = pullrequest.prepare_branch(open_repo(), branch=branch, remote=remote,
                                     is_open=is_open if client is not None else None)
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
    from gitmem import gitio
    from gitmem.publish import pullrequest
    from gitmem.publish.github_api import GitHubError, client_from_env
    from gitmem.views.pending import pending

    ws = open_workspace(workspace)
    here = gitio.current_branch(ws.repo)
    branch = branch or (here if here and pullrequest.recorded_base(ws.repo, here) else DEFAULT_BRANCH)
    base = base or pullrequest.recorded_base(ws.repo, branch) or os.environ.get("GITHUB_REF_NAME") or "main"
    if base == branch:
        raise click.UsageError("the PR base cannot be the memory branch itself; pass --base (e.g. main)")
    try:
        pushed = pullrequest.publish_branch(ws.repo, ws.config, branch=branch, remote=remote)
        for message in pushed.messages:
            say("github pr", message)
        if not pushed.ok:
            where = pushed.side_branch or f"local {branch}"
            raise CommandFailed("github pr", f"the push did not land; the commits are on {where}",
                                exit_code=pushed.status.exit_code)
        commits = pullrequest.proposed_commits(ws.repo, remote, base)
    except gitio.RepoError as err:
        raise CommandFailed("github pr", str(err), exit_code=err.exit_code) from err
    if not commits:
        click.echo(f"nothing to propose: {branch} adds no commit to {base}")
        return ExitCode.OK
    title, body = pullrequest.pr_text(ws.read("log"), pending(ws), commits, phase=phase, branch=branch, base=base)
    try:
        opened = client_from_env(os.environ).open_or_update(head=branch, base=base, title=title, body=body)
    except GitHubError as err:
        hint = ("the workflow needs `permissions: pull-requests: write`, and the repository setting Actions > "
                "General > 'Allow GitHub Actions to create and approve pull requests'")
        notes = [hint] if err.status == 403 else []
        _summarise_failure(f"Pull request not opened: {err}", notes)
        raise CommandFailed("github pr", f"{err}; the commits are on {remote}/{branch}",
                            exit_code=err.exit_code, notes=notes) from err
    verb = "opened" if opened.created else "updated"
    click.echo(f"{verb} pull request #{opened.number} {opened.url} ({branch} -> {base}, {len(commits)} commit(s))")
    append_env_file("GITHUB_OUTPUT", f"pr={opened.number}\npr-url={opened.url}\n")
    append_env_file("GITHUB_STEP_SUMMARY", f"- Pull request: [#{opened.number}]({opened.url}) {verb}: "
                                           f"`{branch}` -> `{base}`, {len(commits)} commit(s)\n\n")
    if not status_name:
        return ExitCode.OK
    return _report_check(ws, remote=remote, base=base, head=pushed.commit or "HEAD", name=status_name)


def _report_check(ws: Workspace, *, remote: str, base: str, head: str, name: str) -> int:
    """Verify the PR's commits and post the verdict on its head as the commit status `name`."""
    from gitmem import gitio
    from gitmem.publish.github_api import GitHubError, client_from_env
    from gitmem.publish.required_check import run_url, verify_branch

    base_tip = gitio.remote_branch_oid(ws.repo, remote, base) or (base if gitio.branch_exists(ws.repo, base)
                                                                   else None)
    verdict = verify_branch(ws, base_tip, head)
    try:
        client_from_env(os.environ).set_status(head, state=verdict.state, context=name,
                                               description=verdict.description, target_url=run_url(os.environ))
    except GitHubError as err:
        hint = (f"the workflow needs `permissions: statuses: write`: without the status a required {name!r} "
                "check never passes on a PR opened with GITHUB_TOKEN (or use a GitHub App token, whose PRs run "
                "the check workflow)")
        notes = [hint] if err.status in (403, 404) else []
        _summarise_failure(f"Check `{name}` not reported: {err}", notes)
        raise CommandFailed("gitmem github pr", f"could not report {name!r} on {head[:10]}: {err}",
                            exit_code=err.exit_code, notes=notes) from err
    click.echo(f"reported {name!r}: {verdict.state} on {head[:10]} ({verdict.description})")
    append_env_file("GITHUB_STEP_SUMMARY", f"- Check `{name}`: {verdict.state}, {verdict.description}\n\n")
    if verdict.ok:
        return ExitCode.OK
    for line in verdict.findings:
        click.echo(line, err=True)
    return ExitCode.VIOLATIONS


def _summarise_failure(what: str, notes: list[str]) -> None:
    """The failure and what to change, in the job summary too: a run's log is the last place people look."""
    append_env_file("GITHUB_STEP_SUMMARY", f"- **{what}**" + "".join(f"\n  - To fix: {note}" for note in notes)
                    + "\n\n")


COMMANDS = (github_group,)
