"""`gitmem mcp`: the memory tools over MCP (stdio), on the official `mcp` SDK (the `agents` extra).

One implementation, two transports: the writes are the `anthropic` backend's memory tools
(gitmem.agents.tools.Toolbox) with the same guards: no tool resolves a decision, timestamps come from the
clock, entries are rendered canonically and validated, and every write is numbered by the shared rule
(`Workspace.cycle_for`: GITMEM_CYCLE inside a runner cycle, else the session's own cycle). Outside a runner
cycle a LOG entry is marked `- Session: interactive`. Added for sessions: `context`, `pending`, `status`.
Resources: RULES, the top NOW block, the pending decisions. Writes are files only: committing stays with the
runner, or with the human's agent.

The repository: `--root`, else the first root the client announces that is a memory repository, else the
working directory (many hosts start stdio servers from the home directory). Outside a memory repository
the server says so on stderr (and to the client) and exits with code 2.
"""
from __future__ import annotations

import json
import sys
import threading
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote, urlparse

import anyio
from mcp import types
from mcp.server.lowlevel import Server
from mcp.shared.exceptions import MCPError

from gitmem import __version__
from gitmem.errors import GitmemError
from gitmem.sessions.mcp_wire import bounded_stdio
from gitmem.sessions.protocol import DESCRIPTIONS, EXTRA_TOOLS, INSTRUCTIONS, RESOLVE_NAMES, RESOURCES, SERVER

if TYPE_CHECKING:
    from gitmem.agents.tools import Toolbox
    from gitmem.workspace import Workspace

# Start fast: an agent CLI waits for the `initialize` reply (Codex leaves a server that has not answered out of
# its first request). The MCP SDK's import is most of that wait and cannot be helped here; gitmem's own heavy
# modules (the toolbox, the workspace, pygit2) load only once the client is answered: in the search for the
# repository after `initialized`, or at the first list or call.

WAIT_FOR_ROOT = 15.0          # seconds a tool call waits for the repository to be found
GRACE = 1.0                   # seconds between saying "not a memory repository" and exiting


@dataclass
class State:
    """The server's one repository (found once) and its toolbox; tool calls run one at a time."""

    workspace_name: str | None
    ws: Workspace | None = None
    found: anyio.Event = field(default_factory=anyio.Event)
    failure: str = ""
    lock: threading.Lock = field(default_factory=threading.Lock)
    toolbox: Toolbox | None = None
    scope: anyio.CancelScope | None = None

    def settle(self, ws: Workspace | None, failure: str = "") -> None:
        self.ws, self.failure = ws, failure
        if ws is not None:
            from gitmem.agents.tools import Toolbox

            self.toolbox = Toolbox(ws, cycle=None, interactive=True)
        self.found.set()


def tool_list() -> list[types.Tool]:
    from gitmem.agents.tools import MEMORY_TOOLS

    tools = [types.Tool(name=spec["name"], description=DESCRIPTIONS.get(spec["name"], spec["description"]),
                        input_schema=spec["input_schema"]) for spec in MEMORY_TOOLS]
    tools += [types.Tool(name=name, description=text, input_schema={"type": "object", "properties": props})
              for name, text, props in EXTRA_TOOLS]
    return tools


def call(state: State, name: str, arguments: dict[str, Any]) -> tuple[str, bool]:
    """One tool call, in a worker thread: (text, is_error)."""
    if name in RESOLVE_NAMES:
        return ("refused: only the human answers decisions. Ask with ask_decision and go on with other work; the "
                "human answers with `gitmem decision answer D-NNNN --answer …` or by editing DECISIONS.md.", True)
    assert state.ws is not None and state.toolbox is not None
    if name not in listed():        # the Toolbox also holds a cycle's file and shell tools: not served here
        return f"unknown tool {name!r}: the tools are {', '.join(listed())}", True
    with state.lock:
        if name not in READERS:
            outcome = state.toolbox.call(name, arguments)      # the memory tools, with their own error results
            return outcome.text, outcome.is_error
        try:
            return READERS[name](state.ws, arguments), False
        except GitmemError as err:          # memory over its budget, a broken file: the agent reads why
            return f"{name}: {err}", True


@cache
def listed() -> tuple[str, ...]:
    from gitmem.sessions.protocol import tool_names

    return tool_names()


def _status(ws: Workspace, arguments: dict[str, Any]) -> str:
    from gitmem.views.status import collect

    return json.dumps(collect(ws).to_json(), indent=1, ensure_ascii=False)


READERS: dict[str, Callable[[Workspace, dict[str, Any]], str]] = {
    "context": lambda ws, arguments: context_text(ws, full=bool(arguments.get("full"))),
    "pending": lambda ws, arguments: pending_text(ws),
    "status": _status,
}


def context_text(ws: Workspace, *, full: bool) -> str:
    if not full:
        from gitmem.sessions.context import session_context

        return session_context(ws)
    from gitmem.cycle.budget import build_request

    request = build_request(ws, backend="command")
    return "\n\n".join(f"## {part.source}\n\n{part.text.rstrip()}" for part in request.parts) + "\n"


