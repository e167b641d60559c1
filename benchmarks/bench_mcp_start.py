"""How long an agent CLI waits for `gitmem mcp` (issues 22 and 31): the whole process, from spawn to the
`tools/list` reply on stdout, as Codex, Claude Code, Gemini CLI or Cursor start it (initialize, the
`initialized` notification, tools/list). Codex with `required = true` and Gemini CLI's discovery wait for it at
every session start; the goal is 300 ms.

Measured beside it, in the same conditions: a bare interpreter, and the MCP SDK's own import
(`python -c "import mcp"`), which was most of the wait while `gitmem mcp` was built on the SDK (975-1,288 ms
to `initialize` alone). Wall time is what the client waits; the whole process's CPU time (its user and system
time, in `extra_info`) is what a loaded machine cannot hide. The history's size plays no part (the server
finds its repository and reads memory only after `initialized`), so there is one small repository.

Run:  .venv/bin/pytest benchmarks/bench_mcp_start.py --benchmark-only -s
"""
from __future__ import annotations

import json
import resource
import statistics
import subprocess
import sys
from pathlib import Path

import pygit2
import pytest

GITMEM = Path(sys.executable).parent / "gitmem"
HANDSHAKE = [{"jsonrpc": "2.0", "id": 1, "method": "initialize",
              "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                         "clientInfo": {"name": "bench", "version": "0"}}},
             {"jsonrpc": "2.0", "method": "notifications/initialized"},
             {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}]
ROUNDS = 9


@pytest.fixture(scope="module")
def memory_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("mcp-start") / "repo"
    pygit2.init_repository(str(root))
    (root / "LOG.md").write_text("# LOG\n", encoding="utf-8")
    return root


def cpu_of_children() -> float:
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


class Spawns:
    """Each round spawns `gitmem mcp`, sends the handshake and tools/list, and stops the clock at the list's
    reply (one JSON-RPC message a line). The process is closed and reaped outside the clock, before the next
    round: its whole CPU time (the search for the repository and the exit included) goes to `cpu`."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.server: subprocess.Popen[str] | None = None
        self.cpu: list[float] = []
        self.reply: dict[str, object] = {}

    def reap(self) -> None:
        if self.server is None:
            return
        assert self.server.stdin is not None
        self.server.stdin.close()
        self.server.wait(timeout=30)
        self.cpu.append(cpu_of_children() - self.started)
        self.server = None

    def spawn(self) -> None:
        self.started = cpu_of_children()
        server = self.server = subprocess.Popen([str(GITMEM), "mcp"], cwd=self.root, stdin=subprocess.PIPE,
                                                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        assert server.stdin is not None and server.stdout is not None
        server.stdin.write("".join(json.dumps(message) + "\n" for message in HANDSHAKE))
        server.stdin.flush()
        while (reply := json.loads(server.stdout.readline())).get("id") != 2:
            pass
        self.reply = reply


@pytest.mark.benchmark(group="mcp start: spawn to the tools/list reply")
def test_gitmem_mcp_lists_its_tools(benchmark, memory_repo: Path) -> None:
    spawns = Spawns(memory_repo)
    benchmark.pedantic(spawns.spawn, setup=spawns.reap, rounds=ROUNDS, iterations=1, warmup_rounds=1)
    spawns.reap()
    result = spawns.reply["result"]
    assert isinstance(result, dict) and [tool["name"] for tool in result["tools"]][0] == "log_entry"
    # The first spawn warms the caches; with --benchmark-disable (the smoke run) it is the only one.
    measured = spawns.cpu[1:] or spawns.cpu
    benchmark.extra_info["whole_process_cpu_median_ms"] = round(statistics.median(measured) * 1000, 1)


@pytest.mark.benchmark(group="mcp start: the floor")
@pytest.mark.parametrize("code", ["pass", "import mcp"], ids=["bare interpreter", "the MCP SDK's import"])
def test_the_floor(benchmark, code: str) -> None:
    benchmark.pedantic(lambda: subprocess.run([sys.executable, "-c", code], check=True), rounds=ROUNDS,
                       iterations=1, warmup_rounds=1)
