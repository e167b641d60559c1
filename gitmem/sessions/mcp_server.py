"""`gitmem mcp`: the memory tools over MCP (stdio), served by gitmem's own JSON-RPC peer (mcp_session).

One implementation, two transports: the writes are the `anthropic` backend's memory tools
(gitmem.agents.tools.Toolbox) with the same guards: no tool resolves a decision, timestamps come from the
clock, entries are rendered canonically and validated, and every write is numbered by the shared rule
(`Workspace.cycle_for`: GITMEM_CYCLE inside a runner cycle, else the session's own cycle). Outside a runner
cycle a LOG entry is marked `- Session: interactive`. Added for sessions: `context`, `pending`, `status`.
Resources: RULES, the top NOW block, the pending decisions. Writes are files only: committing stays with the
runner, or with the human's agent. Every call's arguments are checked against the schema the tool is listed
with (gitmem.agents.tool_input) before it runs.

The repository: `--root`, else the first root the client announces that is a memory repository, else the
working directory (many hosts start stdio servers from the home directory). Outside a memory repository
the server says so on stderr (and to the client) and exits with code 2.
"""
from __future__ import annotations

import json
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote, urlparse

from gitmem import __version__
from gitmem.agents import tool_input
from gitmem.errors import GitmemError
from gitmem.secrets import scrub
from gitmem.sessions.mcp_session import INVALID_PARAMS, RESOURCE_NOT_FOUND, Method, Params, Peer, RpcError
from gitmem.sessions.mcp_wire import note_line, wire, write_note
from gitmem.sessions.protocol import EXTRA_TOOLS, INSTRUCTIONS, RESOLVE_NAMES, RESOURCES, SERVER

if TYPE_CHECKING:
    from gitmem.agents.tools import Toolbox
    from gitmem.workspace import Workspace

# Start fast: an agent CLI waits for this server at every session start. Nothing here imports more than the
# standard library and gitmem's lean modules until the client is answered; the toolbox, the workspace and
# pygit2 load in the search for the repository after `initialized`, or at the first call.

# The protocol revisions served, newest first: a client's own revision if it is one of these, else the newest.
PROTOCOL_VERSIONS = ("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")
WAIT_FOR_ROOT = 15.0          # seconds a tool call waits for the repository to be found
# Seconds the search waits for the client's roots: well under WAIT_FOR_ROOT, so a client that announces roots
# and never lists them is served from the working directory, not told by its first call that nothing was found.
ROOTS_TIMEOUT = 5.0
GRACE = 1.0                   # seconds between saying "not a memory repository" and exiting
SEARCH_DELAY = 0.2            # seconds after `initialized` before the repository is searched for unasked
SHOWN_ROOTS = 3               # of the client's roots, named in the message when none is a memory repository


@dataclass
class State:
    """The server's one repository (found once) and its toolbox; tool calls run one at a time."""

    workspace_name: str | None
    ws: Workspace | None = None
    found: threading.Event = field(default_factory=threading.Event)
    failure: str = ""
    roots: bool = False               # the client announced that it lists roots
    toolbox: Toolbox | None = None
    search: Callable[[], None] = lambda: None    # starts the search for the repository (once)

    def settle(self, ws: Workspace | None, failure: str = "") -> None:
        self.ws, self.failure = ws, failure
        if ws is not None:
            from gitmem.agents.tools import Toolbox

            self.toolbox = Toolbox(ws, cycle=None, interactive=True)
        self.found.set()


@cache
def tool_list() -> tuple[dict[str, Any], ...]:
    """The tools as tools/list names them: name, description, inputSchema."""
    from gitmem.agents.schemas import MEMORY_TOOLS

    tools = [{"name": spec["name"], "description": spec["description"], "inputSchema": spec["input_schema"]}
             for spec in MEMORY_TOOLS]
    tools += [{"name": name, "description": text, "inputSchema": {"type": "object", "properties": props}}
              for name, text, props in EXTRA_TOOLS]
    return tuple(tools)


