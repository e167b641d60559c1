"""Real Claude Code for the session tests: the npm package pinned in agent-cli/claude-code (the lock the Action
installs too), run with `claude -p` against a loopback fake of the Messages API that streams like the real one.

`claude_binary()` runs `npm ci` once per lock file into a cache outside the work tree ($GITMEM_TEST_CACHE,
default ~/.cache/gitmem-tests) and returns the `claude` executable; where npm is missing or the registry cannot
be reached it raises Unavailable, for a loud skip. Install scripts run: Claude Code's postinstall puts its native
binary in place.

`FakeClaudeAPI` answers POST /v1/messages with server-sent events built from a scripted responder, and keeps
every request body (and its headers), so a test can look for the session-start context or the stop hook's
reason in what Claude Code sent, or for the key it came with. `claude_env()` isolates Claude Code: its own
HOME, no network but the fake, nonessential traffic off.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from tests.support.loopback import QuietHandler, serving
from tests.support.npm_cache import Unavailable, npm_ci, skip_loudly

PACKAGE_DIR = Path(__file__).resolve().parents[2] / "agent-cli" / "claude-code"
BIN = Path(sys.executable).parent          # where this venv's `gitmem` is
Responder = Callable[[dict[str, Any]], dict[str, Any]]   # request body -> {"content": [...], "stop_reason": ...}


def claude_binary() -> Path:
    """The pinned Claude Code, installed with `npm ci` from the committed lock, cached by the lock's hash.
    Install scripts run: Claude Code's postinstall puts its native binary in place."""
    home = npm_ci(PACKAGE_DIR, "claude-code", "agent-cli/claude-code", scripts=True, timeout=900)
    return home / "node_modules" / ".bin" / "claude"


def claude_or_skip() -> Path:
    """`claude_binary()`, or a loud skip where npm cannot install it (CI installs it: the tests run there)."""
    try:
        return claude_binary()
    except Unavailable as why:
        skip_loudly("real Claude Code tests", why)


def claude_env(home: Path, base_url: str, **extra: str) -> dict[str, str]:
    """Claude Code's environment: a private HOME, the fake API, this venv's `gitmem` first on PATH."""
    keep = {k: v for k, v in os.environ.items()
            if k in ("LANG", "LC_ALL", "TMPDIR") or k.startswith(("COVERAGE", "COV_CORE"))}
    env = {**keep, "HOME": str(home), "PATH": f"{BIN}{os.pathsep}/usr/local/bin:/usr/bin:/bin",
           "ANTHROPIC_BASE_URL": base_url, "ANTHROPIC_API_KEY": "sk-ant-test-fake-key",
           "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "DISABLE_AUTOUPDATER": "1", "CI": "1",
           "GIT_CONFIG_NOSYSTEM": "1", "GIT_AUTHOR_NAME": "Ada Human", "GIT_AUTHOR_EMAIL": "ada@example.com",
           "GIT_COMMITTER_NAME": "Ada Human", "GIT_COMMITTER_EMAIL": "ada@example.com"}
    return {**env, **extra}


def trust(home: Path, project: Path) -> None:
    """Mark `project` as trusted in Claude Code's user state, as a human does once in its trust dialog: only then
    does `claude -p` apply a project's permission allow-list."""
    state = home / ".claude.json"
    data = json.loads(state.read_text()) if state.exists() else {}
    data.setdefault("projects", {})[str(project)] = {"hasTrustDialogAccepted": True, "allowedTools": []}
    state.write_text(json.dumps(data))


