"""A tiny fake of the GitHub pulls REST API on loopback, for pull-request mode tests."""
from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlparse


class FakeGitHub:
    def __init__(self, repository: str = "owner/agent", token: str = "test-token") -> None:
        self.repository = repository
        self.token = token
        self.pulls: list[dict] = []
        self.requests: list[tuple[str, str, dict | None]] = []
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:  # keep test output clean
                pass

            def _reply(self, code: int, body: object) -> None:
                data = json.dumps(body).encode()
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

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

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def __enter__(self) -> FakeGitHub:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()
