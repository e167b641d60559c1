"""Claude Code's auto memory: `~/.claude/projects/<project>/memory/`, a `MEMORY.md` index and topic files.

Where: Claude Code keeps a project's data under `$CLAUDE_CONFIG_DIR` (default `~/.claude`) in `projects/<name>`,
the name being the project's absolute path with every character other than a letter or digit made `-`
(`/home/ana/my.app` -> `-home-ana-my-app`); auto memory is its `memory/` folder, keyed by the repository's root
so every worktree shares it (docs: code.claude.com/docs/en/memory, "Auto memory": "~/.claude/projects/<project>/
memory/"). The format: gitmem.interop.topic_files.
"""
from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path

from gitmem.interop import topic_files
from gitmem.interop.facts import Fact
from gitmem.interop.sources import Reader
from gitmem.workspace import Workspace

NAME = "claude"
WHAT = "Claude Code auto memory"


def project_dir_name(project: Path) -> str:
    return re.sub(r"[^A-Za-z0-9]", "-", str(project.resolve()))


def config_dir(environ: Mapping[str, str], home: Path) -> Path:
    return Path(environ.get("CLAUDE_CONFIG_DIR", "").strip() or home / ".claude")


def shared_root(workspace: Workspace) -> Path:
    """The repository's main work tree, which names its memory for every linked work tree of it too."""
    from gitmem import gitio

    common = gitio.common_dir(workspace.repo)
    return common.parent if common.name == ".git" else workspace.root


def default_roots(workspace: Workspace, environ: Mapping[str, str], home: Path) -> list[Path]:
    return [config_dir(environ, home) / "projects" / project_dir_name(shared_root(workspace)) / "memory"]


def read(reader: Reader, prefix: str) -> list[Fact]:
    return topic_files.read_topic_files(reader, NAME, prefix)
