"""An agent command's output, read as it comes and kept only as a bounded tail.

An agent is untrusted and may print without end (200 MB of output made an 820 MB runner when the whole of it
was buffered). Each stream is read by its own thread in chunks; only its last `limit` bytes are kept, and how
many bytes came in all is counted. What the runner reads from an agent's output (its JSON result, usage, last
words, stderr's last lines) sits at the end, so the tail is what it needs; a note says when the rest was dropped.
"""
from __future__ import annotations

import subprocess
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from typing import IO

CHUNK = 1 << 16
STDOUT_LIMIT = 4 << 20      # a `claude -p --output-format json` result, or the last of `codex exec --json`'s events
STDERR_LIMIT = 256 << 10    # its last lines go to Evidence and error messages


@dataclass
class OutputTail:
    """The last `limit` bytes of a stream, and how many bytes it carried."""

    limit: int
    total: int = 0
    chunks: deque[bytes] = field(default_factory=deque)
    kept: int = 0

    def feed(self, data: bytes) -> None:
        self.total += len(data)
        self.chunks.append(data)
        self.kept += len(data)
        while self.kept - len(self.chunks[0]) > self.limit:      # one byte more: is the tail's first a line's?
            self.kept -= len(self.chunks.popleft())

    @property
    def dropped(self) -> int:
        """How many bytes from the start are gone (0 when the whole stream is kept)."""
        return self.total - min(self.kept, self.limit)

    def text(self) -> str:
        """The kept bytes as text (undecodable bytes replaced); once bytes were dropped, from the first whole
        line on, so a line-by-line reader never sees half a line."""
        data = b"".join(self.chunks)
        if self.dropped:
            data = data[-(self.limit + 1):]
            data = data.split(b"\n", 1)[1] if b"\n" in data else b""
        return data.decode("utf-8", "replace")

    def note(self, name: str) -> str:
        """For Evidence: that the stream was cut, and how much it was; empty when it was kept whole."""
        if not self.dropped:
            return ""
        return f"its {name} was {self.total:,} bytes; the runner kept only the last {self.limit:,}"


def _drain(stream: IO[bytes], into: OutputTail) -> None:
    try:
        while data := stream.read1(CHUNK):      # type: ignore[attr-defined]
            into.feed(data)
    except (OSError, ValueError):        # closed under us when the run is given up
        pass


def _send(stream: IO[bytes], data: bytes) -> None:
    try:
        stream.write(data)
    except (BrokenPipeError, OSError, ValueError):     # an agent that does not read its prompt
        pass
    finally:
        try:
            stream.close()
        except OSError:
            pass


class Streams:
    """A started process's stdin fed with `prompt`, and its stdout and stderr read into bounded tails."""

    def __init__(self, process: subprocess.Popen[bytes], prompt: bytes) -> None:
        assert process.stdin is not None and process.stdout is not None and process.stderr is not None
        self.process = process
        self.out, self.err = OutputTail(STDOUT_LIMIT), OutputTail(STDERR_LIMIT)
        self.threads = [threading.Thread(target=_send, args=(process.stdin, prompt), daemon=True),
                        threading.Thread(target=_drain, args=(process.stdout, self.out), daemon=True),
                        threading.Thread(target=_drain, args=(process.stderr, self.err), daemon=True)]
        for thread in self.threads:
            thread.start()

    def wait(self, timeout: float) -> None:
        """Until the process has exited and both streams are at their end (what `communicate` waits for);
        subprocess.TimeoutExpired after `timeout` seconds."""
        deadline = time.monotonic() + timeout
        self.process.wait(timeout=max(0.0, timeout))
        for thread in self.threads[1:]:
            thread.join(max(0.0, deadline - time.monotonic()))
            if thread.is_alive():        # something the agent started still holds its output open
                raise subprocess.TimeoutExpired(self.process.args, timeout)

    def close(self) -> None:
        """After the process group is ended: the streams whose reader is done are closed. A reader still held
        by a process the agent left in another session is a daemon thread, and is not waited for (closing a
        stream under a blocked read would block too)."""
        for thread, stream in zip(self.threads[1:], (self.process.stdout, self.process.stderr), strict=True):
            thread.join(1.0)
            if not thread.is_alive() and stream is not None:
                stream.close()
