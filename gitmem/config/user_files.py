"""The human's own settings files of other programs (Claude Code's settings.json, Codex's config.toml, Gemini
CLI's settings.json), read as those programs read them.

Through a link: a dotfiles checkout (stow, chezmoi, home-manager) makes `~/.gemini/settings.json` a link, and the
CLI follows it, so a reader that did not would say the user set nothing. Never blocking: a FIFO at the path is no
settings file (opened without waiting, then judged by fstat). Bounded: at most MAX_BYTES is read, and the parsers
are the depth-bounded ones (`nesting`). A file that is missing, unreadable or not a mapping sets nothing: `{}`.
"""
from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any

from gitmem.config.nesting import loads_json, loads_toml

MAX_BYTES = 1024 * 1024        # a settings file, not a document


def read_settings(path: Path, kind: str = "json") -> dict[str, Any]:
    """The settings at `path` (`kind` "json" or "toml") as a mapping; {} when absent, not a regular file, larger
    than MAX_BYTES, not UTF-8, not parseable, or not a mapping."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
        with os.fdopen(fd, "rb") as handle:
            found = os.fstat(handle.fileno())
            if not stat.S_ISREG(found.st_mode) or found.st_size > MAX_BYTES:
                return {}
            text = handle.read(MAX_BYTES).decode("utf-8")
        data = loads_toml(text) if kind == "toml" else loads_json(text)
    except (OSError, UnicodeDecodeError, ValueError):       # TooDeep too
        return {}
    return data if isinstance(data, dict) else {}
