"""A loopback fake of OpenAI's Responses API for the real Codex CLI (`OPENAI_BASE_URL` points Codex at it).

Codex streams every turn (`POST /v1/responses`, `stream: true`) and its parser (codex-rs/codex-api/src/sse/
responses.rs) needs only these events: `response.created`, one `response.output_item.done` per output item (an
assistant `message`, or a `function_call` whose `arguments` is a JSON string), and `response.completed`, whose
`response.usage` it turns into the token counts `codex exec --json` prints. As the real API, `input_tokens`
there already include `input_tokens_details.cached_tokens`.

`FakeResponsesAPI(respond)` answers each request with `respond(body)`'s items and keeps every body; it counts
the tokens it reported (`reported`), so a test can hold gitmem's figures against the fake's own. Anything else
Codex asks (`/models`, a WebSocket upgrade) gets a 404, and Codex falls back to plain HTTP streaming.
"""
from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from tests.support.loopback import QuietHandler, serving

Item = dict[str, Any]
Responder = Callable[[dict[str, Any]], list[Item]]   # request body -> the output items of this turn
INPUT, CACHED, OUTPUT = 1240, 1000, 75               # per turn: the fake's token counts (input includes cached)


def message(text: str) -> Item:
    return {"type": "message", "role": "assistant", "id": "msg_fake",
            "content": [{"type": "output_text", "text": text, "annotations": []}]}


def function_call(name: str, arguments: dict[str, Any], call_id: str) -> Item:
    """A call of the tool `name`; an MCP tool is `mcp__SERVER__TOOL`, which Codex offers as the function TOOL
    in the namespace `mcp__SERVER`."""
    namespace, dunder, tool = name.rpartition("__")
    named = {"namespace": namespace, "name": tool} if dunder and namespace.startswith("mcp__") else {"name": name}
    return {"type": "function_call", "id": f"fc_{call_id}", "call_id": call_id, **named,
            "arguments": json.dumps(arguments)}


def outputs(body: dict[str, Any]) -> dict[str, str]:
    """call_id -> what the tool answered, for every function call output the request carries."""
    found = {}
    for item in body.get("input") or []:
        if isinstance(item, dict) and item.get("type") in ("function_call_output", "custom_tool_call_output"):
            answer = item.get("output")
            found[str(item.get("call_id"))] = answer if isinstance(answer, str) else json.dumps(answer)
    return found


def tool_names(body: dict[str, Any]) -> list[str]:
    """The names of the tools Codex offered the model in this request."""
    names = []
    for tool in body.get("tools") or []:
        if isinstance(tool, dict):
            names.append(str(tool.get("name") or tool.get("type")))
            names.extend(str(inner.get("name")) for inner in tool.get("tools") or [] if isinstance(inner, dict))
    return names


def request_text(body: dict[str, Any]) -> str:
    return json.dumps(body, ensure_ascii=False)


def _stream(items: list[Item], model: str) -> bytes:
    out: list[str] = []

    def event(kind: str, data: dict[str, Any]) -> None:
        out.append(f"event: {kind}\ndata: {json.dumps({'type': kind, **data})}\n\n")

    event("response.created", {"response": {"id": "resp_fake", "model": model}})
    for index, item in enumerate(items):
        event("response.output_item.added", {"output_index": index, "item": item})
        event("response.output_item.done", {"output_index": index, "item": item})
    event("response.completed", {"response": {"id": "resp_fake", "model": model, "status": "completed",
                                               "output": items, "usage": {
        "input_tokens": INPUT, "input_tokens_details": {"cached_tokens": CACHED},
        "output_tokens": OUTPUT, "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": INPUT + OUTPUT}}})
    return "".join(out).encode()


@dataclass
class Reported:
    """What the fake told Codex it used, summed over the turns it answered."""
    turns: int = 0
    input_tokens: int = 0          # cached included, as the API counts
    cached_tokens: int = 0
    output_tokens: int = 0

    @property
    def total(self) -> int:
        return self.input_tokens + self.output_tokens


@dataclass
class FakeResponsesAPI:
    respond: Responder
    requests: list[dict[str, Any]] = field(default_factory=list)
    headers: list[dict[str, str]] = field(default_factory=list)
    reported: Reported = field(default_factory=Reported)

    @contextmanager
    def serve(self) -> Iterator[str]:
        """Serve on 127.0.0.1; yields the base URL to put in OPENAI_BASE_URL (it ends in /v1)."""
        fake = self

        class Handler(QuietHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("content-length", 0)))
                if not self.path.rstrip("/").endswith("/responses"):
                    self.send(404, "application/json", b'{"error": {"message": "not found"}}')
                    return
                body = json.loads(raw or b"{}")
                fake.requests.append(body)
                fake.headers.append({k.lower(): v for k, v in self.headers.items()})
                try:
                    items = fake.respond(body)
                except Exception as err:     # a broken script shows in the test, not as a hung client
                    items = [message(f"fake API responder failed: {err!r}")]
                fake.reported.turns += 1
                fake.reported.input_tokens += INPUT
                fake.reported.cached_tokens += CACHED
                fake.reported.output_tokens += OUTPUT
                self.send(200, "text/event-stream", _stream(items, str(body.get("model", ""))))

            def do_GET(self) -> None:
                self.send(404, "application/json", b'{"error": {"message": "not found"}}')

        with serving(Handler) as url:
            yield f"{url}/v1"
