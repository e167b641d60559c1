"""The runner with the anthropic backend and the real SDK, against a fake Messages API (httpx2 MockTransport).

Covers what only the runner does with a model: token usage (with cache reads) in the LOG entry's Evidence,
and a persistent 500 taking the salvage path with the API key nowhere in the repository.
"""
from __future__ import annotations

import json
import re
from typing import Any

import httpx2
import pygit2

from gitmem.agents.anthropic import AnthropicBackend
from gitmem.cycle.runner import Settings, run_cycle
from gitmem.errors import ExitCode
from gitmem.memory import log
from tests.support.cycle_support import config_of, file_at, is_clean
from tests.support.helpers import GitRepo

KEY = "sk-ant-api03-runner-test-" + "k" * 24
USAGE = {"input_tokens": 150, "output_tokens": 40, "cache_read_input_tokens": 1200,
         "cache_creation_input_tokens": 0}


def _message(blocks: list[dict[str, Any]], stop: str) -> dict[str, Any]:
    return {"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
            "content": blocks, "stop_reason": stop, "stop_sequence": None, "usage": USAGE}


def _tool(name: str, arguments: dict[str, Any], number: int) -> dict[str, Any]:
    return {"type": "tool_use", "id": f"toolu_{number}", "name": name, "input": arguments}


def _backend(repo: GitRepo, handler: Any) -> AnthropicBackend:
    return AnthropicBackend(config_of(repo), api_key=KEY, max_retries=1, base_url="http://fake-anthropic.test",
                            http_client=httpx2.Client(transport=httpx2.MockTransport(handler)))


def test_token_usage_with_cache_reads_lands_in_the_log_entry(memrepo: GitRepo, monkeypatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    turns = iter([
        _message([_tool("write_file", {"path": "hello.py", "content": "print('hi')\n"}, 1),
                  _tool("log_entry", {"task": "write hello.py", "outcome": "built", "result": "it prints hi",
                                      "evidence": "python hello.py"}, 2),
                  _tool("now_block", {"did": "hello.py", "human": "nothing", "next": "tests"}, 3)], "tool_use"),
        _message([{"type": "text", "text": "Done."}], "end_turn"),
    ])
    seen: list[dict[str, Any]] = []

    def handler(request: httpx2.Request) -> httpx2.Response:
        seen.append(json.loads(request.content))
        return httpx2.Response(200, json=next(turns))

    report = run_cycle(memrepo.ws(), _backend(memrepo, handler), settings=Settings())
    assert report.exit_code == ExitCode.OK and report.task == "write hello.py"
    assert report.tokens == {"input_tokens": 300, "output_tokens": 80, "cache_read_input_tokens": 2400,
                             "cache_creation_input_tokens": 0}
    evidence = log.parse(memrepo.read("LOG.md")).entries[-1].get("Evidence")
    first, context, tokens = evidence.splitlines()
    assert first == "python hello.py" and re.fullmatch(r"runner: context \d+ tokens of 60000 \(estimate\)", context)
    assert tokens == ("tokens: input 300, output 80, cache_read_input_tokens 2400, cache_creation_input_tokens 0, "
                      "total 2780")
    assert "This is cycle 1." in json.dumps(seen[0])
    assert file_at(memrepo.repo, "HEAD", "hello.py") == "print('hi')\n"
    assert is_clean(memrepo)


def test_a_persistent_500_is_salvaged_and_the_key_never_written(memrepo: GitRepo, monkeypatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    calls = []

    def handler(request: httpx2.Request) -> httpx2.Response:
        calls.append(request)
        if len(calls) == 1:
            return httpx2.Response(200, json=_message(
                [_tool("write_file", {"path": "draft.md", "content": "first half\n"}, 1)], "tool_use"))
        return httpx2.Response(500, json={"type": "error", "error": {"type": "api_error",
                                                                     "message": f"boom near {KEY}"}},
                               headers={"retry-after-ms": "1"})

    report = run_cycle(memrepo.ws(), _backend(memrepo, handler), settings=Settings())
    assert report.exit_code == ExitCode.SALVAGED
    assert len(calls) == 3                                   # the first turn, then a 500 and its one retry
    assert report.salvage_branch == "gitmem/salvage/cycle-1"
    assert file_at(memrepo.repo, "refs/heads/gitmem/salvage/cycle-1", "draft.md") == "first half\n"
    entry = log.parse(memrepo.read("LOG.md")).entries[-1]
    assert entry.outcome == "no-build" and "HTTP 500" in entry.get("Result")
    assert "gitmem/salvage/cycle-1" in entry.get("Result")
    repo = memrepo.repo
    for ref in ("HEAD", "refs/heads/gitmem/salvage/cycle-1"):
        commit = repo.revparse_single(ref).peel(pygit2.Commit)
        assert KEY not in commit.message
        for item in commit.tree:
            if item.type == pygit2.enums.ObjectType.BLOB:
                assert KEY.encode() not in item.data, item.name
    assert KEY not in json.dumps(report.as_dict())
    assert is_clean(memrepo)
