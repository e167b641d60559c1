"""A local fake of the Messages API on loopback: the real SDK talks to it through ANTHROPIC_BASE_URL."""
from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler
from typing import Any

from tests.support.loopback import serving

Responder = Callable[[dict[str, Any], dict[str, str]], tuple[int, dict[str, Any]]]


@contextmanager
def messages_api(respond: Responder) -> Iterator[str]:
    """Serve `respond(body, headers) -> (status, json)` on 127.0.0.1; yields the base URL."""

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 (http.server's name)
            body = json.loads(self.rfile.read(int(self.headers["content-length"])))
            code, data = respond(body, {k.lower(): v for k, v in self.headers.items()})
            raw = json.dumps(data).encode()
            self.send_response(code)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(raw)))
            self.end_headers()
            self.wfile.write(raw)

        def log_message(self, *args: object) -> None:
            pass

    with serving(Handler) as url:
        yield url