def pending_text(ws: Workspace) -> str:
    from gitmem.views.pending import pending

    path = ws.config.path("decisions")
    lines = [f"{item.id} · {item.title} ({item.age} old, {path}:{item.line})"
             + (f"\n    recommendation: {item.recommendation}" if item.recommendation else "")
             for item in pending(ws)]
    return "\n".join(lines) if lines else "No decisions are waiting."


def resource_text(ws: Workspace, uri: str) -> str:
    if uri == "gitmem://rules":
        return ws.read("rules") or f"({ws.config.path('rules')} is missing or empty)"
    if uri == "gitmem://now":
        from gitmem.memory import now
        from gitmem.workspace.tail import read_head, second_heading

        top = now.parse(read_head(ws.root, ws.config.path("now"), second_heading), max_blocks=1).top
        return top.render() if top is not None else "(no NOW block yet)"
    if uri == "gitmem://decisions/pending":
        return pending_text(ws)
    raise ValueError(f"unknown resource {uri}; the resources are {', '.join(r[0] for r in RESOURCES)}")


def roots_to_paths(roots: list[types.Root]) -> list[str]:
    """The local directories among the client's roots (file:// URIs)."""
    paths = []
    for root in roots:
        parsed = urlparse(str(root.uri))
        if parsed.scheme == "file":
            paths.append(unquote(parsed.path))
    return paths


def build_server(state: State) -> Server[Any]:
    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tool_list())

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        with anyio.move_on_after(WAIT_FOR_ROOT):
            await state.found.wait()
        if state.ws is None:
            return _result(state.failure or "gitmem: the memory repository was not found yet", True)
        text, is_error = await anyio.to_thread.run_sync(call, state, params.name, dict(params.arguments or {}))
        return _result(text, is_error)

    async def list_resources(ctx: Any, params: Any) -> types.ListResourcesResult:
        return types.ListResourcesResult(resources=[
            types.Resource(uri=uri, name=name, description=text, mime_type="text/markdown")
            for uri, name, text in RESOURCES])

    async def read_resource(ctx: Any, params: types.ReadResourceRequestParams) -> types.ReadResourceResult:
        with anyio.move_on_after(WAIT_FOR_ROOT):
            await state.found.wait()
        # A JSON-RPC error the client reads, not an exception the SDK logs with its traceback on stderr.
        if state.ws is None:
            raise MCPError(types.INVALID_PARAMS, state.failure or "the memory repository was not found")
        ws = state.ws
        try:
            text = await anyio.to_thread.run_sync(resource_text, ws, str(params.uri))
        except (ValueError, GitmemError) as err:
            raise MCPError(types.INVALID_PARAMS, str(err)) from None
        return types.ReadResourceResult(contents=[types.TextResourceContents(uri=str(params.uri), text=text,
                                                                             mime_type="text/markdown")])

    async def initialized(ctx: Any, params: Any) -> None:
        if state.found.is_set():
            return
        candidates: list[str | Path | None] = []
        capabilities = ctx.session.client_capabilities
        if capabilities is not None and capabilities.roots is not None:
            try:
                with warnings.catch_warnings():       # roots are deprecated by the newest protocol revision only
                    warnings.simplefilter("ignore")
                    listed = await ctx.session.list_roots()
                candidates += roots_to_paths(list(listed.roots))
            except Exception as err:                # a client that announces roots but cannot list them
                print(f"gitmem: mcp: the client's roots could not be listed ({err}); using the working directory",
                      file=sys.stderr)
        candidates.append(Path.cwd())
        from gitmem.sessions.locate import find_workspace

        try:
            ws = await anyio.to_thread.run_sync(find_workspace, candidates, state.workspace_name)
        except GitmemError as err:          # found, but its gitmem.yaml is broken
            ws, message = None, f"gitmem: mcp: {err}"
        else:
            tried = ", ".join(str(c) for c in candidates)
            message = (f"gitmem: mcp: not in a gitmem memory repository (looked in: {tried}); start it from the "
                       "repository, or pass --root DIR (run `gitmem init --agent …` there first)")
        if ws is not None:
            state.settle(ws)
            return
        state.settle(None, message)
        print(message, file=sys.stderr, flush=True)
        await anyio.sleep(GRACE)             # calls already waiting get the message as their error result
        if state.scope is not None:
            state.scope.cancel()

    server: Server[Any] = Server(SERVER, version=__version__, instructions=INSTRUCTIONS, on_list_tools=list_tools,
                                 on_call_tool=call_tool, on_list_resources=list_resources,
                                 on_read_resource=read_resource)
    server.add_notification_handler("notifications/initialized", types.NotificationParams, initialized)
    return server


def _result(text: str, is_error: bool) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)], is_error=is_error)


def serve(ws: Workspace | None, workspace_name: str | None = None) -> int:
    """Serve on stdin/stdout until the client disconnects. `ws` None: find the repository from the client's
    roots or the working directory. Returns the exit code: 0, or 2 when no memory repository was found."""
    state = State(workspace_name)
    if ws is not None:
        state.settle(ws)
    server = build_server(state)

    async def main() -> None:
        with anyio.CancelScope() as scope:
            state.scope = scope
            async with bounded_stdio() as (read_stream, write_stream):
                await server.run(read_stream, write_stream, server.create_initialization_options())

    anyio.run(main)
    return 2 if state.ws is None and state.failure else 0