def call(state: State, name: str, arguments: Any) -> tuple[str, bool]:
    """One tool call, on the worker: (text, is_error)."""
    if name in RESOLVE_NAMES:
        return ("refused: only the human answers decisions. Ask with ask_decision and go on with other work; the "
                "human answers with `gitmem decision answer D-NNNN --answer …` or by editing DECISIONS.md.", True)
    assert state.ws is not None and state.toolbox is not None
    schema = next((tool["inputSchema"] for tool in tool_list() if tool["name"] == name), None)
    if schema is None:        # the Toolbox also holds a cycle's file and shell tools: not served here
        return f"unknown tool {name[:200]!r}: the tools are {', '.join(listed())}", True
    problem = tool_input.schema_problem(schema, arguments)
    if problem is not None:
        return f"{name}: bad arguments: {problem}", True
    given = tool_input.given(arguments)
    if name not in READERS:
        outcome = state.toolbox.call(name, given)      # the memory tools, with their own error results
        return outcome.text, outcome.is_error
    try:
        return READERS[name](state.ws, given), False
    except GitmemError as err:          # memory over its budget, a broken file: the agent reads why
        return f"{name}: {err}", True


@cache
def listed() -> tuple[str, ...]:
    from gitmem.sessions.protocol import tool_names

    return tool_names()


def _status(ws: Workspace, arguments: dict[str, Any]) -> str:
    from gitmem.views.status import collect_status

    return json.dumps(collect_status(ws).to_json(), indent=1, ensure_ascii=False)


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
        from gitmem.workspace.head_and_tail import read_head, second_heading

        top = now.parse(read_head(ws.root, ws.config.path("now"), second_heading), max_blocks=1).top
        return top.render() if top is not None else "(no NOW block yet)"
    if uri == "gitmem://decisions/pending":
        return pending_text(ws)
    raise ValueError(f"unknown resource {uri[:200]}; the resources are {', '.join(r[0] for r in RESOURCES)}")


def roots_to_paths(roots: Any) -> list[str]:
    """The local directories among the client's roots (file:// URIs); anything else is skipped."""
    paths = []
    for root in roots if isinstance(roots, list) else ():
        uri = root.get("uri") if isinstance(root, dict) else None
        parsed = urlparse(uri) if isinstance(uri, str) else None
        if parsed is not None and parsed.scheme == "file":
            paths.append(unquote(parsed.path))
    return paths


def initialize(state: State, params: Params) -> dict[str, Any]:
    """The handshake: the client's protocol revision when it is one of ours, else our newest."""
    asked = params.get("protocolVersion")
    capabilities = params.get("capabilities")
    state.roots = isinstance(capabilities, dict) and isinstance(capabilities.get("roots"), dict)
    return {"protocolVersion": asked if asked in PROTOCOL_VERSIONS else PROTOCOL_VERSIONS[0],
            "capabilities": {"tools": {"listChanged": False},
                             "resources": {"subscribe": False, "listChanged": False}},
            "serverInfo": {"name": SERVER, "version": __version__}, "instructions": INSTRUCTIONS}


def call_tool(state: State, params: Params) -> dict[str, Any]:
    name, arguments = params.get("name"), params.get("arguments")
    if not isinstance(name, str):
        raise RpcError(INVALID_PARAMS, "Invalid params: tools/call needs a tool name (a string)")
    state.search()
    state.found.wait(WAIT_FOR_ROOT)
    if state.ws is None:
        text, is_error = state.failure or "gitmem: the memory repository was not found yet", True
    else:
        text, is_error = call(state, name, {} if arguments is None else arguments)
    # Every answer is masked here, once: the tools quote memory, and history keeps secret values once written.
    return {"content": [{"type": "text", "text": scrub(text)}], "isError": is_error}


def list_tools(state: State) -> dict[str, Any]:
    """The tools; then the search for the repository starts, so its imports never delay this answer."""
    tools = list(tool_list())
    state.search()
    return {"tools": tools}


def list_resources(params: Params) -> dict[str, Any]:
    return {"resources": [{"uri": uri, "name": name, "description": text, "mimeType": "text/markdown"}
                          for uri, name, text in RESOURCES]}


def read_resource(state: State, params: Params) -> dict[str, Any]:
    uri = params.get("uri")
    if not isinstance(uri, str):
        raise RpcError(INVALID_PARAMS, "Invalid params: resources/read needs a uri (a string)")
    state.search()
    state.found.wait(WAIT_FOR_ROOT)
    if state.ws is None:
        raise RpcError(INVALID_PARAMS, state.failure or "the memory repository was not found")
    try:
        text = resource_text(state.ws, uri)
    except ValueError as err:
        raise RpcError(RESOURCE_NOT_FOUND, str(err)) from None
    except GitmemError as err:
        raise RpcError(INVALID_PARAMS, str(err)) from None
    return {"contents": [{"uri": uri, "mimeType": "text/markdown", "text": scrub(text)}]}


