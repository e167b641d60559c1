"""Secrets out of every file a cycle commits (to the branch, a proposal or a salvage branch), whatever its size.

A file's bytes are streamed through `gitmem.secrets.redact_stream` into a temp file beside it, which replaces it
only when something was masked. A symlink whose target holds a secret is re-pointed at the masked target; a new
file whose name holds one is renamed to the masked name. Paths in the secrets allowlist (as the cycle's start
commit has it) are left alone. No git here: the caller says which paths, relative to the work tree.
"""
from __future__ import annotations

import codecs
import os
import stat
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from gitmem import secrets
from gitmem.confined import files
from gitmem.confined.walk import walk_tree
from gitmem.cycle import holes


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
    are left as they are. A file that cannot be masked (a full disk) is kept as it is: it is never lost. No read
    here grows with a file's apparent size, which the agent sets at will (`truncate -s 16T`): only its data is
    read, a chunk at a time, so even such a file is masked rather than held unread, since the cache carries it."""
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
    copied. Both passes read only the file's data, a run at a time and a chunk at a time (never the file whole:
    its apparent size is the agent's to choose), and the copy gets the same holes, so a sparse file stays sparse
    and a secret in it is still masked. A hole reads as zeros, which no token holds; a private key block, masked
    from its BEGIN line to its END line, may have a hole inside it, so a run that ends inside one passes that on
    to the next (`_Resumed`). Opened without blocking and read only if it is still a regular file: a FIFO the
    agent put in its place since it was looked at would hold the runner forever."""
    source_fd = os.open(full, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0))
    try:
        found = os.fstat(source_fd)
        if not stat.S_ISREG(found.st_mode):
            return False
        end = found.st_size
        codec = secrets.wide_codec(os.pread(source_fd, 4096, 0))
        if not _redact_data(source_fd, end, None, codec, values):
            return False
        fd, tmp = tempfile.mkstemp(prefix=f".{full.name[:40]}.", suffix=".scrub", dir=full.parent)
        try:
            try:
                changed = _redact_data(source_fd, end, fd, codec, values)
            finally:
                os.close(fd)
            if changed:
                os.chmod(tmp, mode)
                os.replace(tmp, full)
                return True
        finally:
            if os.path.exists(tmp):
                os.unlink(tmp)
    finally:
        os.close(source_fd)
    return False


def _redact_data(source: int, end: int, sink: int | None, codec: str | None, values: list[str]) -> bool:
    """Mask each run of data in `source`'s first `end` bytes into `sink` at the same offset (moved by what masking
    before it added or took away), leaving the holes between them unwritten, then set `sink`'s size; with no
    `sink`, only say whether anything would be masked. Each run is one stream, so the redaction's overlap keeps a
    secret cut between two reads whole. UTF-16 or UTF-32 text is masked as text: decoded, masked and encoded back
    a chunk at a time, after its byte order mark, which is copied as it is."""
    bom = {"utf-16": 2, "utf-32": 4}.get(codec or "", 0)   # a codec named without its order has a byte order mark
    head = os.pread(source, bom, 0)
    wide = codec and (codec + ("-le" if head.startswith(b"\xff\xfe") else "-be") if bom else codec)
    if sink is not None:
        holes.OffsetWriter(sink, 0).write(head)
    changed, shift, resumed = False, 0, b""
    for start, stop in holes.data_ranges(source, end):
        start = max(start, len(head))
        if start >= stop:
            continue
        writer = holes.OffsetWriter(sink, start + shift)
        reader = holes.RangeReader(source, start, stop)
        if wide:
            encoder = _Encoded(writer, wide)
            run = _Resumed(_Decoded(reader, wide), resumed)
            changed = secrets.redact_stream(run, encoder, values) or changed  # type: ignore[arg-type]
            encoder.finish()
        else:
            run = _Resumed(reader, resumed)
            changed = secrets.redact_stream(run, writer, values) or changed  # type: ignore[arg-type]
        resumed = secrets.KEY_RESUMED if secrets.ends_in_private_key(run.tail) else b""
        shift += writer.written - (stop - start)
    if sink is not None:
        os.ftruncate(sink, end + shift)
    return changed


class _Resumed:
    """A run of data as the redaction reads it: after `resumed` (secrets.KEY_RESUMED when the run before ended
    inside a private key block, so that the block's rest here is masked as the block's), with the last bytes read
    kept (`tail`) to tell whether this run ends inside one too."""

    def __init__(self, source: holes.RangeReader | _Decoded, resumed: bytes) -> None:
        self.source, self.resumed, self.tail = source, resumed, resumed

    def read(self, size: int = -1) -> bytes:
        if self.resumed:
            data, self.resumed = self.resumed, b""
            return data
        data = self.source.read(size)
        self.tail = (self.tail + data)[-secrets.KEY_BLOCK_BYTES:]
        return data


class _Decoded:
    """A UTF-16 or UTF-32 text read as UTF-8 (the form the patterns read), a chunk at a time."""

    def __init__(self, source: holes.RangeReader, codec: str) -> None:
        self.source, self.decoder = source, codecs.getincrementaldecoder(codec)("replace")

    def read(self, size: int = -1) -> bytes:
        while True:
            data = self.source.read(size if size > 0 else secrets.CHUNK)
            text = self.decoder.decode(data, final=not data)
            if text or not data:
                return text.encode("utf-8", "surrogatepass")


class _Encoded:
    """Masked UTF-8 written back in the text's own encoding; a character cut between two writes waits for its end."""

    def __init__(self, sink: holes.OffsetWriter, codec: str) -> None:
        self.sink, self.codec = sink, codec
        self.decoder = codecs.getincrementaldecoder("utf-8")("surrogatepass")

    def write(self, data: bytes) -> int:
        self.sink.write(self.decoder.decode(data).encode(self.codec, "surrogatepass"))
        return len(data)

    def finish(self) -> None:
        self.sink.write(self.decoder.decode(b"", final=True).encode(self.codec, "surrogatepass"))


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
