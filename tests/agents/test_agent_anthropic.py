"""The anthropic backend through the real SDK against a local fake Messages API (httpx2 MockTransport).

Nothing here touches the network: the SDK's own client sends real HTTP requests to a handler in this file,
which records each request body and answers with scripted Message JSON, 429s or 500s.
"""
from __future__ import annotations

import itertools
import json
import os
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx2
import pytest

from gitmem.agents.anthropic import AnthropicBackend, api_token_counter
from gitmem.agents.base import AgentError
from gitmem.checks.check_and_verify import check_worktree
from gitmem.config import load_config
from gitmem.cycle.budget import build_request
from gitmem.memory import decisions, log, now
from gitmem.secrets import scrub
from gitmem.workspace import Workspace
from tests.support.helpers import GitRepo

KEY = "sk-ant-test-0123456789abcdefSECRET"
NOW = datetime(2026, 11, 30, 9, 30, tzinfo=UTC)
USAGE = {"input_tokens": 100, "output_tokens": 20, "cache_read_input_tokens": 900, "cache_creation_input_tokens": 50}


MODEL = "claude-sonnet-4-6"


@pytest.fixture(autouse=True)
def model_in_config(memrepo: GitRepo) -> None:
    """The model comes from gitmem.yaml: use a current one so the SDK has nothing to warn about."""
    memrepo.write("gitmem.yaml", memrepo.read("gitmem.yaml").replace("model: claude-sonnet-5-5", f"model: {MODEL}"))


class FakeAPI:
    """Answers POST /v1/messages from a list of replies: a list of content blocks, or an (status, body) error."""

    def __init__(self, replies: list[Any]) -> None:
        self.replies = iter(replies)
        self.requests: list[dict[str, Any]] = []
        self.paths: list[str] = []
        self.ids = itertools.count(1)

    def __call__(self, request: httpx2.Request) -> httpx2.Response:
        self.paths.append(request.url.path)
        body = json.loads(request.content)
        assert KEY in (request.headers.get("x-api-key"),
                       request.headers.get("authorization", "").removeprefix("Bearer "))
        if request.url.path.endswith("/count_tokens"):
            text = body["messages"][0]["content"]
            return httpx2.Response(200, json={"input_tokens": len(text.split()) + 3})
        self.requests.append(body)
        reply = next(self.replies)
        if isinstance(reply, tuple):
            status, payload = reply
            return httpx2.Response(status, json=payload, headers={"retry-after-ms": "5"})
        blocks = [self.block(b) for b in reply]
        stop = "tool_use" if any(b["type"] == "tool_use" for b in blocks) else "end_turn"
        return httpx2.Response(200, json={
            "id": f"msg_{next(self.ids)}", "type": "message", "role": "assistant", "model": body["model"],
            "content": blocks, "stop_reason": stop, "stop_sequence": None, "usage": USAGE})

    def block(self, spec: Any) -> dict[str, Any]:
        if isinstance(spec, str):
            return {"type": "text", "text": spec}
        name, arguments = spec
        return {"type": "tool_use", "id": f"toolu_{next(self.ids)}", "name": name, "input": arguments}

    def tool_results(self, turn: int) -> list[dict[str, Any]]:
        """The tool_result blocks sent in request number `turn` (0-based)."""
        return [b for b in self.requests[turn]["messages"][-1]["content"] if b["type"] == "tool_result"]


def backend_with(config: Any, api: Callable[[httpx2.Request], httpx2.Response], retries: int = 2) -> AnthropicBackend:
    return AnthropicBackend(config, api_key=KEY, max_retries=retries, base_url="http://fake-anthropic.test",
                            http_client=httpx2.Client(transport=httpx2.MockTransport(api)))


def run(repo: GitRepo, replies: list[Any], *, retries: int = 2, deadline: float | None = None, **limits: int):
    config = load_config(repo.path)
    api = FakeAPI(replies)
    request = build_request(Workspace.at(repo.path, config), now=NOW, clock=lambda: NOW, deadline=deadline)
    if limits:
        from dataclasses import replace
        request = replace(request, **limits)
    return backend_with(config, api, retries).run(request), api


LOG_CALL = ("log_entry", {"task": "write hello.py", "outcome": "built", "result": "hello.py prints hi",
                          "evidence": "python hello.py -> hi"})
