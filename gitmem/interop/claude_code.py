"""Claude Code's auto memory: `~/.claude/projects/<project>/memory/`, a `MEMORY.md` index and topic files.

Where: Claude Code keeps a project's data under `$CLAUDE_CONFIG_DIR` (default `~/.claude`) in `projects/<name>`,
the name being the project's absolute path with every character other than a letter or digit made `-`
(`/home/ana/my.app` -> `-home-ana-my-app`); auto memory is its `memory/` folder, keyed by the repository's root
so every worktree shares it (docs: code.claude.com/docs/en/memory, "Auto memory": "~/.claude/projects/<project>/
memory/"). The format: gitmem.interop.topic_files.
"""
from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path

from gitmem.interop import topic_files
from gitmem.interop.facts import Fact
from gitmem.interop.sources import Reader

NAME = "claude"
WHAT = "Claude Code auto memory"


def project_dir_name(project: Path) -> str:
    return re.sub(r"[^A-Za-z0-9]", "-", str(project.resolve()))


def config_dir(environ: Mapping[str, str], home: Path) -> Path:
    return Path(environ.get("CLAUDE_CONFIG_DIR", "").strip() or home / ".claude")


def default_roots(project: Path, environ: Mapping[str, str], home: Path) -> list[Path]:
    return [config_dir(environ, home) / "projects" / project_dir_name(project) / "memory"]


def read(reader: Reader, prefix: str) -> list[Fact]:
    return topic_files.read(reader, NAME, prefix)


def export_dir(project: Path, environ: Mapping[str, str] = os.environ, home: Path | None = None) -> Path:
    return default_roots(project, environ, home or Path.home())[0]
