"""A local fake of the Messages API on loopback: the real SDK talks to it through ANTHROPIC_BASE_URL."""
from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from tests.support.loopback import QuietHandler, serving

Responder = Callable[[dict[str, Any], dict[str, str]], tuple[int, dict[str, Any]]]


@contextmanager
def messages_api(respond: Responder) -> Iterator[str]:
    """Serve `respond(body, headers) -> (status, json)` on 127.0.0.1; yields the base URL."""

    class Handler(QuietHandler):
        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["content-length"])))
            code, data = respond(body, {k.lower(): v for k, v in self.headers.items()})
            self.send(code, "application/json", json.dumps(data).encode())

    with serving(Handler) as url:
        yield url


def count_tokens(calls: list[int], broken: bool) -> Callable[[dict[str, Any], dict[str, str]], tuple[int, Any]]:
    """A fake POST /v1/messages/count_tokens for `messages_api`: one token per word, or a 400 when `broken`;
    each call is counted in `calls`."""
    def respond(body: dict[str, Any], headers: dict[str, str]) -> tuple[int, Any]:
        calls.append(1)
        if broken:
            return 400, {"type": "error", "error": {"type": "invalid_request_error", "message": "no"}}
        return 200, {"input_tokens": len(body["messages"][0]["content"].split())}
    return respond
