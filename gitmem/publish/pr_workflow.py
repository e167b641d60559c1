"""Pull-request mode's steps as library calls, for `gitmem github prepare` and `gitmem github pr`: the memory
branch to continue, with the base's new commits brought in (`prepare_memory_branch`); whether a memory branch's
PR is still open (`open_pull_finder`); the memory branch and its base (`branches`); push the branch and open or
update its pull request (`open_pull_request`); verify it and post the verdict as a commit status (`report_check`).

A PR opened with the workflow's GITHUB_TOKEN starts no workflow, so a required "Verify memory history" check would
never run on it: `report_check` verifies the branch as that job does and posts the verdict on the PR head. A step
that fails raises `PullRequestFailed`, which says where the commits are and, for the job summary, what to change.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from gitmem import gitio
from gitmem.errors import GitmemError
from gitmem.memory import decisions
from gitmem.publish import pullrequest
from gitmem.publish.github_api import GitHubError, GitHubSetupError, PullRequest, client_from_env
from gitmem.publish.required_check import BranchVerdict, run_url, verify_branch
from gitmem.workspace import Workspace

PR_PERMISSION = ("the workflow needs `permissions: pull-requests: write`, and the repository setting Actions > "
                 "General > 'Allow GitHub Actions to create and approve pull requests'")


class PullRequestFailed(GitmemError):
    """A step of pull-request mode failed; the message says where the commits are. `what` (when set) is the
    failure as the job summary words it, `notes` what to change."""

    def __init__(self, message: str, *, exit_code: int, what: str = "", notes: Sequence[str] = ()) -> None:
        super().__init__(message)
        self.exit_code = exit_code
        self.what = what
        self.notes = tuple(notes)


@dataclass(frozen=True)
class Proposal:
    """The memory branch as proposed: its PR (None when the branch adds no commit to `base`)."""

    branch: str
    base: str
    remote: str
    head: str                                   # the pushed tip: where the check's status goes
    commits: tuple[tuple[str, str], ...] = ()
    opened: PullRequest | None = None


def open_pull_finder(environ: Mapping[str, str], *, warn: Callable[[str], None]) -> Callable[[str], bool] | None:
    """Whether a branch's PR is open, asked of GitHub (for `prepare_branch`): open, or never opened, as when a
    run pushed the branch but its PR step failed (a missing permission): its commits are proposed by the next
    run's PR, never left in none. A branch whose PR was merged or closed is not. None offline, without a
    repository or token: a memory branch main does not contain is then taken to be open."""
    try:
        client = client_from_env(environ)
    except GitHubSetupError:
        return None

    def is_open(name: str) -> bool:
        try:
            return client.open_pull(name) is not None or not client.ever_proposed(name)
        except GitHubError as err:
            # Continuing a branch is always safe; starting a second PR beside an open one is not.
            warn(f"{err}; taking {name} to be open")
            return True
    return is_open


def prepare_memory_branch(ws: Workspace, *, branch: str, remote: str, environ: Mapping[str, str],
            say: Callable[[str], None]) -> pullrequest.Prepared:
    """`gitmem github prepare`: continue the memory branch whose PR is open (bringing the base's new commits in),
    or start one from HEAD (`pullrequest.prepare_branch`). Offline, a branch is only taken to be open: it may have
    been squash-merged into the base already, whose copy of its entries a merge would add a second time, so the
    base's commits are brought in only when GitHub said the PR is open."""
    is_open = open_pull_finder(environ, warn=say)
    return pullrequest.prepare_branch(ws.repo, branch=branch, remote=remote, is_open=is_open,
                                      catch_up=base_catch_up(ws, say=say) if is_open is not None else None)


def base_catch_up(ws: Workspace, *, say: Callable[[str], None]) -> Callable[[str, str, str], str]:
    """For `prepare_branch`: the commit that brings the base's new commits into an open PR's memory branch.

    GitHub's merge button runs no merge driver, so a session or another writer's LOG entries and NOW blocks on the
    base conflict with the branch's by lines, and both sides took the same cycle numbers. The branch is landed on
    the base by memory rules (`sidemerge.merged_commit`, as `gitmem merge` on the base would): the base's entries
    keep their numbers, the branch's follow; the merge commit has the branch's tip as a parent, so the branch
    fast-forwards to it, and the PR then adds only appends to the base. A merge that does not pass by memory
    rules leaves the branch as it is, and says so."""
    from gitmem.publish.sidemerge import MergeRefused, merged_commit

    def catch_up(base_head: str, branch: str, tip: str) -> str:
        try:
            merged = merged_commit(ws, base_head, tip, branch)
        except (MergeRefused, gitio.RepoError) as err:
            # One line, the first violations only: a refused merge can break a rule on every entry it brings in.
            named = [f"{v.path}:{v.line}: {v.code} {v.message}" for v in err.violations[:3]]
            more = [f"and {len(err.violations) - 3} more"] if len(err.violations) > 3 else []
            why = "; ".join([str(err), *named, *more])
            say(f"{branch} lacks commits of the base and does not merge with them by memory rules ({why}); "
                f"continuing it as it is: its PR needs `gitmem merge {branch}` on the base, by hand")
            return tip
        if merged.commit is None:
            return tip
        for line in merged.messages:
            say(line)
        say(f"brought the base's new commits into {branch} by memory rules: {merged.commit[:10]}")
        return merged.commit

    return catch_up


def branches(repo: gitio.Repo, branch: str | None, base: str | None, environ: Mapping[str, str]) -> tuple[str, str]:
    """(memory branch, PR base): as given, else the branch `prepare` checked out (else the default one), and the
    base `prepare` recorded for it (else GITHUB_REF_NAME, else main)."""
    here = gitio.current_branch(repo)
    branch = branch or (here if here and pullrequest.recorded_base(repo, here) else pullrequest.DEFAULT_BRANCH)
    base = base or pullrequest.recorded_base(repo, branch) or environ.get("GITHUB_REF_NAME") or "main"
    return branch, base


def open_pull_request(ws: Workspace, *, phase: str, branch: str, base: str, remote: str,
                      environ: Mapping[str, str], say: Callable[[str], None]) -> Proposal:
    """Push `branch` (never forced; a failed cycle's salvage branches too), then open its PR or update the open
    one. `say` hears the push's messages as they come."""
    try:
        pushed = pullrequest.publish_branch(ws, branch=branch, remote=remote)
        for message in pushed.messages:
            say(message)
        if not pushed.ok:
            where = pushed.side_branch or f"local {branch}"
            raise PullRequestFailed(f"the push did not land; the commits are on {where}",
                                    exit_code=pushed.status.exit_code)
        commits = tuple(pullrequest.proposed_commits(ws.repo, remote, base))
    except gitio.RepoError as err:
        raise PullRequestFailed(str(err), exit_code=err.exit_code) from err
    proposal = Proposal(branch, base, remote, pushed.commit or "HEAD", commits)
    if not commits:
        return proposal
    waiting = decisions.waiting(decisions.parse(ws.read("decisions")), ws.clock()())
    title, body = pullrequest.pr_text(ws.read("log"), waiting, list(commits), phase=phase, branch=branch, base=base)
    try:
        opened = client_from_env(environ).open_or_update(head=branch, base=base, title=title, body=body)
    except GitHubError as err:
        notes = [PR_PERMISSION] if err.status == 403 else []
        raise PullRequestFailed(f"{err}; the commits are on {remote}/{branch}", exit_code=err.exit_code,
                                what=f"Pull request not opened: {err}", notes=notes) from err
    return Proposal(branch, base, remote, proposal.head, commits, opened)


def report_check(ws: Workspace, proposal: Proposal, *, name: str, environ: Mapping[str, str]) -> BranchVerdict:
    """Verify the PR's commits (`gitmem verify --range BASE...HEAD`) and post the verdict on its head as the
    commit status `name`."""
    repo, base = ws.repo, proposal.base
    base_tip = gitio.remote_branch_oid(repo, proposal.remote, base) or (base if gitio.branch_exists(repo, base)
                                                                        else None)
    verdict = verify_branch(ws, base_tip, proposal.head)
    try:
        client_from_env(environ).set_status(proposal.head, state=verdict.state, context=name,
                                            description=verdict.description, target_url=run_url(environ))
    except GitHubError as err:
        hint = (f"the workflow needs `permissions: statuses: write`: without the status a required {name!r} "
                "check never passes on a PR opened with GITHUB_TOKEN (or use a GitHub App token, whose PRs run "
                "the check workflow)")
        notes = [hint] if err.status in (403, 404) else []
        raise PullRequestFailed(f"could not report {name!r} on {proposal.head[:10]}: {err}", exit_code=err.exit_code,
                                what=f"Check `{name}` not reported: {err}", notes=notes) from err
    return verdict
