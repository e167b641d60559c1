"""Secrets out of every file a cycle commits (to the branch, a proposal or a salvage branch), whatever its size.

A file's bytes are streamed through `gitmem.secrets.redact_stream` into a temp file beside it, which replaces it
only when something was masked. A symlink whose target holds a secret is re-pointed at the masked target; a new
file whose name holds one is renamed to the masked name. Paths in the secrets allowlist (as the cycle's start
commit has it) are left alone. No git here: the caller says which paths, relative to the work tree.
"""
from __future__ import annotations

import errno
import io
import os
import stat
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

from gitmem import secrets
from gitmem.confined import files
from gitmem.confined.walk import walk_tree


@dataclass
class Scrubbed:
    paths: list[str]                                   # the paths, with any renamed one under its new name
    notes: list[str] = field(default_factory=list)     # one line per change, for LOG Evidence


def scrub_paths(root: Path, paths: list[str], *, allow: secrets.Allowlist | None = None,
                tracked: Callable[[str], bool] = lambda path: False) -> Scrubbed:
    """Mask secrets in the files at `paths` in place; `tracked(path)` says the name is already in history."""
    allow = allow or secrets.Allowlist()
    values = secrets.env_values()
    result = Scrubbed([])
    for rel in paths:
        if allow.allows(rel):
            result.paths.append(rel)
            continue
        full = root / rel
        try:
            info = os.lstat(full)
        except OSError:
            result.paths.append(rel)            # deleted: nothing to scrub
            continue
        if stat.S_ISLNK(info.st_mode):
            target = os.readlink(full)
            if secrets.holds_secret(target):
                os.unlink(full)
                os.symlink(secrets.redact(target, values), full)
                result.notes.append(f"removed a secret value from the target of link {_shown(rel)}")
        elif stat.S_ISREG(info.st_mode) and _scrub_file(full, values, stat.S_IMODE(info.st_mode)):
            result.notes.append(f"removed a secret value from {_shown(rel)} before committing")
        result.paths.append(_rename(root, rel, result) if not tracked(rel) else rel)
    return result


def scrub_held(top: Path, skip: str) -> bool:
    """Mask secrets in place in a file, or in every file under a folder, that the runner holds out of its commits
    (gitmem.cycle.oversize); True when anything was masked. Held files stay local, but a scheduled run's cache
    carries `.git/gitmem` to the next runner, where a pull request's workflow can restore it. Links are neither
    followed nor changed; folders named `skip` (a held repository's git directory, whose objects are compressed)
    are left as they are. A file that cannot be masked (a full disk) is kept as it is: it is never lost."""
    values = secrets.env_values()
    masked = False
    for path in _held_files(top, skip):
        try:
            info = os.lstat(path)
            if stat.S_ISREG(info.st_mode):
                masked = _scrub_file(path, values, stat.S_IMODE(info.st_mode)) or masked
        except OSError:
            continue
    return masked


def _held_files(top: Path, skip: str) -> Iterator[Path]:
    if not os.path.isdir(top) or os.path.islink(top):
        yield top
        return
    for folder, dirs, names in walk_tree(top):
        dirs[:] = [name for name in dirs if name != skip]
        yield from (Path(folder, name) for name in names)


