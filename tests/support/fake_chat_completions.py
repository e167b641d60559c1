"""A loopback fake of OpenAI's Chat Completions API, for the agent CLIs that speak it: Qwen Code (its OpenAI auth
type, OPENAI_BASE_URL) and OpenCode (a provider on `@ai-sdk/openai-compatible` with `options.baseURL`).

Both stream (`POST …/chat/completions`, `stream: true`) and read the chunks as OpenAI's SDKs do: `data:` lines of
`chat.completion.chunk` JSON, the assistant's `delta.content` or `delta.tool_calls` (each with `index`, `id`,
`function.name` and `function.arguments`, a JSON string), then a chunk with `finish_reason` and `usage`, then
`data: [DONE]`. A request without `stream` (a CLI's side call: a title, a next-speaker check) gets one
`chat.completion` object. `GET …/models` lists one model.

`FakeChatAPI(respond)` answers each streamed request with `respond(body)`: a text, or tool calls (name,
arguments); it keeps every body and its headers.
"""
from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from tests.support.loopback import QuietHandler, serving

Call = tuple[str, dict[str, Any]]                       # a tool call: name, arguments
Answer = str | list[Call]                               # the model's turn: a text, or tool calls
Responder = Callable[[dict[str, Any]], Answer]
USAGE = {"prompt_tokens": 1200, "completion_tokens": 40, "total_tokens": 1240}


def tool_names(body: dict[str, Any]) -> list[str]:
    """The function names the request offers the model."""
    return [str((tool.get("function") or {}).get("name")) for tool in body.get("tools") or []
            if isinstance(tool, dict)]


def tool_results(body: dict[str, Any]) -> list[str]:
    """What each tool answered, oldest first (`role: tool` messages; content a text or a list of text parts)."""
    found = []
    for message in body.get("messages") or []:
        if isinstance(message, dict) and message.get("role") == "tool":
            content = message.get("content")
            if isinstance(content, list):
                content = "".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
            found.append(str(content))
    return found


def named(body: dict[str, Any], suffix: str) -> str:
    """The offered tool whose name ends in `suffix` (each CLI prefixes an MCP tool its own way), or `suffix`."""
    return next((name for name in tool_names(body) if name.endswith(suffix)), suffix)


def script(*calls: Call, finish: str = "done") -> Responder:
    """A model that makes `calls` in order, one per turn, then says `finish`. A call's name is matched against
    the end of the offered tool names (`log_entry` is `mcp__gitmem__log_entry` in one CLI, `gitmem_log_entry`
    in another). A request that offers no tools (OpenCode's title of the session) gets `finish`."""
    def respond(body: dict[str, Any]) -> Answer:
        made = len(tool_results(body))
        if made < len(calls) and tool_names(body):
            name, arguments = calls[made]
            return [(named(body, name), arguments)]
        return finish
    return respond


def _chunk(model: str, delta: dict[str, Any], finish: str | None = None, **extra: Any) -> str:
    data = {"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": int(time.time()), "model": model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}], **extra}
    return f"data: {json.dumps(data)}\n\n"


def _calls(answer: list[Call], turn: int) -> list[dict[str, Any]]:
    return [{"index": i, "id": f"call_{turn}_{i}", "type": "function",
             "function": {"name": name, "arguments": json.dumps(arguments)}} for i, (name, arguments) in
            enumerate(answer)]


def _stream(answer: Answer, model: str, turn: int) -> bytes:
    out = [_chunk(model, {"role": "assistant", "content": ""})]
    if isinstance(answer, str):
        out.append(_chunk(model, {"content": answer}))
        finish = "stop"
    else:
        out.append(_chunk(model, {"tool_calls": _calls(answer, turn)}))
        finish = "tool_calls"
    out.append(_chunk(model, {}, finish, usage=USAGE))
    out.append("data: [DONE]\n\n")
    return "".join(out).encode()


def _whole(answer: Answer, model: str, turn: int) -> bytes:
    message: dict[str, Any] = {"role": "assistant", "content": answer if isinstance(answer, str) else None}
    if not isinstance(answer, str):
        message["tool_calls"] = _calls(answer, turn)
    return json.dumps({"id": "chatcmpl-fake", "object": "chat.completion", "created": int(time.time()),
                       "model": model, "choices": [{"index": 0, "message": message,
                                                    "finish_reason": "stop" if isinstance(answer, str)
                                                    else "tool_calls"}],
                       "usage": USAGE}).encode()


@dataclass
class FakeChatAPI:
    respond: Responder
    side_answer: str = "done"                 # the answer to a request that does not stream
    requests: list[dict[str, Any]] = field(default_factory=list)      # the streamed ones
    side_requests: list[dict[str, Any]] = field(default_factory=list)
    headers: list[dict[str, str]] = field(default_factory=list)       # of every request, names in lower case

    @contextmanager
    def serve(self) -> Iterator[str]:
        """Serve on 127.0.0.1; yields the base URL (it ends in /v1)."""
        fake = self

        class Handler(QuietHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("content-length", 0)))
                fake.headers.append({k.lower(): v for k, v in self.headers.items()})
                if not self.path.rstrip("/").endswith("/chat/completions"):
                    self.send(404, "application/json", b'{"error": {"message": "not found"}}')
                    return
                body = json.loads(raw or b"{}")
                model = str(body.get("model", ""))
                if not body.get("stream"):
                    fake.side_requests.append(body)
                    self.send(200, "application/json", _whole(fake.side_answer, model, 0))
                    return
                fake.requests.append(body)
                try:
                    answer = fake.respond(body)
                except Exception as err:     # a broken script shows in the test, not as a hung client
                    answer = f"fake API responder failed: {err!r}"
                self.send(200, "text/event-stream", _stream(answer, model, len(fake.requests)))

            def do_GET(self) -> None:
                fake.headers.append({k.lower(): v for k, v in self.headers.items()})
                if self.path.rstrip("/").endswith("/models"):
                    models = {"object": "list", "data": [{"id": "fake-model", "object": "model", "owned_by": "fake"}]}
                    self.send(200, "application/json", json.dumps(models).encode())
                    return
                self.send(404, "application/json", b'{"error": {"message": "not found"}}')

        with serving(Handler) as url:
            yield f"{url}/v1"
