"""The memory pull request's own "Verify memory history": the branch verified here, the verdict posted as a
commit status on the PR head under the name a required check expects.

A pull request opened or updated with the workflow's GITHUB_TOKEN triggers no workflow (GitHub's rule against
runs that start runs), so the check workflow's "Verify memory history" job never runs on the memory PR, and a
branch protection rule that requires it keeps the PR waiting forever. The PR step therefore verifies the
branch as that job does (`gitmem verify --range BASE...HEAD`, every workspace) and reports the result as a
commit status of the job's name, which satisfies a required check of that name. The other way round: a GitHub
App's token (actions/create-github-app-token) in `github-token`, whose PRs do trigger workflows.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from gitmem import gitio
from gitmem.checks.every_workspace import verify_every
from gitmem.workspace import Workspace

# The job name of template-repo/.github/workflows/gitmem-check.yml: what a branch protection rule requires.
REQUIRED_CHECK = "Verify memory history"
DESCRIPTION_MAX = 140       # GitHub refuses a longer status description (HTTP 422)


@dataclass(frozen=True)
class BranchVerdict:
    state: str              # a commit status state: success or failure
    description: str        # one line for the PR's checks list
    commits: int
    findings: tuple[str, ...] = ()      # `path:line: GMnnn message`, errors first

    @property
    def ok(self) -> bool:
        return self.state == "success"


def verify_branch(ws: Workspace, base: str | None, head: str = "HEAD") -> BranchVerdict:
    """Every commit from the merge base of `base` and `head` to `head`, in every workspace, as the check
    workflow verifies a pull request; every commit of `head` when there is no base to start from."""
    start = gitio.merge_base(ws.repo, base, head) if base else None
    result = verify_every(ws, start, head)
    errors = sorted(v for v in result.violations if v.is_error)
    findings = tuple(f"{v.path}:{v.line}: {v.code} {v.message}" for v in errors)
    if result.rewritten:
        why = f"history rewritten: {head} does not descend from {base}"
        return BranchVerdict("failure", clip(why), result.commits, findings)
    if errors:
        why = f"{len(errors)} violation(s) in {result.commits} commit(s): {findings[0]}"
        return BranchVerdict("failure", clip(why), result.commits, findings)
    return BranchVerdict("success", f"{result.commits} commit(s) verified, memory history is clean",
                         result.commits)


def clip(text: str) -> str:
    return text if len(text) <= DESCRIPTION_MAX else text[:DESCRIPTION_MAX - 1] + "…"


def run_url(environ: Mapping[str, str]) -> str | None:
    """The Actions run that verified, for the status's link; None outside Actions."""
    server, repository, run = (environ.get(key) for key in ("GITHUB_SERVER_URL", "GITHUB_REPOSITORY",
                                                            "GITHUB_RUN_ID"))
    if not (server and repository and run):
        return None
    return f"{server.rstrip('/')}/{repository}/actions/runs/{run}"
