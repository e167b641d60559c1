"""Where Gemini CLI keeps a project's private memory, found as the CLI finds it, and never created or registered; and
which context files it loads from its own folder (`context_file_names`).

Where the private folder is (packages/core/src/config/storage.ts and projectRegistry.ts, as the pinned release
bundles them): `<gemini>/tmp/<id>/memory`, `<gemini>` being `$GEMINI_CLI_HOME/.gemini` or `~/.gemini`. The `<id>`
of a project is the slug `<gemini>/projects.json` maps its absolute path to (`{"projects": {path: slug}}`, slugs
`[a-z0-9-]+`), trusted only while `<gemini>/tmp/<slug>/.project_root`, when there, names the same path; else the
folder whose `.project_root` names it; else, from releases before the registry, the SHA-256 of the path.
Gemini CLI's project is the folder it was started in: here, the repository's root.
"""
from __future__ import annotations

import hashlib
import os
import re
import stat
from pathlib import Path

from gitmem.config.nesting import loads_json
from gitmem.config.user_files import read_settings

REGISTRY = "projects.json"
SETTINGS = "settings.json"
DEFAULT_CONTEXT_FILE = "GEMINI.md"
OWNER_MARK = ".project_root"
_SLUG_RE = re.compile(r"[a-z0-9-]+")
_MARK_BYTES = 64 * 1024          # a path, not a document: what is read of an owner mark or the registry, at most
_REGISTRY_BYTES = 4 * 1024 * 1024


def project_memory_dir(gemini: Path, project: Path) -> Path:
    """Gemini CLI's private memory folder for `project` (Storage.getProjectMemoryTempDir), found as the CLI
    finds it but never created or registered: this only reads."""
    owner = os.path.abspath(project.resolve())
    temp = gemini / "tmp"
    slug = _registered(gemini / REGISTRY, owner, temp) or _marked(temp, owner)
    return temp / (slug or hashlib.sha256(owner.encode()).hexdigest()) / "memory"


def context_file_names(gemini: Path) -> tuple[str, ...]:
    """The context files Gemini CLI loads from `gemini` (`~/.gemini`) in every session, as the user's settings there
    name them: GEMINI.md, and each `context.fileName` (a name or a list; packages/core/src/tools/memoryTool.ts,
    `setGeminiMdFilename`, whose first name is the global memory file the model writes). Only plain file names: a
    path is no file of that folder. Settings that cannot be read as JSON name none."""
    context = read_settings(gemini / SETTINGS).get("context")
    named = context.get("fileName") if isinstance(context, dict) else None
    names = [named] if isinstance(named, str) else named if isinstance(named, list) else []
    plain = [name.strip() for name in names if isinstance(name, str) and _plain_file_name(name.strip())]
    return tuple(dict.fromkeys([*plain, DEFAULT_CONTEXT_FILE]))


def _plain_file_name(name: str) -> bool:
    return bool(name) and name not in (".", "..") and not any(char in name for char in "/\\\0")


def _registered(registry: Path, owner: str, temp: Path) -> str | None:
    try:
        data = loads_json(_head(registry, _REGISTRY_BYTES))
    except (OSError, ValueError):        # missing or corrupt: Gemini CLI starts an empty registry
        return None
    projects = data.get("projects") if isinstance(data, dict) else None
    slug = projects.get(owner) if isinstance(projects, dict) else None
    if not isinstance(slug, str) or not _SLUG_RE.fullmatch(slug):
        return None
    try:
        marked = _head(temp / slug / OWNER_MARK, _MARK_BYTES).strip()
    except FileNotFoundError:            # no mark yet: the registry's word stands
        return slug
    except (OSError, ValueError):        # a mark that is not a path cannot confirm it
        return None
    return slug if os.path.abspath(marked) == owner else None


def _marked(temp: Path, owner: str) -> str | None:
    try:
        candidates = sorted(entry.name for entry in os.scandir(temp) if _SLUG_RE.fullmatch(entry.name))
    except OSError:
        return None
    for name in candidates:
        try:
            if os.path.abspath(_head(temp / name / OWNER_MARK, _MARK_BYTES).strip()) == owner:
                return name
        except (OSError, ValueError):
            continue
    return None


def _head(path: Path, limit: int) -> str:
    """The start of a small text file of Gemini CLI's, read without following a link at its end."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    with os.fdopen(fd, "rb") as handle:
        if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
            raise OSError(f"{path} is not a regular file")
        return handle.read(limit).decode("utf-8")
