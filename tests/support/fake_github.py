"""A tiny fake of the GitHub pulls REST API on loopback, for pull-request mode tests."""
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
                    found = [p for p in fake.pulls if p["state"] == "open" and p["head"] == head]
                    return self._reply(200, found)
                if method == "POST" and url.path == base:
                    number = len(fake.pulls) + 1
                    pull = {"number": number, "state": "open", "head": body["head"], "base": body["base"],
                            "title": body["title"], "body": body["body"],
                            "html_url": f"http://github.test/{fake.repository}/pull/{number}"}
                    fake.pulls.append(pull)
                    return self._reply(201, pull)
                if method == "PATCH" and url.path.startswith(base + "/"):
                    number = int(url.path.rsplit("/", 1)[1])
                    pull = fake.pulls[number - 1]
                    pull.update({k: v for k, v in body.items() if k in ("title", "body")})
                    return self._reply(200, pull)
                return self._reply(404, {"message": "Not Found"})

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