def text(message: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": message}], "stop_reason": "end_turn"}


def tool_use(name: str, arguments: dict[str, Any], call_id: str = "toolu_01") -> dict[str, Any]:
    return {"content": [{"type": "tool_use", "id": call_id, "name": name, "input": arguments}],
            "stop_reason": "tool_use"}


def request_text(body: dict[str, Any]) -> str:
    return json.dumps(body, ensure_ascii=False)


def tool_results(body: dict[str, Any]) -> list[str]:
    """The text of every tool_result the request carries (what the tools answered)."""
    found = []
    for message in body.get("messages", []):
        content = message.get("content")
        for block in content if isinstance(content, list) else []:
            if isinstance(block, dict) and block.get("type") == "tool_result":
                inner = block.get("content")
                found.append(inner if isinstance(inner, str) else json.dumps(inner))
    return found


def last_result(body: dict[str, Any]) -> tuple[str, str] | None:
    """(tool_use_id, text) of the newest tool_result in the request: what the last tool call answered."""
    for message in reversed(body.get("messages", [])):
        content = message.get("content")
        for block in reversed(content if isinstance(content, list) else []):
            if isinstance(block, dict) and block.get("type") == "tool_result":
                inner = block.get("content")
                return str(block.get("tool_use_id")), inner if isinstance(inner, str) else json.dumps(inner)
    return None


def _events(message: dict[str, Any], model: str) -> bytes:
    """A Messages API stream for `message`, event by event, as the real API sends it."""
    out: list[str] = []

    def event(kind: str, data: dict[str, Any]) -> None:
        out.append(f"event: {kind}\ndata: {json.dumps({'type': kind, **data})}\n\n")

    event("message_start", {"message": {"id": "msg_fake", "type": "message", "role": "assistant", "model": model,
                                        "content": [], "stop_reason": None, "stop_sequence": None,
                                        "usage": {"input_tokens": 1200, "output_tokens": 1,
                                                  "cache_read_input_tokens": 800}}})
    for index, block in enumerate(message["content"]):
        if block["type"] == "text":
            event("content_block_start", {"index": index, "content_block": {"type": "text", "text": ""}})
            event("content_block_delta", {"index": index, "delta": {"type": "text_delta", "text": block["text"]}})
        else:
            event("content_block_start", {"index": index, "content_block": {**block, "input": {}}})
            event("content_block_delta", {"index": index, "delta": {"type": "input_json_delta",
                                                                    "partial_json": json.dumps(block["input"])}})
        event("content_block_stop", {"index": index})
    event("message_delta", {"delta": {"stop_reason": message["stop_reason"], "stop_sequence": None},
                            "usage": {"output_tokens": 60}})
    event("message_stop", {})
    return "".join(out).encode()


class FakeClaudeAPI:
    """The Messages API on 127.0.0.1, streaming the responder's messages; `requests` holds every body."""

    def __init__(self, respond: Responder) -> None:
        self.respond = respond
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []      # of each request in `requests`, names in lower case

    @contextmanager
    def serve(self) -> Iterator[str]:
        fake = self

        class Handler(QuietHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("content-length", 0))) or b"{}")
                if "count_tokens" in self.path:
                    self.send(200, "application/json", json.dumps({"input_tokens": 100}).encode())
                    return
                fake.requests.append(body)
                fake.headers.append({k.lower(): v for k, v in self.headers.items()})
                try:
                    message = fake.respond(body)
                except Exception as err:     # a broken script shows in the test, not as a hung client
                    message = text(f"fake API responder failed: {err!r}")
                if body.get("stream"):
                    self.send(200, "text/event-stream", _events(message, body.get("model", "")))
                else:
                    data = {"id": "msg_fake", "type": "message", "role": "assistant", "model": body.get("model"),
                            "stop_sequence": None, "usage": {"input_tokens": 1200, "output_tokens": 60},
                            **message}
                    self.send(200, "application/json", json.dumps(data).encode())

            def do_GET(self) -> None:
                self.send(404, "application/json", b'{"type": "error", "error": {"type": "not_found_error"}}')

            def do_HEAD(self) -> None:
                self.send(200, "text/plain", b"")

        with serving(Handler) as url:
            yield url


def run_claude(binary: Path, cwd: Path, env: dict[str, str], *args: str, prompt: str = "",
               timeout: float = 180) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(binary), "-p", *args], cwd=cwd, env=env, input=prompt, capture_output=True,
                          text=True, timeout=timeout)
