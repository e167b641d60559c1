"""A file as the data it holds: where a sparse file's data lies (SEEK_DATA/SEEK_HOLE), a reader bounded to one
run of data, and a writer that puts bytes at an offset. A hole (an unwritten range: zeros that take no disk) is
neither read nor written, so an agent's `truncate -s 16T` costs what its data costs, not its apparent size.
Where the system cannot tell holes, the whole file is one run of data.
"""
from __future__ import annotations

import errno
import os
from collections.abc import Iterator


def data_ranges(fd: int, end: int) -> Iterator[tuple[int, int]]:
    """(start, stop) of each run of data in the first `end` bytes of `fd`, in order. Runs that touch are given as
    one, so a reader of a run never loses what straddles the seam between them."""
    at, run = 0, None
    while at < end:
        start, stop = _extent(fd, at, end)
        if start >= end:
            break
        stop = stop if stop > start else end            # never stuck: a run that claims no bytes is the rest
        if run is not None and run[1] == start:
            run = (run[0], stop)
        else:
            if run is not None:
                yield run
            run = (start, stop)
        at = stop
    if run is not None:
        yield run


def _extent(fd: int, at: int, end: int) -> tuple[int, int]:
    """Where the next data starts at or after `at`, and where the hole after it starts."""
    seek_data, seek_hole = getattr(os, "SEEK_DATA", None), getattr(os, "SEEK_HOLE", None)
    if seek_data is None or seek_hole is None:
        return at, end
    try:
        data_at = os.lseek(fd, at, seek_data)
    except OSError as err:                 # ENXIO: only a hole is left; anything else: holes unknown
        return (end, end) if err.errno == errno.ENXIO else (at, end)
    try:
        return min(data_at, end), min(os.lseek(fd, data_at, seek_hole), end)
    except OSError:
        return data_at, end


class RangeReader:
    """The bytes of `fd` from `start` to `stop`, read without moving the descriptor; never more than asked."""

    def __init__(self, fd: int, start: int, stop: int) -> None:
        self.fd, self.at, self.stop = fd, start, stop

    def read(self, size: int = -1) -> bytes:
        if self.at >= self.stop or size == 0:
            return b""
        want = self.stop - self.at if size < 0 else min(size, self.stop - self.at)
        data = os.pread(self.fd, want, self.at)
        self.at = self.at + len(data) if data else self.stop      # the file shrank: its end came early
        return data


class OffsetWriter:
    """Writes to `fd` from offset `at` on, counting what it wrote; with no `fd`, only counts (the pass that asks
    whether anything would change)."""

    def __init__(self, fd: int | None, at: int) -> None:
        self.fd, self.at, self.written = fd, at, 0

    def write(self, data: bytes) -> int:
        view = memoryview(data)
        while self.fd is not None and view:
            done = os.pwrite(self.fd, view, self.at + self.written)
            view, self.written = view[done:], self.written + done
        if self.fd is None:
            self.written += len(data)
        return len(data)
