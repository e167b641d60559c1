"""The JSON-RPC 2.0 side of `gitmem mcp`: requests, notifications and replies over the wire, stdlib only.

Why not the MCP SDK: an agent CLI waits for this server at every session start (Codex with `required = true`,
Gemini CLI's discovery), and importing the SDK alone took a second (pydantic models of two protocol revisions,
asyncio, the HTTP transports, auth, opentelemetry) where the whole answer needs tens of milliseconds. gitmem
serves one small surface: the handshake, ping, tools, resources, cancellation and one request of its own
(roots/list). The SDK's own client proves this side against the protocol in the tests.

Threads: the reader answers the quick requests at once (initialize, ping, the lists), so they are never held
up; requests that touch the repository (tools/call, resources/read) run on one worker, in arrival order, each
bounded by what its arguments may be (gitmem.agents.tool_input). `notifications/cancelled` drops a request
still waiting, and the answer of one already running: a receiver does not answer a cancelled request.
"""
from __future__ import annotations

import queue
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from gitmem.sessions.mcp_wire import Wire, write_note

# JSON-RPC 2.0's error codes, and MCP's own for a resource that is not there.
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
RESOURCE_NOT_FOUND = -32002

Params = dict[str, Any]
Ident = str | int


class RpcError(Exception):
    """A request answered with a JSON-RPC error."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code, self.message = code, message


@dataclass(frozen=True)
class Method:
    """How a request is answered: `handler(params)` returns the result object, or raises RpcError. A `slow`
    one runs on the worker, after the slow requests before it."""

    handler: Callable[[Params], dict[str, Any]]
    slow: bool = False


class Peer:
    """One client on one wire: serve() answers until the client closes the wire or stop() is called."""

    def __init__(self, wire: Wire, methods: dict[str, Method],
                 notifications: dict[str, Callable[[Params], None]]) -> None:
        self.wire, self.methods, self.notifications = wire, methods, notifications
        self._work: queue.Queue[tuple[Ident, Method, Params] | None] = queue.Queue()
        self._open: set[Ident] = set()           # slow requests waiting or running
        self._cancelled: set[Ident] = set()
        self._lock = threading.Lock()
        self._asked: dict[str, tuple[threading.Event, list[dict[str, Any]]]] = {}
        self._count = 0
        self._done = threading.Event()
        self._code = 0
        self._closed = False                     # the client closed the wire

    def serve(self) -> int:
        """Answer until the wire closes (then finish the requests already received) or stop(); the exit code."""
        threading.Thread(target=self._read, name="mcp-read", daemon=True).start()
        threading.Thread(target=self._work_loop, name="mcp-work", daemon=True).start()
        self._done.wait()
        return self._code

    def stop(self, code: int) -> None:
        self._code = code
        self._done.set()

    def ask(self, method: str, params: Params, *, timeout: float) -> dict[str, Any]:
        """A request of ours to the client; its result, or RpcError (its error, or no answer in `timeout`)."""
        with self._lock:
            if self._closed:
                raise RpcError(INTERNAL_ERROR, f"{method}: the client has closed the wire")
            self._count += 1
            ident = f"gitmem-{self._count}"
            answered, slot = self._asked[ident] = (threading.Event(), [])
        self.wire.send({"jsonrpc": "2.0", "id": ident, "method": method, "params": params})
        answered.wait(timeout)
        with self._lock:
            self._asked.pop(ident, None)
        if not slot:
            raise RpcError(INTERNAL_ERROR, f"no answer to {method} in {timeout:g} s, or the wire closed")
        reply = slot[0]
        error = reply.get("error")
        if error is not None or not isinstance(reply.get("result"), dict):
            message = error.get("message") if isinstance(error, dict) else None
            raise RpcError(INTERNAL_ERROR, f"{method} failed: {message or 'no result'}")
        result: dict[str, Any] = reply["result"]
        return result

    # -- reading ---------------------------------------------------------------------------------
    def _read(self) -> None:
        try:
            for message in self.wire.messages():
                try:
                    self._take(message)
                except Exception as err:     # a bug in reading one message must not end the session
                    write_note(f"unexpected error on a message: {type(err).__name__}: {err}")
        except OSError as err:                  # the wire broke: as good as closed
            write_note(f"the wire failed: {err}")
        with self._lock:                        # no answer can come now: our own requests stop waiting
            self._closed = True
            for answered, _ in self._asked.values():
                answered.set()
        self._work.put(None)

    def _take(self, message: Any) -> None:
        if not isinstance(message, dict):
            what = "a batch (a JSON array): batches are not supported" if isinstance(message, list) else \
                "not a JSON object"
            self._error(None, INVALID_REQUEST, f"Invalid request: {what}")
            return
        if "method" not in message:
            self._answered(message)
            return
        method, params = message.get("method"), message.get("params")
        params = {} if params is None else params
        well_formed = message.get("jsonrpc") == "2.0" and isinstance(method, str)
        if "id" not in message:              # a notification: never answered, not even when malformed
            if well_formed and isinstance(params, dict):
                self._notified(str(method), params)
            return
        ident = message["id"]
        if isinstance(ident, bool) or not isinstance(ident, str | int):
            self._error(None, INVALID_REQUEST, "Invalid request: an id is a string or an integer")
        elif not well_formed:
            self._error(ident, INVALID_REQUEST, 'Invalid request: needs "jsonrpc": "2.0" and a method name')
        elif not isinstance(params, dict):
            self._error(ident, INVALID_PARAMS, "Invalid params: params must be an object")
        elif (found := self.methods.get(str(method))) is None:
            self._error(ident, METHOD_NOT_FOUND, f"Method not found: {method}")
        elif found.slow:
            with self._lock:
                self._open.add(ident)
            self._work.put((ident, found, params))
        else:
            self._run(ident, found, params)

    def _notified(self, method: str, params: Params) -> None:
        if method == "notifications/cancelled":
            target = params.get("requestId")
            with self._lock:
                if isinstance(target, str | int) and target in self._open:
                    self._cancelled.add(target)
            return
        handler = self.notifications.get(method)
        if handler is not None:             # an unknown notification is ignored, as JSON-RPC says
            handler(params)

    def _answered(self, reply: dict[str, Any]) -> None:
        """A reply to one of our requests; a reply we did not ask for is dropped."""
        ident = reply.get("id")
        with self._lock:
            waiting = self._asked.get(ident) if isinstance(ident, str) else None
        if waiting is not None:
            waiting[1].append(reply)
            waiting[0].set()

    # -- answering -------------------------------------------------------------------------------
    def _work_loop(self) -> None:
        while (item := self._work.get()) is not None:
            ident, method, params = item
            if not self._is_cancelled(ident):
                self._run(ident, method, params)
            with self._lock:
                self._open.discard(ident)
                self._cancelled.discard(ident)
        self.stop(self._code)

    def _is_cancelled(self, ident: Ident) -> bool:
        with self._lock:
            return ident in self._cancelled

    def _run(self, ident: Ident, method: Method, params: Params) -> None:
        try:
            result = method.handler(params)
        except RpcError as err:
            self._error(ident, err.code, err.message)
            return
        except Exception as err:     # a bug answers this request with its name; the server goes on
            self._error(ident, INTERNAL_ERROR, f"Internal error: {type(err).__name__}: {err}")
            return
        if not self._is_cancelled(ident):
            self.wire.send({"jsonrpc": "2.0", "id": ident, "result": result})

    def _error(self, ident: Ident | None, code: int, message: str) -> None:
        """Every error answer, masked as every result is: a message may quote what the client sent (an unknown
        uri, a method) or what a bug was working on."""
        from gitmem.secrets import scrub  # only when there is an error to answer

        message = scrub(message)
        if ident is None or not self._is_cancelled(ident):
            self.wire.send({"jsonrpc": "2.0", "id": ident, "error": {"code": code, "message": message}})