NOW_CALL = ("now_block", {"did": "hello.py", "human": "nothing", "next": "add tests"})


def test_multi_turn_tool_loop_writes_memory_in_a_real_repo(memrepo: GitRepo) -> None:
    result, api = run(memrepo, [
        ["I will read the roadmap.", ("read_file", {"path": "ROADMAP.md"})],
        [("write_file", {"path": "hello.py", "content": "print('hi')\n"})],
        [LOG_CALL, NOW_CALL],
        ["Done."],
    ])
    assert result.turns == 4 and result.stop_reason == "end_turn" and result.notes == []
    assert memrepo.read("hello.py") == "print('hi')\n"
    entry = log.parse(memrepo.read("LOG.md")).entries[-1]
    assert (entry.cycle, entry.outcome, str(entry.when)) == (1, "built", "2026-11-30 09:30 UTC")
    assert now.parse(memrepo.read("NOW.md")).top.cycle == 1
    assert [v for v in check_worktree(memrepo.ws()) if v.is_error] == []
    # Each tool result went back to the model with its call's id, in order.
    assert "First week (current)" in api.tool_results(1)[0]["content"]
    assert [r["content"] for r in api.tool_results(3)] == [
        "LOG.md: appended ## 2026-11-30 09:30 UTC · cycle 1 · built", "NOW.md: added ## 2026-11-30 09:30 UTC · cycle 1"]
    assert {body["model"] for body in api.requests} == {MODEL}
    # Usage summed over the 4 calls, cache reads included.
    assert result.usage == {key: 4 * value for key, value in USAGE.items()}


def test_cache_control_on_tools_system_rules_and_the_moving_turn(memrepo: GitRepo) -> None:
    _, api = run(memrepo, [[("list_files", {})], [("list_files", {})], ["ok"]])
    ephemeral = {"type": "ephemeral"}
    for body in api.requests:
        assert body["tools"][-1]["cache_control"] == ephemeral
        assert all("cache_control" not in tool for tool in body["tools"][:-1])
        assert body["system"][0]["cache_control"] == ephemeral
        first = body["messages"][0]["content"]
        assert first[0]["text"].startswith("## RULES.md:1-") and first[0]["cache_control"] == ephemeral
        assert sum("cache_control" in block for block in first) == 1
        assert json.dumps(body).count('"cache_control"') <= 4   # the API's limit
    # From the second call on, the newest tool results carry the one moving breakpoint.
    assert api.requests[2]["messages"][-1]["content"][-1]["cache_control"] == ephemeral
    assert "cache_control" not in api.requests[2]["messages"][2]["content"][-1]


def test_a_model_that_never_logs_leaves_memory_alone(memrepo: GitRepo) -> None:
    before = memrepo.read("LOG.md"), memrepo.read("NOW.md")
    result, api = run(memrepo, [["I have nothing to do."]])
    assert (result.turns, result.stop_reason) == (1, "end_turn")
    assert (memrepo.read("LOG.md"), memrepo.read("NOW.md")) == before   # the runner writes the no-build entry


def test_429_then_success_is_retried_by_the_sdk(memrepo: GitRepo) -> None:
    result, api = run(memrepo, [(429, {"type": "error", "error": {"type": "rate_limit_error", "message": "slow"}}),
                                (529, {"type": "error", "error": {"type": "overloaded_error", "message": "busy"}}),
                                [LOG_CALL], ["done"]])
    assert len(api.paths) == 4 and result.turns == 2
    assert log.parse(memrepo.read("LOG.md")).entries[-1].outcome == "built"


def test_persistent_500_is_an_agent_error_without_the_key(memrepo: GitRepo) -> None:
    failure = (500, {"type": "error", "error": {"type": "api_error", "message": f"boom for key {KEY}"}})
    with pytest.raises(AgentError) as caught:
        run(memrepo, [failure] * 10, retries=2)
    message = str(caught.value)
    assert "HTTP 500" in message and KEY not in message and "***" in message


def test_401_is_not_retried_and_names_no_key(memrepo: GitRepo) -> None:
    failure = (401, {"type": "error", "error": {"type": "authentication_error", "message": "invalid x-api-key"}})
    api = FakeAPI([failure, failure])
    config = load_config(memrepo.path)
    with pytest.raises(AgentError, match="HTTP 401") as caught:
        backend_with(config, api, retries=3).run(build_request(Workspace.at(memrepo.path, config), now=NOW))
    assert len(api.paths) == 1 and KEY not in str(caught.value)


