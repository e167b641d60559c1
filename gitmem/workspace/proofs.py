"""Proofs a process leaves for the next one, kept outside the repository.

Anything under `.git/gitmem/` the agent can write (it is the same checkout), so a verdict kept there is a claim
that must be checked again. What a check concluded may instead be kept under the user's cache directory
(`gitio.cache_home`), which the sandboxed agent, whose HOME is private, cannot reach; without the sandbox it is as
strong as the refs backup's folder (the same uid can find it). One JSON document per work tree and kind; reading
one that is missing, unreadable, nested past any bound or no object gives {}: no proof, so the work is done again.
"""
from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any

from gitmem import gitio
from gitmem.config.nesting import loads_json


def proofs_file(root: Path, kind: str) -> Path:
    """Where the proofs of `kind` for the work tree at `root` are kept."""
    ident = hashlib.sha256(str(root.resolve()).encode()).hexdigest()[:16]
    return gitio.cache_home(os.environ) / kind / f"{ident}.json"


def read_proofs(root: Path, kind: str, *, max_bytes: int) -> dict[str, Any]:
    """The proofs of `kind` kept for this work tree; {} when there are none to trust, or the document is larger
    than `max_bytes` (what its writer can produce). Opened as a trusted file is (gitmem.confined.files): a link,
    a FIFO or a device there is refused before it is opened to block, and no more than the bound is read."""
    from gitmem.confined import files

    where = proofs_file(root, kind)
    try:
        handle = files.open_read(where.parent, where.name)
        if handle is None:
            return {}
        with handle:
            data = handle.read(max_bytes + 1)
        found = loads_json(data) if len(data) <= max_bytes else None
    except (OSError, ValueError, files.FileRefused):
        return {}
    return found if isinstance(found, dict) else {}


def keep_proofs(root: Path, kind: str, proofs: dict[str, Any]) -> None:
    """Replace the proofs of `kind` whole (a reader never sees half a document). A cache: failing to write it
    only costs the next process the work it would have saved."""
    import json  # only where proofs are written

    where = proofs_file(root, kind)
    try:
        where.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        partial = where.with_name(f"{where.name}.{os.getpid()}.partial")
        partial.write_text(json.dumps(proofs), encoding="utf-8")
        os.replace(partial, where)
    except OSError:
        pass
