"""A snapshot is the memory files as they stand in one place (a commit, the index, the work tree).

Contents load lazily and are cached; `oid` lets a check skip a file that did not change.
"""
from __future__ import annotations

from collections.abc import Callable


class Snapshot:
    def __init__(self, label: str, loader: Callable[[str], bytes | None],
                 oids: dict[str, str | None] | None = None) -> None:
        self.label = label
        self._loader = loader
        self._oids = oids or {}
        self._cache: dict[str, bytes | None] = {}

    def read(self, path: str) -> bytes | None:
        if path not in self._cache:
            self._cache[path] = self._loader(path)
        return self._cache[path]

    def oid(self, path: str) -> str | None:
        """The blob id when known (commit, index); None for the work tree or a missing file."""
        return self._oids.get(path)

    def exists(self, path: str) -> bool:
        return self.read(path) is not None

    def prefix_length(self, path: str, newer: bytes) -> int | None:
        """len(this file) when it is, byte for byte, the start of `newer`; else None.

        Snapshots that can prove it without materialising the file (gitmem.snapread) override this:
        an append-only LOG at 100x scale is 75 MB, and copying it costs more than checking the append.
        """
        data = self.read(path)
        return len(data) if data is not None and newer.startswith(data) else None

    @classmethod
    def from_dict(cls, label: str, files: dict[str, bytes]) -> Snapshot:
        return cls(label, files.get)


def same_blob(old: Snapshot | None, new: Snapshot, path: str) -> bool:
    if old is None:
        return False
    old_oid, new_oid = old.oid(path), new.oid(path)
    return old_oid is not None and old_oid == new_oid
