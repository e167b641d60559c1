"""Claude Code's auto memory: `~/.claude/projects/<project>/memory/`, a `MEMORY.md` index and topic files.

A user may keep it elsewhere: `autoMemoryDirectory` in their settings (`~/.claude/settings.json`; `~/` is their
home) names one folder for every project, and `CLAUDE_COWORK_MEMORY_PATH_OVERRIDE` one for the process, first
(the pinned release's `gm()`, agent-cli/claude-code). A project's own `.claude/settings.json` may name one too, which
Claude Code honours only in a folder the user trusted: gitmem never reads it, so a cloned project cannot send an
import, or an export to `--cli-location`, to a folder of its choosing.

Where: Claude Code keeps a project's data under `$CLAUDE_CONFIG_DIR` (default `~/.claude`) in `projects/<name>`,
the name being the project's absolute path with every character other than a letter or digit made `-`
(`/home/ana/my.app` -> `-home-ana-my-app`); auto memory is its `memory/` folder, keyed by the repository's root
so every worktree shares it (docs: code.claude.com/docs/en/memory, "Auto memory": "~/.claude/projects/<project>/
memory/"). The format: gitmem.interop.topic_files.
"""
from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from gitmem.config.user_files import read_settings
from gitmem.interop import topic_files
from gitmem.interop.facts import Fact
from gitmem.interop.sources import Reader
from gitmem.workspace import Workspace

NAME = "claude"
WHAT = "Claude Code auto memory"


# Claude Code's longest folder name before it cuts the name and adds a hash (its `$E`, as the pinned release,
# agent-cli/claude-code, bundles it; a folder name may hold at most 255 bytes).
MAX_NAME = 200
_ALNUM = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")
_BASE36 = "0123456789abcdefghijklmnopqrstuvwxyz"


def project_dir_name(project: Path) -> str:
    """The folder name Claude Code gives a project path, as JavaScript counts it: each UTF-16 code unit that is not
    an ASCII letter or digit becomes `-` (a character past U+FFFF is two); a name longer than MAX_NAME is cut there
    and ends with `-` and the base-36 of the path's 32-bit `h * 31 + unit` hash."""
    data = str(project.resolve()).encode("utf-16-le", "surrogatepass")
    units = [int.from_bytes(data[at:at + 2], "little") for at in range(0, len(data), 2)]
    name = "".join(chr(unit) if unit in _ALNUM else "-" for unit in units)
    if len(name) <= MAX_NAME:
        return name
    hashed = 0
    for unit in units:
        hashed = (hashed * 31 + unit) & 0xFFFFFFFF
    hashed = abs(hashed - (1 << 32) if hashed >= 1 << 31 else hashed)
    digits = ""
    while True:
        hashed, digit = divmod(hashed, 36)
        digits = _BASE36[digit] + digits
        if not hashed:
            break
    return f"{name[:MAX_NAME]}-{digits}"


SETTINGS = "settings.json"
OVERRIDE = "CLAUDE_COWORK_MEMORY_PATH_OVERRIDE"


def config_dir(environ: Mapping[str, str], home: Path) -> Path:
    return Path(environ.get("CLAUDE_CONFIG_DIR", "").strip() or home / ".claude")


def chosen_memory_dir(environ: Mapping[str, str], home: Path) -> Path | None:
    """The folder the user chose for auto memory (OVERRIDE, else `autoMemoryDirectory` in their settings), as
    Claude Code accepts it: an absolute path, or `~/…` inside their home; None when none is chosen, or the
    choice is one Claude Code ignores."""
    chosen = _folder(environ.get(OVERRIDE), home, tilde=False)
    if chosen is None:
        named = read_settings(config_dir(environ, home) / SETTINGS).get("autoMemoryDirectory")
        chosen = _folder(named if isinstance(named, str) else None, home, tilde=True)
    return chosen


def _folder(value: str | None, home: Path, *, tilde: bool) -> Path | None:
    if not value:
        return None
    if tilde and value.startswith("~/"):
        rest = os.path.normpath(value[2:] or ".")
        if rest in (".", "..") or rest.startswith("../") or os.path.isabs(rest):     # `~//etc` is /etc
            return None
        value = str(home / rest)
    folder = os.path.normpath(value).rstrip("/")
    if not os.path.isabs(folder) or len(folder) < 3 or folder.startswith("//") or "\0" in folder:
        return None
    return Path(folder)


def shared_root(workspace: Workspace) -> Path:
    """The repository's main work tree, which names its memory for every linked work tree of it too."""
    from gitmem import gitio

    common = gitio.common_dir(workspace.repo)
    return common.parent if common.name == ".git" else workspace.root


def default_roots(workspace: Workspace, environ: Mapping[str, str], home: Path) -> list[Path]:
    return [chosen_memory_dir(environ, home)
            or config_dir(environ, home) / "projects" / project_dir_name(shared_root(workspace)) / "memory"]


def read(reader: Reader, prefix: str) -> list[Fact]:
    return topic_files.read_topic_files(reader, NAME, prefix)
