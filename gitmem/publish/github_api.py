"""The GitHub REST calls of pull-request mode: open a PR for the memory branch, or update the open one."""
from __future__ import annotations

import http.client
import json
import urllib.error
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from gitmem import secrets
from gitmem.config.nesting import loads_json
from gitmem.errors import ExitCode, GitmemError

PUBLIC_API = "https://api.github.com"


class GitHubError(GitmemError):
    """A REST call failed; the message never contains the token. The commits are safe on their branch."""

    exit_code = ExitCode.SALVAGED

    def __init__(self, message: str, *, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status     # the HTTP status, when the API answered


class GitHubSetupError(GitHubError):
    """The environment does not say which repository to call, or holds no token."""

    exit_code = ExitCode.USAGE


@dataclass(frozen=True)
class PullRequest:
    number: int
    url: str
    created: bool


@dataclass(frozen=True)
class GitHubClient:
    api_url: str          # GITHUB_API_URL, e.g. the public API or an Enterprise server
    repository: str       # GITHUB_REPOSITORY, "owner/name"
    token: str

    def _call(self, method: str, path: str, body: dict[str, Any] | None = None) -> Any:
        # What gitmem sends GitHub (a PR's title and body worded from LOG, a status's description) is shown there to
        # everyone who reads the repository: masked as everything gitmem shows (a value history held before its
        # variable was a secret).
        data = json.dumps(secrets.scrub_data(body)).encode() if body is not None else None
        request = urllib.request.Request(
            self.api_url.rstrip("/") + path, data=data, method=method,
            headers={"Authorization": f"Bearer {self.token}", "Accept": "application/vnd.github+json",
                     "X-GitHub-Api-Version": "2022-11-28", "User-Agent": "gitmem",
                     **({"Content-Type": "application/json"} if data else {})})
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                raw = response.read()
        except urllib.error.HTTPError as err:
            detail = secrets.scrub(_error_body(err)[:300], [self.token])
            raise GitHubError(f"GitHub API {method} {path} failed: HTTP {err.code}: {detail}",
                              status=err.code) from None
        # Everything else the wire can do: refused or unresolved (URLError), a hang-up before the answer
        # (RemoteDisconnected), a timeout while waiting for it, an answer cut short (IncompleteRead). urlopen
        # wraps only the first kind; the others would end the caller in a traceback.
        except (OSError, http.client.HTTPException) as err:
            reason = err.reason if isinstance(err, urllib.error.URLError) else (str(err) or type(err).__name__)
            raise GitHubError(f"GitHub API {method} {path} unreachable: {reason}") from None
        try:
            return loads_json(raw or b"null")
        except ValueError:       # an outage or proxy page answered in GitHub's place
            raise GitHubError(f"GitHub API {method} {path} answered with no JSON: "
                              f"{secrets.scrub(raw[:120].decode('utf-8', 'replace'), [self.token])!r}") from None

    @property
    def owner(self) -> str:
        return self.repository.split("/", 1)[0]

    def open_pull(self, head: str) -> dict[str, Any] | None:
        pulls = self._call("GET", f"/repos/{self.repository}/pulls?state=open&head={self.owner}:{head}")
        return pulls[0] if pulls else None

    def ever_proposed(self, head: str) -> bool:
        """Whether `head` has had a PR, open, closed or merged."""
        return bool(self._call("GET", f"/repos/{self.repository}/pulls?state=all&head={self.owner}:{head}"
                                      "&per_page=1"))

    def open_or_update(self, *, head: str, base: str, title: str, body: str) -> PullRequest:
        """One PR per memory branch: update the open one if there is one, else open it."""
        existing = self.open_pull(head)
        if existing is not None:
            updated = self._call("PATCH", f"/repos/{self.repository}/pulls/{existing['number']}",
                                 {"title": title, "body": body})
            return PullRequest(updated["number"], updated.get("html_url", ""), created=False)
        created = self._call("POST", f"/repos/{self.repository}/pulls",
                             {"title": title, "head": head, "base": base, "body": body})
        return PullRequest(created["number"], created.get("html_url", ""), created=True)

    def set_status(self, sha: str, *, state: str, context: str, description: str,
                   target_url: str | None = None) -> dict[str, Any]:
        """A commit status on `sha` (`POST /repos/{owner}/{repo}/statuses/{sha}`): what a required status check
        of the name `context` waits for. Needs the `statuses: write` permission."""
        body: dict[str, Any] = {"state": state, "context": context, "description": description}
        if target_url:
            body["target_url"] = target_url
        created: dict[str, Any] = self._call("POST", f"/repos/{self.repository}/statuses/{sha}", body)
        return created


    # -- Actions: what `gitmem fleet dispatch` calls, with a token that has `actions: write` on the agent --------
    def workflow_state(self, workflow: str) -> str:
        """`active`, `disabled_inactivity` (GitHub's 60-day cut), `disabled_manually`, ... of a workflow file."""
        found = self._call("GET", f"/repos/{self.repository}/actions/workflows/{workflow}")
        return str(found.get("state", "")) if isinstance(found, dict) else ""

    def enable_workflow(self, workflow: str) -> None:
        self._call("PUT", f"/repos/{self.repository}/actions/workflows/{workflow}/enable")

    def unfinished_runs(self, workflow: str) -> list[int]:
        """The ids of the workflow's latest runs that have not completed (queued, waiting or in progress), newest
        first; a run without a whole-number id is 0."""
        found = self._call("GET", f"/repos/{self.repository}/actions/workflows/{workflow}/runs?per_page=20")
        runs = found.get("workflow_runs", []) if isinstance(found, dict) else []
        return [run["id"] if isinstance(run.get("id"), int) and not isinstance(run["id"], bool) else 0
                for run in runs if isinstance(run, dict) and run.get("status") != "completed"]

    def unfinished_jobs(self, run: int) -> list[str]:
        """The names of a run's jobs that have not completed (a job its `if:` skipped has completed); none when
        GitHub lists no job yet. A name is the job's `name:`, else its id in the workflow."""
        found = self._call("GET", f"/repos/{self.repository}/actions/runs/{run}/jobs?filter=latest&per_page=100")
        jobs = found.get("jobs", []) if isinstance(found, dict) else []
        return [str(job.get("name", "")) for job in jobs if isinstance(job, dict) and job.get("status") != "completed"]

    def default_branch(self) -> str:
        """The repository's default branch (`GET /repos/{owner}/{repo}`), where its scheduled workflows run."""
        found = self._call("GET", f"/repos/{self.repository}")
        return str(found.get("default_branch") or "") if isinstance(found, dict) else ""

    def dispatch_workflow(self, workflow: str, *, ref: str, inputs: dict[str, str]) -> None:
        self._call("POST", f"/repos/{self.repository}/actions/workflows/{workflow}/dispatches",
                   {"ref": ref, "inputs": inputs})


def _error_body(err: urllib.error.HTTPError) -> str:
    """What GitHub said with an error status, as far as it arrived (a body cut short says nothing more)."""
    try:
        return err.read().decode("utf-8", "replace")
    except (OSError, http.client.HTTPException):
        return ""


def client_from_env(environ: Mapping[str, str]) -> GitHubClient:
    """The client the Actions environment describes: GITHUB_API_URL, GITHUB_REPOSITORY and the token
    (GITMEM_GIT_TOKEN, else GITHUB_TOKEN)."""
    token = environ.get("GITMEM_GIT_TOKEN") or environ.get("GITHUB_TOKEN") or ""
    repository = environ.get("GITHUB_REPOSITORY") or ""
    if not token:
        raise GitHubSetupError("no token to call the GitHub API: set GITMEM_GIT_TOKEN or GITHUB_TOKEN "
                          "(the action passes its github-token input)")
    if repository.count("/") != 1 or not all(repository.split("/")):
        raise GitHubSetupError(f"GITHUB_REPOSITORY must be owner/name, not {repository!r}")
    return GitHubClient(environ.get("GITHUB_API_URL") or PUBLIC_API, repository, token)