def find_repository(state: State, peer: Peer) -> None:
    """After `initialized`, on its own thread: the client's roots (when it lists them), then the working
    directory. Not found: say so, give waiting calls the reason for GRACE seconds, and end the server (2).
    The search always settles: a bug in it ends the server the same way, with its name, where a thread that died
    left every call waiting WAIT_FOR_ROOT seconds for "not found yet", and the server running on."""
    try:
        _search(state, peer)
    except Exception as err:
        if not state.found.is_set():
            _not_found(state, peer, note_line(f"the search for the memory repository failed: {type(err).__name__}: "
                                              f"{err}"))


def _search(state: State, peer: Peer) -> None:
    candidates: list[str | Path | None] = []
    if state.roots:
        try:
            candidates += roots_to_paths(peer.ask("roots/list", {}, timeout=ROOTS_TIMEOUT).get("roots"))
        except RpcError as err:          # a client that announces roots but cannot list them
            write_note(f"the client's roots could not be listed ({err}); using the working directory")
    roots = [str(candidate) for candidate in candidates]
    from gitmem.sessions.locate import find_workspace, working_directory

    cwd = working_directory()
    candidates.append(cwd)
    try:
        ws = find_workspace(candidates, state.workspace_name)
    except GitmemError as err:          # found, but its gitmem.yaml is broken
        ws, message = None, note_line(str(err))
    else:
        message = note_line(f"not in a gitmem memory repository (looked in: {looked_in(roots, cwd)}); "
                            "start it from the repository, or pass --root DIR (run `gitmem init --agent …` there "
                            "first)")
    if ws is not None:
        state.settle(ws)
        return
    _not_found(state, peer, message)


def _not_found(state: State, peer: Peer, message: str) -> None:
    """Say why on stderr and to the calls waiting, then end the server (2) GRACE seconds later."""
    state.settle(None, message)
    print(message, file=sys.stderr, flush=True)
    later(GRACE, lambda: peer.stop(2))      # calls already waiting get the message first


def looked_in(roots: list[str], cwd: Path | None) -> str:
    """Where the repository was looked for: the client's first SHOWN_ROOTS roots (it may announce thousands),
    then the working directory."""
    more = len(roots) - SHOWN_ROOTS
    return ", ".join([*roots[:SHOWN_ROOTS], *([f"and {more} more of the client's roots"] if more > 0 else []),
                      str(cwd) if cwd is not None else "the working directory (it is gone)"])


def later(seconds: float, action: Callable[[], None]) -> None:
    """`action` on its own thread after `seconds`; it never keeps the process alive."""
    timer = threading.Timer(seconds, action)
    timer.daemon = True
    timer.start()


def methods(state: State) -> dict[str, Method]:
    return {"initialize": Method(lambda params: initialize(state, params)),
            "ping": Method(lambda params: {}),
            "tools/list": Method(lambda params: list_tools(state)),
            "resources/list": Method(list_resources),
            "resources/templates/list": Method(lambda params: {"resourceTemplates": []}),
            "tools/call": Method(lambda params: call_tool(state, params), slow=True),
            "resources/read": Method(lambda params: read_resource(state, params), slow=True)}


def serve(ws: Workspace | None, workspace_name: str | None = None) -> int:
    """Serve on stdin/stdout until the client disconnects. `ws` None: find the repository from the client's
    roots or the working directory. Returns the exit code: 0, or 2 when no memory repository was found."""
    state = State(workspace_name)
    if ws is not None:
        state.settle(ws)
    finder: list[threading.Thread] = []
    with wire() as line:
        peer = Peer(line, methods(state), {})
        lock = threading.Lock()

        def search() -> None:
            with lock:
                if not state.found.is_set() and not finder:
                    finder.append(threading.Thread(target=find_repository, args=(state, peer), daemon=True))
                    finder[0].start()

        # The search starts at the first tools/list (after its answer is made) or call, or SEARCH_DELAY after
        # `initialized` for a client that asks neither: the client's own first request is never slowed by it.
        state.search = search
        peer.notifications["notifications/initialized"] = lambda params: later(SEARCH_DELAY, search)
        code = peer.serve()
        if code == 0:                 # the client left, maybe before the search ended: its verdict is the exit code
            search()
            for thread in finder:
                thread.join(2 * WAIT_FOR_ROOT)
    return 2 if state.ws is None and state.failure else code
