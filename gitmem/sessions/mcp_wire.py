"""The stdio wire under `gitmem mcp`: one JSON-RPC message a line, every line bounded before it is parsed.

MCP's stdio transport is newline-delimited JSON. A client's line is read here, at most MAX_LINE_BYTES of it
held (a longer line is skipped to its newline, never kept in memory), and parsed with the one bounded JSON
reader (`gitmem.config.nesting.loads_json`, the nesting bound every other reader uses). A line that cannot be
parsed is answered as JSON-RPC 2.0 says, `{"jsonrpc": "2.0", "id": null, "error": {"code": -32700, ...}}`,
and the server goes on with the next line. A blank line is no message.

What the server says about itself goes to stderr as one bounded line each (`note_line`), and once the client
has closed its end of the wire the replies are dropped, not raised in the thread that answers.

While serving, fd 0 reads the null device and fd 1 writes to stderr (`wire()`), so a child process or a stray
print can neither eat the client's requests nor tear a frame on the wire; the wire keeps private copies.
"""
from __future__ import annotations

import fcntl
import json
import os
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from gitmem.config.nesting import loads_json

MAX_LINE_BYTES = 1 << 20     # one JSON-RPC message: far beyond any tool call on memory files of bounded size
PARSE_ERROR = -32700         # JSON-RPC 2.0: invalid JSON was received
CHUNK = 1 << 16
MAX_SAID = 1000             # characters of one line on stderr: it quotes the client's roots and errors


def note_line(text: str) -> str:
    """`text` as the one line `gitmem: mcp: …` the server writes on stderr about itself. What it quotes is the
    client's (its roots, its error messages): a newline in it would forge a line of its own, an escape would
    act on the terminal, and a client's megabyte would be a megabyte here, so each is shown escaped and the
    line is cut at MAX_SAID characters. Masked as every message gitmem writes is (`gitmem.secrets.scrub`)."""
    from gitmem.memory.display import masked_printable  # only when there is something to say

    line = "gitmem: mcp: " + masked_printable(text).replace("\n", "\\u000a")
    return line if len(line) <= MAX_SAID else line[:MAX_SAID - 1] + "…"


def write_note(text: str) -> None:
    print(note_line(text), file=sys.stderr, flush=True)


def parse_error(reason: str) -> dict[str, Any]:
    """The JSON-RPC answer to a line that could not be parsed: id null, since its id could not be read."""
    return {"jsonrpc": "2.0", "id": None, "error": {"code": PARSE_ERROR, "message": f"Parse error: {reason}"}}


def message_or_refusal(line: bytes) -> tuple[Any, str | None]:
    """(the message, None), or (None, why it is refused) when `line` is not one JSON document within the
    bounds. Undecodable bytes are refused: they are no JSON text (RFC 8259 says UTF-8)."""
    try:
        return loads_json(line.decode("utf-8")), None
    except UnicodeDecodeError as err:
        return None, f"not UTF-8 ({err.reason} at byte {err.start})"
    except ValueError as err:           # json's own errors and TooDeep are both ValueErrors
        return None, str(err)


class Wire:
    """The client's lines in (parsed, or answered with a parse error) and whole messages out, one at a time."""

    def __init__(self, read_fd: int, write_fd: int) -> None:
        self._in, self._out = read_fd, write_fd
        self._lock = threading.Lock()
        self.broken = False          # the client stopped reading: what is left to send is dropped

    def send(self, message: dict[str, Any]) -> None:
        """One message, one line, written whole: the replies of several threads never interleave. Once the
        client has closed its end, nothing can reach it: the reply is dropped (said once on stderr), and the
        server goes on until the client closes stdin, as it would have, rather than lose the thread that sent."""
        data = json.dumps(message, separators=(",", ":")).encode()     # ASCII: a lone surrogate is escaped
        with self._lock:
            if self.broken:
                return
            view = memoryview(data + b"\n")
            try:
                while view:
                    view = view[os.write(self._out, view):]
            except OSError as err:
                self.broken = True
                write_note(f"the client stopped reading the replies ({err.strerror or err}): the rest are dropped")

    def messages(self) -> Iterator[Any]:
        """Each message the client sends, parsed, until it closes the wire; refused lines are answered here."""
        line = bytearray()
        too_long = False
        while chunk := os.read(self._in, CHUNK):
            start = 0
            while (newline := chunk.find(b"\n", start)) >= 0:
                too_long = too_long or len(line) + newline - start > MAX_LINE_BYTES
                if not too_long:
                    line += chunk[start:newline]
                yield from self._finish(bytes(line), too_long)
                line.clear()
                too_long = False
                start = newline + 1
            too_long = too_long or len(line) + len(chunk) - start > MAX_LINE_BYTES
            if too_long:
                line.clear()                      # never held: the bound is on memory too
            else:
                line += chunk[start:]
        if line or too_long:                      # a last line without its newline
            yield from self._finish(bytes(line), too_long)

    def _finish(self, line: bytes, too_long: bool) -> Iterator[Any]:
        if not too_long and not line.strip():
            return
        if too_long:
            self.send(parse_error(f"a line longer than {MAX_LINE_BYTES} bytes"))
            return
        message, reason = message_or_refusal(line)
        if reason is not None:
            self.send(parse_error(reason))
        else:
            yield message


def _private_copy(fd: int, name: str) -> int:
    try:
        return fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 3)
    except OSError as err:
        from gitmem.errors import GitmemError

        raise GitmemError(f"mcp: {name} is not open ({err.strerror}): an MCP client starts `gitmem mcp` with a "
                          "pipe on stdin and one on stdout") from None


@contextmanager
def wire() -> Iterator[Wire]:
    """The client's wire, with fd 0 on the null device and fd 1 on stderr meanwhile. A GitmemError (exit 2) when
    stdin or stdout is not open: no client started this server."""
    wire_in, wire_out = _private_copy(0, "stdin"), _private_copy(1, "stdout")
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    os.dup2(2, 1)
    try:
        yield Wire(wire_in, wire_out)
    finally:       # the private descriptors stay open: a worker thread may still block reading one
        os.dup2(wire_in, 0)
        os.dup2(wire_out, 1)
