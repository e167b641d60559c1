"""A tiny fake of the GitHub REST API on loopback, for pull-request mode tests: the pulls endpoints and commit
statuses (`POST /repos/{owner}/{repo}/statuses/{sha}`, its body and answer as GitHub's REST API defines them)."""
from __future__ import annotations

import json
from contextlib import ExitStack
from urllib.parse import parse_qs, urlparse

from tests.support.loopback import QuietHandler, serving


class FakeGitHub:
    def __init__(self, repository: str = "owner/agent", token: str = "test-token") -> None:
        self.repository = repository
        self.token = token
        self.pulls: list[dict] = []
        self.statuses: dict[str, list[dict]] = {}       # sha -> the statuses posted on it, oldest first
        self.forbid_statuses = False                    # a token without `statuses: write`
        self.forbid_new_pulls = False                   # Actions not allowed to create pull requests
        self.requests: list[tuple[str, str, dict | None]] = []
        fake = self

        class Handler(QuietHandler):
            def _reply(self, code: int, body: object) -> None:
                self.send(code, "application/json", json.dumps(body).encode())

            def _handle(self, method: str) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length)) if length else None
                fake.requests.append((method, self.path, body))
                if self.headers.get("Authorization") != f"Bearer {fake.token}":
                    return self._reply(401, {"message": "Bad credentials"})
                url = urlparse(self.path)
                base = f"/repos/{fake.repository}/pulls"
                if method == "GET" and url.path == base:
                    query = parse_qs(url.query)
                    head = query.get("head", [""])[0].split(":", 1)[-1]
                    state = query.get("state", ["open"])[0]
                    found = [p for p in fake.pulls if state in ("all", p["state"]) and p["head"] == head]
                    return self._reply(200, found)
                if method == "POST" and url.path == base and fake.forbid_new_pulls:
                    return self._reply(403, {"message": "GitHub Actions is not permitted to create or approve "
                                                        "pull requests."})
                if method == "POST" and url.path == base:
                    number = len(fake.pulls) + 1
                    pull = {"number": number, "state": "open", "head": body["head"], "base": body["base"],
                            "title": body["title"], "body": body["body"],
                            "html_url": f"http://github.test/{fake.repository}/pull/{number}"}
                    fake.pulls.append(pull)
                    return self._reply(201, pull)
                if method == "POST" and url.path.startswith(f"/repos/{fake.repository}/statuses/"):
                    return self._status(url.path.rsplit("/", 1)[1], body or {})
                if method == "PATCH" and url.path.startswith(base + "/"):
                    number = int(url.path.rsplit("/", 1)[1])
                    pull = fake.pulls[number - 1]
                    pull.update({k: v for k, v in body.items() if k in ("title", "body")})
                    return self._reply(200, pull)
                return self._reply(404, {"message": "Not Found"})

            def _status(self, sha: str, body: dict) -> None:
                if fake.forbid_statuses:
                    return self._reply(403, {"message": "Resource not accessible by integration",
                                             "documentation_url": "https://docs.github.com/rest/commits/statuses"})
                if len(sha) != 40 or body.get("state") not in ("error", "failure", "pending", "success") \
                        or len(body.get("description") or "") > 140:
                    return self._reply(422, {"message": "Validation Failed"})
                posted = fake.statuses.setdefault(sha, [])
                status = {"id": sum(map(len, fake.statuses.values())) + 1, "state": body["state"],
                          "description": body.get("description"), "target_url": body.get("target_url"),
                          "context": body.get("context") or "default",
                          "url": f"{fake.url}/repos/{fake.repository}/statuses/{sha}",
                          "created_at": "2026-12-01T00:00:00Z", "updated_at": "2026-12-01T00:00:00Z"}
                posted.append(status)
                return self._reply(201, status)

            def do_GET(self) -> None:
                self._handle("GET")

            def do_POST(self) -> None:
                self._handle("POST")

            def do_PATCH(self) -> None:
                self._handle("PATCH")

        self._handler = Handler
        self._stack = ExitStack()
        self.url = ""

    def __enter__(self) -> FakeGitHub:
        self.url = self._stack.enter_context(serving(self._handler))
        return self

    def __exit__(self, *exc) -> None:
        self._stack.close()