def _scrub_file(full: Path, values: list[str], mode: int) -> bool:
    """Mask `full` into a fresh temp file beside it (never a name the agent could have planted), renamed over it
    only when something was masked; the file itself is opened without following a link. A first pass writes
    nothing: a clean file (nearly every one) costs no copy, so an agent's huge file on a full disk is read, not
    copied."""
    source_fd = os.open(full, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    with os.fdopen(source_fd, "rb") as source:
        codec = secrets.wide_codec(source.read(4096))
        source.seek(0)
        if codec is None and not secrets.redact_stream(_DataOnly(source_fd), _Discard(), values):  # type: ignore[arg-type]
            return False
        source.seek(0)
        fd, tmp = tempfile.mkstemp(prefix=f".{full.name[:40]}.", suffix=".scrub", dir=full.parent)
        try:
            with os.fdopen(fd, "wb") as sink:
                changed = (_redact_wide(source, sink, codec, values) if codec is not None
                           else secrets.redact_stream(source, sink, values))
            if changed:
                os.chmod(tmp, mode)
                os.replace(tmp, full)
                return True
        finally:
            if os.path.exists(tmp):
                os.unlink(tmp)
    return False


class _DataOnly:
    """A file read as the data it holds, for the pass that only asks whether it holds a secret: each hole (a
    sparse file's unwritten range: zeros that take no disk, and no secret) reads as one NUL, which no secret
    holds either, so none is found across it. An agent's `truncate -s 16T` is then read in an instant, not for
    hours. Reading stops at the size the file had when it was opened. Where the system cannot tell holes
    (SEEK_DATA), the whole file is data."""

    def __init__(self, fd: int) -> None:
        self.fd, self.at, self.end = fd, 0, os.fstat(fd).st_size

    def read(self, size: int = -1) -> bytes:
        size = size if size > 0 else secrets.CHUNK
        if self.at >= self.end:
            return b""
        data_at, hole_at = self._extent()
        if data_at > self.at:                  # a hole first: one NUL for it
            self.at = data_at
            return b"\0"
        data = os.pread(self.fd, min(size, hole_at - self.at), self.at)
        self.at = self.at + len(data) if data else self.end
        return data

    def _extent(self) -> tuple[int, int]:
        """Where the next data starts at or after `at`, and where the hole after it starts."""
        seek_data, seek_hole = getattr(os, "SEEK_DATA", None), getattr(os, "SEEK_HOLE", None)
        if seek_data is None or seek_hole is None:
            return self.at, self.end
        try:
            data_at = os.lseek(self.fd, self.at, seek_data)
        except OSError as err:                 # ENXIO: only a hole is left; anything else: holes unknown
            return (self.end, self.end) if err.errno == errno.ENXIO else (self.at, self.end)
        try:
            return min(data_at, self.end), min(os.lseek(self.fd, data_at, seek_hole), self.end)
        except OSError:
            return data_at, self.end


class _Discard(io.BytesIO):
    """A sink that keeps nothing: for the pass that only asks whether a file holds a secret."""

    def write(self, data: bytes) -> int:      # type: ignore[override]
        return len(data)


def _redact_wide(source: BinaryIO, sink: BinaryIO, codec: str, values: list[str]) -> bool:
    """UTF-16 or UTF-32 text: masked as text, written back in its own encoding (and byte order mark)."""
    data = source.read()
    text = data.decode(codec, "replace")
    clean = secrets.redact(text, values)
    if clean == text:
        return False
    bom = {"utf-16": 2, "utf-32": 4}.get(codec, 0)       # a codec named without its order has a byte order mark
    order = "-le" if data.startswith(b"\xff\xfe") else "-be"
    sink.write(data[:bom] + clean.encode(codec + order if bom else codec))
    return True


def _rename(root: Path, rel: str, result: Scrubbed) -> str:
    """A new file whose name holds a secret moves to the masked name (a free one)."""
    if not secrets.holds_secret(rel):
        return rel
    masked = secrets.scrub(rel)
    if not files.plain_way(root, masked):
        masked = masked.replace("/", "__")           # a link or file sits where a folder would go: stay at the top
    target, number = masked, 1
    while os.path.lexists(root / target):
        number += 1
        target = f"{masked}-{number}"
    (root / target).parent.mkdir(parents=True, exist_ok=True)
    os.rename(root / rel, root / target)
    parent = (root / rel).parent
    while parent != root:
        try:
            os.rmdir(parent)
        except OSError:
            break
        parent = parent.parent
    result.notes.append(f"renamed a file whose name held a secret to {target}")
    return target


def _shown(rel: str) -> str:
    return secrets.scrub(rel)
