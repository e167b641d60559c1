"""`gitmem mcp` driven by the real `mcp` client over stdio: a subprocess, as an MCP host starts it."""
from __future__ import annotations

import os
import sys
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
from mcp import types
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

GITMEM = Path(sys.executable).parent / "gitmem"


@dataclass
class Answer:
    text: str
    is_error: bool


@dataclass
class Conversation:
    """What a scripted client saw: the server's instructions, its tools, and each answer in order."""

    instructions: str = ""
    tools: list[types.Tool] = field(default_factory=list)
    answers: list[Any] = field(default_factory=list)
    error: BaseException | None = None


Step = Callable[[ClientSession], Awaitable[Any]]


def call(name: str, arguments: dict[str, Any] | None = None) -> Step:
    async def step(session: ClientSession) -> Answer:
        result = await session.call_tool(name, arguments or {})
        text = "\n".join(block.text for block in result.content if isinstance(block, types.TextContent))
        return Answer(text, bool(result.is_error))
    return step


def read(uri: str) -> Step:
    async def step(session: ClientSession) -> str:
        result = await session.read_resource(uri)
        return "\n".join(getattr(item, "text", "") for item in result.contents)
    return step


def read_refused(uri: str) -> Step:
    """A resources/read the server must refuse: the JSON-RPC error's message (the session goes on)."""
    async def step(session: ClientSession) -> str:
        from mcp.shared.exceptions import MCPError

        try:
            await session.read_resource(uri)
        except MCPError as err:
            return err.error.message
        raise AssertionError(f"{uri} was read")
    return step


def pause(seconds: float) -> Step:
    async def step(session: ClientSession) -> None:
        await anyio.sleep(seconds)
    return step


def list_resources() -> Step:
    async def step(session: ClientSession) -> list[str]:
        return [str(item.uri) for item in (await session.list_resources()).resources]
    return step


def converse(steps: list[Step], *, cwd: Path, args: tuple[str, ...] = (), roots: list[Path] | None = None,
             env: dict[str, str] | None = None, errlog: Path | None = None) -> Conversation:
    """Start `gitmem mcp ARGS` in `cwd`, initialize (announcing `roots` when given), list the tools, run `steps`."""
    seen = Conversation()
    environment = {k: v for k, v in os.environ.items() if k != "GITMEM_CYCLE"} | (env or {})
    params = StdioServerParameters(command=str(GITMEM), args=["mcp", *args], cwd=str(cwd), env=environment)

    async def list_roots(context: Any) -> types.ListRootsResult:
        return types.ListRootsResult(roots=[types.Root(uri=path.resolve().as_uri(), name=path.name)
                                            for path in roots or []])

    async def main() -> None:
        log = (errlog or Path(os.devnull)).open("w")
        try:
            async with stdio_client(params, errlog=log) as (reader, writer):
                async with ClientSession(reader, writer, list_roots_callback=list_roots if roots is not None
                                         else None) as session:
                    init = await session.initialize()
                    seen.instructions = init.instructions or ""
                    seen.tools = list((await session.list_tools()).tools)
                    for step in steps:
                        seen.answers.append(await step(session))
        except Exception as err:       # the server went away (it exits outside a memory repository)
            seen.error = err
        finally:
            log.close()

    anyio.run(main)
    return seen


HELLO = {"jsonrpc": "2.0", "id": 0, "method": "initialize",
         "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                    "clientInfo": {"name": "a-host", "version": "1"}}}
READY = {"jsonrpc": "2.0", "method": "notifications/initialized"}


@dataclass
class Exchange:
    """What a `gitmem mcp` process wrote back to raw lines: its replies (parsed), stderr and exit code."""

    replies: list[dict[str, Any]]
    stderr: str
    returncode: int


def exchange(lines: list[bytes], *, cwd: Path, wait_for: tuple[Any, ...] = (),
             env: dict[str, str] | None = None, hello: dict[str, Any] = HELLO) -> Exchange:
    """Initialize `gitmem mcp` in `cwd` (with `hello`), send `lines` as they are (bytes; this helper ends each
    with a newline), then a last ping; close stdin once that ping and the requests `wait_for` names are answered
    (a tool call may still be running when the ping is answered: ping never waits behind the calls)."""
    import json
    import subprocess
    import threading

    last = {"jsonrpc": "2.0", "id": "last", "method": "ping"}
    wire = b"".join(line + b"\n" for line in [json.dumps(hello).encode(), json.dumps(READY).encode(), *lines,
                                              json.dumps(last).encode()])
    environment = {k: v for k, v in os.environ.items() if k != "GITMEM_CYCLE"} | (env or {})
    server = subprocess.Popen([str(GITMEM), "mcp"], cwd=cwd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, env=environment)
    assert server.stdin is not None and server.stdout is not None and server.stderr is not None
    stdin = server.stdin

    def write() -> None:
        stdin.write(wire)
        stdin.flush()

    writer = threading.Thread(target=write)   # replies flow while it writes
    writer.start()
    waiting = {"last", *wait_for}
    replies: list[dict[str, Any]] = []
    while waiting:
        line = server.stdout.readline()
        if not line:
            break
        replies.append(json.loads(line))
        waiting.discard(replies[-1].get("id"))
    writer.join()
    server.stdin.close()
    server.wait(timeout=60)
    answered = [reply for reply in replies if reply.get("id") != "last"]
    return Exchange(answered, server.stderr.read().decode(errors="replace"), server.returncode)

