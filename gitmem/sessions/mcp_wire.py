"""The stdio wire under `gitmem mcp`: every line the client sends is bounded before the MCP SDK parses it.

The SDK's stdio transport hands each line to pydantic and drops any line it cannot parse without a word: a
request nested past pydantic's own recursion limit (about 260 levels), a line that is not JSON, and a line of
any length (it reads the whole line into memory first). JSON-RPC 2.0 says a message that cannot be parsed is
answered `{"jsonrpc": "2.0", "id": null, "error": {"code": -32700, ...}}`. So the wire reads lines itself, at
most MAX_LINE_BYTES each, parses each with the one bounded JSON reader (`gitmem.config.nesting.loads_json`,
the nesting bound every other reader uses), answers a line it refuses with that parse error, and passes only
the rest on. Nothing goes to stderr, and the server goes on with the next line.

The SDK skips its own claim of fd 0 and fd 1 when it is given streams, so `wire()` does that part too: while
serving, fd 0 reads the null device and fd 1 writes to stderr, so a child process or a stray print can
neither eat the client's requests nor tear a frame on the wire.
"""
from __future__ import annotations

import fcntl
import io
import json
import os
import threading
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from typing import Any

import anyio
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp.server.stdio import stdio_server

from gitmem.config.nesting import loads_json

MAX_LINE_BYTES = 1 << 20     # one JSON-RPC message: far beyond any tool call on memory files of bounded size
PARSE_ERROR = -32700         # JSON-RPC 2.0: invalid JSON was received
CHUNK = 1 << 16


def parse_error(reason: str) -> bytes:
    """The JSON-RPC answer to a line that could not be parsed: id null, since its id could not be read."""
    answer = {"jsonrpc": "2.0", "id": None, "error": {"code": PARSE_ERROR, "message": f"Parse error: {reason}"}}
    return json.dumps(answer, separators=(",", ":")).encode() + b"\n"


def refusal(line: bytes) -> str | None:
    """Why `line` is not passed on to the SDK, or None when it is a JSON document within the bounds."""
    try:
        loads_json(line.decode("utf-8", errors="replace"))    # decoded as the SDK decodes it
    except ValueError as err:           # json's own errors and TooDeep are both ValueErrors
        return str(err)
    return None


class WireOut(io.RawIOBase):
    """The wire's write side: whole lines only, one writer at a time (the SDK's replies and the parse errors)."""

    def __init__(self, fd: int) -> None:
        super().__init__()
        self._fd = fd
        self._lock = threading.Lock()
        self._partial = bytearray()      # the SDK's text layer may hand a long line over in pieces

    def writable(self) -> bool:
        return True

    def write(self, data: Any) -> int:
        chunk = bytes(data)
        self._partial += chunk
        end = self._partial.rfind(b"\n") + 1
        if end:
            self.send(bytes(self._partial[:end]))
            del self._partial[:end]
        return len(chunk)

    def send(self, lines: bytes) -> None:
        with self._lock:
            view = memoryview(lines)
            while view:
                view = view[os.write(self._fd, view):]


class WireIn(io.RawIOBase):
    """The wire's read side: the client's lines that parse within the bounds; the others are answered."""

    def __init__(self, fd: int, answer: Callable[[bytes], None]) -> None:
        super().__init__()
        self._fd, self._answer = fd, answer
        self._ready = bytearray()        # lines passed on, not yet read by the SDK
        self._line = bytearray()         # the line being received
        self._too_long = False           # the line being received is past the bound: skipped to its newline
        self._eof = False

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        while not self._ready and not self._eof:
            self._receive()
        size = min(len(buffer), len(self._ready))
        buffer[:size] = self._ready[:size]
        del self._ready[:size]
        return size

    def _receive(self) -> None:
        chunk = os.read(self._fd, CHUNK)
        if not chunk:
            self._eof = True
            if self._line or self._too_long:         # a last line without its newline
                self._finish()
            return
        start = 0
        while (newline := chunk.find(b"\n", start)) >= 0:
            self._take(chunk[start:newline])
            self._finish()
            start = newline + 1
        self._take(chunk[start:])

    def _take(self, part: bytes) -> None:
        if self._too_long:
            return
        if len(self._line) + len(part) > MAX_LINE_BYTES:
            self._too_long = True
            self._line.clear()                       # never held: the bound is on memory too
        else:
            self._line += part

    def _finish(self) -> None:
        line, too_long = bytes(self._line), self._too_long
        self._line.clear()
        self._too_long = False
        if not too_long and not line.strip():        # a blank line is no message: nothing to answer
            return
        reason = f"a line longer than {MAX_LINE_BYTES} bytes" if too_long else refusal(line)
        if reason is None:
            self._ready += line + b"\n"
        else:
            self._answer(parse_error(reason))


@contextmanager
def wire() -> Iterator[tuple[int, int]]:
    """(read fd, write fd) of the client's wire, with fd 0 on the null device and fd 1 on stderr meanwhile."""
    wire_in = fcntl.fcntl(0, fcntl.F_DUPFD_CLOEXEC, 3)
    wire_out = fcntl.fcntl(1, fcntl.F_DUPFD_CLOEXEC, 3)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    os.dup2(2, 1)
    try:
        yield wire_in, wire_out
    finally:       # the private descriptors stay open: a worker thread may still block reading one
        os.dup2(wire_in, 0)
        os.dup2(wire_out, 1)


Streams = tuple[MemoryObjectReceiveStream[Any], MemoryObjectSendStream[Any]]


@asynccontextmanager
async def bounded_stdio() -> AsyncIterator[Streams]:
    """`mcp.server.stdio.stdio_server()`, with every incoming line bounded and unparseable ones answered."""
    with wire() as (wire_in, wire_out):
        out = WireOut(wire_out)
        stdin = io.TextIOWrapper(io.BufferedReader(WireIn(wire_in, out.send)), encoding="utf-8", errors="replace")
        stdout = io.TextIOWrapper(io.BufferedWriter(out), encoding="utf-8")
        async with stdio_server(anyio.wrap_file(stdin), anyio.wrap_file(stdout)) as streams:
            yield streams
