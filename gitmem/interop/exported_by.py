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
    from gitmem import gitio, secrets

    url = gitio.config_value(ws.repo, "remote.origin.url") or str(ws.root)
    url = re.sub(r"//[^/@]*@", "//", url)       # never a token from a URL's user part
    return secrets.scrub(f"{url} (workspace {ws.name})" if ws.name else url)


def exported_record(text: str) -> str | None:
    """The record a file's export marker names; None when the file carries no marker (no export wrote it)."""
    found = _MARKER_RE.search(text)
    return found.group(1) if found else None