def test_direct_memory_writes_are_refused_and_noted(memrepo: GitRepo) -> None:
    memrepo.write("DECISIONS.md", memrepo.read("DECISIONS.md").replace(
        "## Pending\n", "## Pending\n\n### D-0001 · Ship it?\n- Asked: 2026-11-29 10:00 UTC (cycle 1)\n"
        "- Recommendation: yes\n"))
    before = {p: memrepo.read(p) for p in ("LOG.md", "RULES.md", "DECISIONS.md")}
    result, api = run(memrepo, [
        [("write_file", {"path": "LOG.md", "content": "# LOG\n"}),
         ("edit_file", {"path": "RULES.md", "old_text": "## Proven rules", "new_text": "## Proven rules\n- R-01 · x"}),
         ("edit_file", {"path": "DECISIONS.md", "old_text": "- Recommendation: yes",
                        "new_text": "- Recommendation: yes\n- Answer: yes"})],
        ["I see; stopping."]])
    assert before == {p: memrepo.read(p) for p in before}
    replies = api.tool_results(1)
    assert [r.get("is_error") for r in replies] == [True, True, True]
    assert all("memory file" in r["content"] for r in replies)
    assert [n.split(":")[0] for n in result.notes] == ["refused write_file", "refused edit_file", "refused edit_file"]


@pytest.mark.parametrize("path", ["../x.txt", "/x.txt", "out/x.txt", ".git/config"])
def test_path_escapes_are_refused(memrepo: GitRepo, tmp_path: Path, path: str) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    os.symlink(outside, memrepo.path / "out")
    config_before = (memrepo.path / ".git" / "config").read_text()
    result, api = run(memrepo, [[("write_file", {"path": path, "content": "pwned"}),
                                 ("read_file", {"path": path})], ["ok"]])
    assert [r.get("is_error") for r in api.tool_results(1)] == [True, True]
    assert list(outside.iterdir()) == [] and not (memrepo.path.parent / "x.txt").exists()
    assert (memrepo.path / ".git" / "config").read_text() == config_before
    assert len(result.notes) == 2


def test_turn_token_and_time_bounds(memrepo: GitRepo) -> None:
    forever = [[("list_files", {})]] * 10
    result, api = run(memrepo, forever, max_turns=3)
    assert (result.turns, result.stop_reason, len(api.requests)) == (3, "max_turns", 3)
    assert result.notes == ["stopped: reached cycle.max_turns (3 turns)"]
    result, api = run(memrepo, forever, max_tokens=2000)   # each call costs 1070 tokens
    assert (result.turns, result.stop_reason) == (2, "max_tokens")
    with pytest.raises(AgentError, match="timed out"):
        run(memrepo, forever, deadline=time.monotonic() - 1)


def test_exact_token_counter_uses_count_tokens(memrepo: GitRepo) -> None:
    config = load_config(memrepo.path)
    api = FakeAPI([])
    client = backend_with(config, api).client()
    counter = api_token_counter(config, client=client)
    assert counter("one two three") == 6
    request = build_request(Workspace.at(memrepo.path, config), now=NOW, count_tokens=counter)
    rules = request.parts[0]
    assert rules.tokens == len(f"## {rules.source}\n\n{rules.text}".split()) + 3
    assert set(api.paths) == {"/v1/messages/count_tokens"}


def test_no_key_is_a_clear_agent_error(memrepo: GitRepo, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    config = load_config(memrepo.path)
    with pytest.raises(AgentError, match="ANTHROPIC_API_KEY is not set"):
        AnthropicBackend(config).run(build_request(Workspace.at(memrepo.path, config), now=NOW))


def test_scrub_removes_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "plain-env-key-123456")
    assert scrub("a plain-env-key-123456 b sk-ant-api03-AbC_d-9 c") == "a *** b *** c"


def test_decisions_are_untouched_by_a_looping_model(memrepo: GitRepo) -> None:
    result, _ = run(memrepo, [[("ask_decision", {"title": "Weekly report?", "recommendation": "yes, Mondays"})],
                              ["asked"]])
    assert decisions.parse(memrepo.read("DECISIONS.md")).pending[0].title == "Weekly report?"
    assert result.notes == []
