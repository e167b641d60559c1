"""Read big memory blobs cheaply: derive them from a copy already in hand when their git id proves it.

libgit2 inflates a 70 MB LOG blob in about 1.5 s, and a check reads LOG and NOW twice (HEAD and index);
`verify` reads them twice per commit. But memory files change in known ways: LOG grows at the end and NOW
at the top. An older version is therefore, byte for byte, a prefix of a newer one, or the newer one with a
span after its title removed. Git names a blob by the SHA-1 of its bytes, so one hash over the candidate
(~70 ms for 70 MB) proves it is the blob and saves the inflate. When no candidate matches, the blob is
read as before: the bytes a check sees are always exactly the blob's.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable

import pygit2

from gitmem.gitio.snapshots import BLOB_MODES, Snapshot

# Below this size reading the blob is cheaper than hashing candidates.
MIN_SIZE = 256 * 1024


def blob_id(*parts: bytes | memoryview) -> str:
    """The git blob id (hex) of `parts` concatenated."""
    if len(parts) == 1 and isinstance(parts[0], bytes):     # libgit2 hashes it: no hashlib import (below)
        return str(pygit2.hash(parts[0]))
    import hashlib  # only for big files: importing it costs the pre-commit path milliseconds

    digest = hashlib.sha1(b"blob %d\x00" % sum(len(p) for p in parts))
    for part in parts:
        digest.update(part)
    return digest.hexdigest()


def _starts_with_blob(oid: str, size: int, newer: bytes) -> bool:
    """Whether `newer`'s first `size` bytes are the blob `oid` (LOG: the older version is a prefix): one hash."""
    return size <= len(newer) and blob_id(memoryview(newer)[:size]) == oid


def _top_cut(size: int, newer: bytes) -> int | None:
    """Where the span that `newer` inserted on top starts (after its title, at its first block) when the older
    version of `size` bytes would be `newer` without it; None when there is no such span."""
    cut = newer.find(b"\n## ")
    return cut + 1 if size < len(newer) and cut >= 0 else None


def _top_removed(oid: str, size: int, newer: bytes) -> bytes | None:
    """The blob `oid` as `newer` with a span after its title removed (NOW: the newer one has blocks inserted on
    top), when that hashes to `oid`; else None."""
    cut = _top_cut(size, newer)
    if cut is None:
        return None
    view = memoryview(newer)
    parts = (view[:cut], view[cut + len(newer) - size:])
    return b"".join(parts) if blob_id(*parts) == oid else None


def _top_first(size: int, newer: bytes) -> bool:
    """Whether the span removed from the top would end where a block begins, as blocks inserted on top do (NOW):
    that candidate is hashed first. A LOG's append puts that end anywhere, so its prefix comes first. The order
    costs hashes only; the blob id decides what is derived."""
    cut = _top_cut(size, newer)
    return cut is not None and newer.startswith(b"## ", cut + len(newer) - size)


def derive(oid: str, size: int, newer: bytes, *, starts: Callable[[], bool] | None = None) -> bytes | None:
    """The blob `oid` of `size` bytes, rebuilt from `newer` when a candidate hashes to `oid`; else None.
    `starts()` answers `_starts_with_blob` when the caller keeps that answer: each candidate is hashed once."""
    top_first = _top_first(size, newer)
    found = _top_removed(oid, size, newer) if top_first else None
    if found is not None:
        return found
    if starts() if starts is not None else _starts_with_blob(oid, size, newer):
        return newer if size == len(newer) else newer[:size]
    return None if top_first else _top_removed(oid, size, newer)


class DerivedSnapshot(Snapshot):
    """`base` with big files rebuilt from a newer copy when provably identical (see the module doc)."""

    def __init__(self, base: Snapshot, paths: Iterable[str], source: Callable[[str], bytes | None],
                 size_of: Callable[[str], int | None]) -> None:
        self._base = base
        self._source = source
        self._size_of = size_of
        self._prefixes: dict[str, tuple[bytes, int | None]] = {}
        # Whether the newer copy starts with the blob, by path: a check both proves a file's prefix and reads it
        # (`derive`), and would otherwise hash that candidate on each way in.
        self._starts: dict[str, tuple[bytes, bool]] = {}
        oids = {path: base.oid(path) for path in paths}
        # The loader is `read` below, not a bound method stored on self: that would be a reference cycle,
        # and `verify` would keep every commit's multi-megabyte copy until the cyclic GC happened to run.
        super().__init__(base.label, base.read, lambda path: oids[path] if path in oids else base.oid(path),
                         base.mode, base.entries_in)

    def read(self, path: str) -> bytes | None:
        if path not in self._cache:
            self._cache[path] = self._load(path)
        return self._cache[path]

    def _big(self, path: str) -> tuple[str, int, bytes] | None:
        if self.mode(path) not in (None, *BLOB_MODES):      # a link or a submodule is never read as a file
            return None
        oid = self.oid(path)
        size = self._size_of(oid) if oid is not None else None
        if oid is None or size is None or size < MIN_SIZE:
            return None
        newer = self._source(path)
        return (oid, size, newer) if newer is not None else None

    def _load(self, path: str) -> bytes | None:
        big = self._big(path)
        found = derive(*big, starts=lambda: self._starts_with(path, *big)) if big is not None else None
        return found if found is not None else self._base.read(path)

    def _starts_with(self, path: str, oid: str, size: int, newer: bytes) -> bool:
        known = self._starts.get(path)
        if known is None or known[0] is not newer:
            known = (newer, _starts_with_blob(oid, size, newer))
            self._starts[path] = known
        return known[1]

    def prefix_length(self, path: str, newer: bytes) -> int | None:
        """One hash over `newer`'s start proves the prefix; the old bytes are never copied."""
        known = self._prefixes.get(path)
        if known is not None and known[0] is newer:
            return known[1]
        size = self._prove_prefix(path, newer)
        self._prefixes[path] = (newer, size)
        return size

    def _prove_prefix(self, path: str, newer: bytes) -> int | None:
        big = self._big(path)
        if big is not None and big[2] is newer and not _top_first(big[1], newer) and self._starts_with(path, *big):
            return big[1]
        # Blocks inserted on top (NOW): reading derives the older version with the one hash that proves it.
        return super().prefix_length(path, newer)


def derived(base: Snapshot, paths: Iterable[str], source: Callable[[str], bytes | None],
            size_of: Callable[[str], int | None]) -> Snapshot:
    """`base` with big files rebuilt from `source(path)` (a newer copy) when provably identical.

    `size_of(oid)` gives a blob's size without reading it.
    """
    return DerivedSnapshot(base, paths, source, size_of)
