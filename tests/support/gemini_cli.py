"""Real Gemini CLI for the session test: the npm package pinned in agent-cli/gemini-cli, run with `gemini -p`
against a loopback fake of the Gemini API.

Gemini CLI sends its requests to GOOGLE_GEMINI_BASE_URL when it is set (packages/core/src/core/contentGenerator.ts
in its source: the variable selects the gateway auth type and becomes the SDK's base URL, any URL `new URL()`
accepts, http on 127.0.0.1 included), with the key in GEMINI_API_KEY. `FakeGeminiAPI` answers
`POST …/models/MODEL:streamGenerateContent?alt=sse` with server-sent events of GenerateContentResponse JSON, one
`data:` line an event, `:generateContent` (the CLI's side calls: routing, next-speaker checks) with JSON, and
`:countTokens`; it keeps every request body and path.
"""
from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from tests.support.loopback import QuietHandler, serving
from tests.support.npm_cache import Unavailable, npm_ci, skip_loudly

PACKAGE_DIR = Path(__file__).resolve().parents[2] / "agent-cli" / "gemini-cli"
Responder = Callable[[dict[str, Any]], list[dict[str, Any]]]     # request body -> the model's parts
# One JSON answer for every side call: the model router's classifier (a complexity score) and the next-speaker check.
SIDE_ANSWER = {"complexity_reasoning": "a short question", "complexity_score": 1, "reasoning": "the turn is over",
               "next_speaker": "user"}
USAGE = {"promptTokenCount": 1500, "candidatesTokenCount": 40, "totalTokenCount": 1540}


def gemini_or_skip() -> Path:
    """The pinned Gemini CLI (`npm ci` of the committed lock, cached by its hash), or a loud skip."""
    try:
        home = npm_ci(PACKAGE_DIR, "gemini-cli", "agent-cli/gemini-cli", scripts=False, timeout=900)
    except Unavailable as why:
        skip_loudly("real Gemini CLI tests", why)
    return home / "node_modules" / ".bin" / "gemini"


def gemini_home(home: Path) -> Path:
    """Gemini CLI's user settings: the API-key auth chosen, as `gemini` asks a human to once. Without it the key
    and base URL select the gateway auth type, which `gemini -p` refuses ("Invalid auth method selected":
    packages/cli/src/config/auth.ts, validateAuthMethod)."""
    (home / ".gemini").mkdir(parents=True, exist_ok=True)
    (home / ".gemini" / "settings.json").write_text(json.dumps({"security": {"auth": {"selectedType":
                                                                                       "gemini-api-key"}}}))
    return home


def gemini_env(home: Path, base_url: str, path: str) -> dict[str, str]:
    keep = {k: v for k, v in os.environ.items() if k in ("LANG", "LC_ALL", "TMPDIR")}
    return {**keep, "HOME": str(home), "PATH": path, "GOOGLE_GEMINI_BASE_URL": base_url,
            "GEMINI_API_KEY": "gemini-test-fake-key", "GEMINI_CLI_TRUST_WORKSPACE": "true",
            "GEMINI_TELEMETRY_ENABLED": "false", "NO_BROWSER": "true", "CI": "true",
            "GIT_CONFIG_NOSYSTEM": "1"}


def declared(body: dict[str, Any]) -> list[str]:
    """The function names the request offers the model."""
    return [d.get("name", "") for tool in body.get("tools") or [] for d in tool.get("functionDeclarations") or []]


def responses(body: dict[str, Any]) -> list[dict[str, Any]]:
    """Every functionResponse the request carries, oldest first."""
    return [part["functionResponse"] for content in body.get("contents") or [] for part in content.get("parts") or []
            if isinstance(part, dict) and "functionResponse" in part]


def _response(parts: list[dict[str, Any]]) -> dict[str, Any]:
    return {"candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}],
            "usageMetadata": USAGE, "modelVersion": "gemini-fake"}


class FakeGeminiAPI:
    """The Gemini API on 127.0.0.1; `requests` holds (path, body) of every model call."""

    def __init__(self, respond: Responder) -> None:
        self.respond = respond
        self.requests: list[tuple[str, dict[str, Any]]] = []
        self.headers: list[dict[str, str]] = []      # of each request in `requests`, names in lower case

    @contextmanager
    def serve(self) -> Iterator[str]:
        fake = self

        class Handler(QuietHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("content-length", 0))) or b"{}")
                if ":countTokens" in self.path:
                    self.send(200, "application/json", json.dumps({"totalTokens": 100}).encode())
                    return
                fake.requests.append((self.path, body))
                fake.headers.append({k.lower(): v for k, v in self.headers.items()})
                if ":streamGenerateContent" not in self.path:     # a side call: answer plainly
                    side = _response([{"text": json.dumps(SIDE_ANSWER)}])
                    self.send(200, "application/json", json.dumps(side).encode())
                    return
                try:
                    parts = fake.respond(body)
                except Exception as err:         # a broken script shows in the test, not as a hung client
                    parts = [{"text": f"fake API responder failed: {err!r}"}]
                self.send(200, "text/event-stream", f"data: {json.dumps(_response(parts))}\r\n\r\n".encode())

            def do_GET(self) -> None:
                self.send(404, "application/json", b'{"error": {"code": 404, "status": "NOT_FOUND"}}')

        with serving(Handler) as url:
            yield url
