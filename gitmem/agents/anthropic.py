"""The `anthropic` backend: a Messages API tool loop over the cycle's tools (gitmem.agents.tools).

Request layout, for prompt caching (cache_control {"type": "ephemeral"} on at most 4 blocks):
  tools      the tool definitions; breakpoint on the last one
  system     the filled-in cycle instructions; breakpoint
  messages   the first user turn holds the reading budget, one text block per part; breakpoint on RULES.
             Each later user turn (tool results) carries the one moving breakpoint, so every turn re-reads
             the conversation so far from the cache.
Bounds: request.max_turns API calls, request.max_tokens tokens in total (input + output + cache reads and
writes), and request.deadline (AgentError). 429, 5xx and overloaded errors are retried by the SDK
(agent.max_retries, exponential backoff, honouring retry-after); past that, AgentError. Error messages are
scrubbed of the API key. `import anthropic` happens inside functions only: it takes seconds.
"""
from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import Any

from gitmem import secrets
from gitmem.agents.base import AgentError, AgentResult, CycleRequest
from gitmem.agents.tools import Toolbox
from gitmem.config import Config

EPHEMERAL = {"type": "ephemeral"}
OUTPUT_TOKENS = 8192          # max_tokens of one response, lowered when the cycle's total budget is nearly spent
USAGE_KEYS = ("input_tokens", "output_tokens", "cache_read_input_tokens", "cache_creation_input_tokens")
START = ("Above is everything you remember. Do this cycle's one task now with the tools, then write the LOG "
         "entry and the NOW block.")


def make_client(config: Config, *, api_key: str | None = None, max_retries: int | None = None,
                **options: Any) -> Any:
    """An anthropic.Anthropic client; `options` (base_url, http_client, timeout) go to its constructor."""
    from gitmem import extras

    extras.require("agent", "the anthropic backend")
    import anthropic

    key = api_key or os.environ.get("ANTHROPIC_API_KEY")
    if not key:
        raise AgentError("ANTHROPIC_API_KEY is not set: the anthropic backend needs it (or choose another "
                         "backend with agent.backend or --agent)")
    retries = config.agent.max_retries if max_retries is None else max_retries
    return anthropic.Anthropic(api_key=key, max_retries=retries, **options)


def api_token_counter(config: Config, *, client: Any = None) -> Callable[[str], int]:
    """An exact counter for gitmem.cycle.budget: `messages.count_tokens` of the text as one user message.

    The count includes the few tokens that frame a message, so it errs on the safe side like the estimate.
    """
    client = client or make_client(config)

    def count(text: str) -> int:
        try:
            return int(client.messages.count_tokens(
                model=config.agent.model, messages=[{"role": "user", "content": text}]).input_tokens)
        except Exception as err:   # the caller falls back to the offline estimate
            raise AgentError(secrets.scrub(f"count_tokens failed: {err}", [getattr(client, "api_key", None)])) from None
    return count


class AnthropicBackend:
    name = "anthropic"

    def __init__(self, config: Config, *, client: Any = None, api_key: str | None = None,
                 max_retries: int | None = None, **client_options: Any) -> None:
        self.config = config
        self._client = client
        self._api_key = api_key
        self._max_retries = max_retries
        self._options = client_options

    def client(self) -> Any:
        if self._client is None:
            self._client = make_client(self.config, api_key=self._api_key, max_retries=self._max_retries,
                                       **self._options)
        return self._client

    def run(self, request: CycleRequest) -> AgentResult:
        import anthropic

        client = self.client()
        secret = getattr(client, "api_key", None) or self._api_key
        tools = Toolbox(request.workspace, request.cycle, clock=request.clock)
        result = AgentResult(usage=dict.fromkeys(USAGE_KEYS, 0), notes=tools.notes)
        schemas = tools.schemas()
        schemas[-1]["cache_control"] = EPHEMERAL
        system = [{"type": "text", "text": request.instructions, "cache_control": EPHEMERAL}]
        messages: list[dict[str, Any]] = [{"role": "user", "content": first_turn(request)}]
        while True:
            spent = sum(result.usage.values())
            if result.turns >= request.max_turns:
                result.stop_reason = "max_turns"
                result.notes.append(f"stopped: reached cycle.max_turns ({request.max_turns} turns)")
                break
            if spent >= request.max_tokens:
                result.stop_reason = "max_tokens"
                result.notes.append(f"stopped: reached cycle.max_tokens ({spent} of {request.max_tokens} tokens)")
                break
            remaining = request.deadline - time.monotonic()
            if remaining <= 0:
                raise AgentError(f"timed out: the cycle ran past its {request.config.cycle.timeout} s limit "
                                 f"after {result.turns} turns")
            try:
                response = client.messages.create(
                    model=request.config.agent.model,
                    max_tokens=max(256, min(OUTPUT_TOKENS, request.max_tokens - spent)),
                    system=system, tools=schemas, messages=messages, timeout=remaining)
            except anthropic.APITimeoutError:
                raise AgentError(f"timed out waiting for the Messages API after {result.turns} turns") from None
            except anthropic.APIStatusError as err:
                raise AgentError(secrets.scrub(f"the Messages API failed with HTTP {err.status_code} after retries: "
                                       f"{err.message}", [secret])) from None
            except anthropic.APIError as err:
                raise AgentError(secrets.scrub(f"the Messages API failed: {err}", [secret])) from None
            result.turns += 1
            _add_usage(result.usage, response.usage)
            messages.append({"role": "assistant", "content": [_block_param(b) for b in response.content]})
            calls = [b for b in response.content if b.type == "tool_use"]
            if not calls:
                result.stop_reason = response.stop_reason or "end_turn"
                break
            replies = []
            for call in calls:
                outcome = tools.call(call.name, call.input)
                reply = {"type": "tool_result", "tool_use_id": call.id, "content": outcome.text}
                replies.append({**reply, "is_error": True} if outcome.is_error else reply)
            _move_breakpoint(messages)
            replies[-1]["cache_control"] = EPHEMERAL
            messages.append({"role": "user", "content": replies})
        return result


def first_turn(request: CycleRequest) -> list[dict[str, Any]]:
    """One text block per part, under its source heading; RULES carries a cache breakpoint."""
    blocks: list[dict[str, Any]] = []
    for part in request.parts:
        block: dict[str, Any] = {"type": "text", "text": f"## {part.source}\n\n{part.text.rstrip()}"}
        if part.cacheable and not any("cache_control" in b for b in blocks):
            block["cache_control"] = EPHEMERAL
        blocks.append(block)
    blocks.append({"type": "text", "text": START})
    return blocks


def _move_breakpoint(messages: list[dict[str, Any]]) -> None:
    """Drop the previous turn's moving breakpoint: the API allows 4, and 3 are fixed."""
    for message in messages[1:]:
        if message["role"] == "user" and isinstance(message["content"], list):
            for block in message["content"]:
                block.pop("cache_control", None)


def _block_param(block: Any) -> dict[str, Any]:
    """A response block as a request block: only the fields the API accepts back."""
    if block.type == "text":
        return {"type": "text", "text": block.text}
    if block.type == "tool_use":
        return {"type": "tool_use", "id": block.id, "name": block.name, "input": block.input}
    dumped: dict[str, Any] = block.model_dump(exclude_none=True)
    return dumped


def _add_usage(total: dict[str, float], usage: Any) -> None:
    for key in USAGE_KEYS:
        total[key] = total.get(key, 0) + int(getattr(usage, key, 0) or 0)
