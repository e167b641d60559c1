"""The record an export points back to: the memory it was exported from, named in the marker every exported file
opens with (`<!-- exported by gitmem from RECORD … -->`).

An export's `[gitmem: L-0003]` tags name the entries of that record. Importing it back into the same memory adds
nothing; imported into another repository, or another workspace of this one, the same IDs name other entries
there, so its facts are imported as any other.
"""
from __future__ import annotations

import re

from gitmem.workspace import Workspace

MARKER = "<!-- exported by gitmem"
# The marker line as an export writes it, sealed (` · sha256 <16 hex>`: gitmem.interop.export) or not.
_MARKER_RE = re.compile(f"^{re.escape(MARKER)} from (.*?)(?: · sha256 [0-9a-f]{{16}})? -->$", re.MULTILINE)


def record_of(ws: Workspace) -> str:
    """How an export names the memory it comes from: the repository's `origin` URL, else its directory, and the
    workspace when it is not the top-level memory. Masked as every output is: the marker is written so."""
    return _named(ws, _origin_url(ws) or str(ws.root))


def records_of(ws: Workspace) -> set[str]:
    """Every name an export of this memory carries: by its `origin` URL (a clone elsewhere shares it) and by its
    directory (an export made before the repository had an `origin`)."""
    return {_named(ws, where) for where in (_origin_url(ws), str(ws.root)) if where}


def _origin_url(ws: Workspace) -> str | None:
    from gitmem import gitio

    url = gitio.config_value(ws.repo, "remote.origin.url")
    return re.sub(r"//[^/@]*@", "//", url) if url else None       # never a token from a URL's user part


def _named(ws: Workspace, where: str) -> str:
    from gitmem import secrets

    return secrets.scrub(f"{where} (workspace {ws.name})" if ws.name else where)


def exported_record(text: str) -> str | None:
    """The record a file's export marker names; None when the file carries no marker (no export wrote it)."""
    found = _MARKER_RE.search(text)
    return found.group(1) if found else None
