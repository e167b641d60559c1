"""How long an agent CLI waits for `gitmem mcp` (issue 22): the whole process, from spawn to the `initialize`
reply on stdout, as Codex, Claude Code or Cursor start it. Codex leaves a server that has not answered by its
first request out of that request (unless the server is `required`), so this is the figure that matters.

Measured beside it, in the same conditions: the MCP SDK's own import (`python -c "import mcp"`), which gitmem
cannot make faster without a second implementation of the protocol, and a bare interpreter. The history's size
plays no part (the server finds its repository and reads memory only after `initialize`), so there is one
small repository and no scales.

Run:  .venv/bin/pytest benchmarks/bench_mcp_start.py --benchmark-only -s
"""
from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pygit2
import pytest

GITMEM = Path(sys.executable).parent / "gitmem"
INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
              "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                         "clientInfo": {"name": "bench", "version": "0"}}}
ROUNDS = 5


@pytest.fixture(scope="module")
def memory_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("mcp-start") / "repo"
    pygit2.init_repository(str(root))
    (root / "LOG.md").write_text("# LOG\n", encoding="utf-8")
    return root


def until_initialized(root: Path) -> Callable[[], dict[str, object]]:
    """One whole `gitmem mcp` process: spawn, send `initialize`, read its reply, close stdin, wait for exit.
    The reply is read line by line: the SDK's stdio transport writes one JSON-RPC message a line."""
    def run() -> dict[str, object]:
        server = subprocess.Popen([str(GITMEM), "mcp"], cwd=root, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.DEVNULL, text=True)
        assert server.stdin is not None and server.stdout is not None
        server.stdin.write(json.dumps(INITIALIZE) + "\n")
        server.stdin.flush()
        reply: dict[str, object] = json.loads(server.stdout.readline())
        server.stdin.close()
        server.wait(timeout=30)
        return reply
    return run


@pytest.mark.benchmark(group="mcp start: spawn to the initialize reply, whole process")
def test_gitmem_mcp_answers_initialize(benchmark, memory_repo: Path) -> None:
    reply = benchmark.pedantic(until_initialized(memory_repo), rounds=ROUNDS, iterations=1, warmup_rounds=1)
    result = reply["result"]
    assert isinstance(result, dict) and result["serverInfo"]["name"] == "gitmem"


@pytest.mark.benchmark(group="mcp start: the floor")
@pytest.mark.parametrize("code", ["pass", "import mcp"], ids=["bare interpreter", "the MCP SDK's import"])
def test_the_floor(benchmark, code: str) -> None:
    benchmark.pedantic(lambda: subprocess.run([sys.executable, "-c", code], check=True), rounds=ROUNDS,
                       iterations=1, warmup_rounds=1)
