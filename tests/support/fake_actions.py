"""A loopback fake of GitHub's Actions REST API for many repositories: a workflow's state
(`GET /repos/{owner}/{repo}/actions/workflows/{workflow_id}`), enabling it (`PUT .../enable`, 204), its runs
(`GET .../runs`) and each run's jobs (`GET /repos/{owner}/{repo}/actions/runs/{run_id}/jobs`), and
`workflow_dispatch` (`POST .../dispatches`, 204; 422 for an input the workflow does not declare), as GitHub's
REST reference defines them; and a repository's default branch (`GET /repos/{owner}/{repo}`).
A dispatch queues a run, as GitHub does.

A run is the template workflow's (template-repo/.github/workflows/gitmem.yml): one of its jobs runs, named as
the template names it, and the others are skipped by their `if:`, as GitHub lists them."""
from __future__ import annotations

import json
import re
import threading
from contextlib import ExitStack
from dataclasses import dataclass, field
from urllib.parse import urlparse

from tests.support.loopback import QuietHandler, serving

PATH = re.compile(r"^/repos/(?P<repo>[^/]+/[^/]+)/actions/workflows/(?P<workflow>[^/]+)(?P<rest>/[a-z]+)?$")
REPOSITORY = re.compile(r"^/repos/(?P<repo>[^/]+/[^/]+)$")
JOBS = re.compile(r"^/repos/(?P<repo>[^/]+/[^/]+)/actions/runs/(?P<run>[0-9]+)/jobs$")
# The template's jobs by the command each runs, as the jobs API names them (a job's `name:`).
TEMPLATE_JOBS = {"cycle": "Memory cycle", "close": "Daily close", "check": "Check memory"}


def _jobs(run: str) -> list[dict]:
    """The jobs of a run written `STATUS [COMMAND]` (`in_progress close`; the command defaults to cycle), or
    `STATUS unlisted`: a run GitHub has not created the jobs of yet (`STATUS anonymous`: see the runs' list)."""
    status, _, command = run.partition(" ")
    if command == "unlisted":
        return []
    command = command or "cycle"
    return [{"id": n, "name": name, "status": status if key == command else "completed",
             "conclusion": None if key == command and status != "completed" else
             ("success" if key == command else "skipped")}
            for n, (key, name) in enumerate(TEMPLATE_JOBS.items())]


@dataclass
class Workflow:
    state: str = "active"                      # active, disabled_inactivity, disabled_manually
    # Its runs, newest last: each `STATUS` (a cycle's run) or `STATUS COMMAND` (`in_progress close`), see _jobs.
    runs: list[str] = field(default_factory=list)
    inputs: tuple[str, ...] = ("command",)
    dispatched: list[dict] = field(default_factory=list)
    enabled: int = 0
    # GitHub answers a dispatch (204) before it creates the run: False keeps the run out of `runs` for the
    # rest of the test, the moment in which a second look finds no run.
    run_shows_at_once: bool = True


class FakeActions:
    def __init__(self, token: str = "dispatch-token") -> None:
        self.token = token
        self.workflows: dict[tuple[str, str], Workflow] = {}
        self.requests: list[tuple[str, str]] = []
        self.default_branches: dict[str, str] = {}    # `GET /repos/{owner}/{repo}`'s default branch; else main
        self._lock = threading.Lock()
        fake = self

        class Handler(QuietHandler):
            def _reply(self, code: int, body: object = None) -> None:
                self.send(code, "application/json", b"" if body is None else json.dumps(body).encode())

            def _handle(self, method: str) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length)) if length else None
                with fake._lock:
                    fake.requests.append((method, self.path))
                if self.headers.get("Authorization") != f"Bearer {fake.token}":
                    return self._reply(401, {"message": "Bad credentials"})
                repository = REPOSITORY.match(urlparse(self.path).path)
                if method == "GET" and repository and any(repo == repository["repo"] for repo, _ in fake.workflows):
                    return self._reply(200, {"full_name": repository["repo"],
                                             "default_branch": fake.default_branches.get(repository["repo"], "main")})
                jobs = JOBS.match(urlparse(self.path).path)
                if method == "GET" and jobs:
                    # The repository's first workflow: a test gives each repository one.
                    runs = next((flow.runs for (repo, _), flow in fake.workflows.items() if repo == jobs["repo"]), [])
                    if not 1 <= int(jobs["run"]) <= len(runs):
                        return self._reply(404, {"message": "Not Found"})
                    listed = _jobs(runs[int(jobs["run"]) - 1])
                    return self._reply(200, {"total_count": len(listed), "jobs": listed})
                found = PATH.match(urlparse(self.path).path)
                flow = fake.workflows.get((found["repo"], found["workflow"])) if found else None
                if found is None or flow is None:
                    return self._reply(404, {"message": "Not Found"})
                rest = found["rest"] or ""
                if method == "GET" and rest == "":
                    return self._reply(200, {"id": 7, "path": f".github/workflows/{found['workflow']}",
                                             "state": flow.state})
                if method == "PUT" and rest == "/enable":
                    flow.state, flow.enabled = "active", flow.enabled + 1
                    return self._reply(204)
                if method == "GET" and rest == "/runs":
                    # A run's id is its place among its workflow's runs (from 1), as the jobs path names it.
                    # `STATUS anonymous`: a run listed without its id, whose jobs cannot be asked for.
                    runs = [{**({} if run.endswith(" anonymous") else {"id": n}), "status": run.partition(" ")[0]}
                            for n, run in enumerate(flow.runs, 1)]
                    runs.reverse()
                    return self._reply(200, {"total_count": len(runs), "workflow_runs": runs[:20]})
                if method == "POST" and rest == "/dispatches":
                    if flow.state != "active":
                        return self._reply(422, {"message": "Workflow is disabled"})
                    if not isinstance(body, dict) or "ref" not in body or \
                            any(key not in flow.inputs for key in (body.get("inputs") or {})):
                        return self._reply(422, {"message": "Unexpected inputs provided"})
                    flow.dispatched.append(body)
                    if flow.run_shows_at_once:
                        flow.runs.append("queued")
                    return self._reply(204)
                return self._reply(404, {"message": "Not Found"})

            def do_GET(self) -> None:
                self._handle("GET")

            def do_POST(self) -> None:
                self._handle("POST")

            def do_PUT(self) -> None:
                self._handle("PUT")

        self._handler = Handler
        self._stack = ExitStack()
        self.url = ""

    def add(self, repository: str, workflow: str = "gitmem.yml", **kind: object) -> Workflow:
        flow = Workflow(**kind)  # type: ignore[arg-type]
        self.workflows[(repository, workflow)] = flow
        return flow

    def __enter__(self) -> FakeActions:
        self.url = self._stack.enter_context(serving(self._handler))
        return self

    def __exit__(self, *exc: object) -> None:
        self._stack.close()
