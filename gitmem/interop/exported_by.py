"""The record an export points back to: the memory it was exported from, named in the marker every exported file
opens with (`<!-- exported by gitmem from RECORD … -->`).

An export's `[gitmem: L-0003]` tags name the entries of that record. Importing it back into the same memory adds
nothing; imported into another repository, or another workspace of this one, the same IDs name other entries
there, so its facts are imported as any other.
"""
from __future__ import annotations

import re
from pathlib import Path

from gitmem.workspace import Workspace


def record_of(ws: Workspace) -> str:
    """How an export names the memory it comes from: the repository's `origin` URL, else its directory, and the
    workspace when it is not the top-level memory. Masked as every output is: the marker is written so."""
    return _named(ws, _origin_url(ws) or str(_main_work_tree(ws)))


def records_of(ws: Workspace) -> set[str]:
    """Every name an export of this memory carries: by its `origin` URL (a clone elsewhere shares it) and by its
    directory (an export made before the repository had an `origin`): the main work tree's, which every linked
    work tree shares as it shares the Claude Code memory folder, or this work tree's own."""
    return {_named(ws, where) for where in (_origin_url(ws), str(_main_work_tree(ws)), str(ws.root)) if where}


def _main_work_tree(ws: Workspace) -> Path:
    from gitmem.interop.claude_code import shared_root

    return shared_root(ws)


def _origin_url(ws: Workspace) -> str | None:
    from gitmem import gitio

    url = gitio.config_value(ws.repo, "remote.origin.url")
    return re.sub(r"//[^/@]*@", "//", url) if url else None       # never a token from a URL's user part


def _named(ws: Workspace, where: str) -> str:
    from gitmem import secrets

    return secrets.scrub(f"{where} (workspace {ws.name})" if ws.name else where)


# A URL (`https://host/path`, `ssh://user@host:22/path`) or git's scp-like form (`user@host:path`); a directory is
# neither (a path whose first part holds a colon is not one a repository's folder usually has).
_URL_RE = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://(?:[^@/]*@)?(?P<host>[^/]+)(?P<path>/.*)?$")
_SCP_RE = re.compile(r"^(?:[^@/]+@)?(?P<host>[^/:]+):(?P<path>.*)$")
_WORKSPACE_RE = re.compile(r" \(workspace [^()]*\)$")


def comparable(record: str) -> str:
    """A record as two names of one memory compare: an origin URL as host and path, however a clone spells it
    (https or ssh, a user, a port, `.git`, a trailing `/`, the host's letter case); a directory as it is."""
    workspace = _WORKSPACE_RE.search(record)
    place = record[:workspace.start()] if workspace else record
    found = _URL_RE.match(place) or (None if place.startswith("/") else _SCP_RE.match(place))
    if found is None:
        return record
    host = re.sub(r":[0-9]*$", "", found["host"].lower())          # without a port
    path = (found["path"] or "").strip("/").removesuffix(".git")
    return f"{host}/{path}" + (workspace.group(0) if workspace else "")
