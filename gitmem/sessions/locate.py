"""Which memory repository a session works in: hosts start hooks and MCP servers from different places."""
from __future__ import annotations

from pathlib import Path

from gitmem import gitio
from gitmem.errors import ExitCode, GitmemError
from gitmem.workspace import Workspace


class NotAMemoryRepository(GitmemError):
    exit_code = ExitCode.USAGE


def find_workspace(candidates: list[str | Path | None], workspace: str | None = None) -> Workspace | None:
    """The first candidate directory inside a memory repository (a git work tree with gitmem.yaml or LOG.md at
    its root). A memory repository with a broken gitmem.yaml raises its ConfigError: it is found, not valid."""
    from gitmem.config import CONFIG_NAME, Files

    for candidate in candidates:
        if not candidate or not Path(candidate).is_dir():
            continue
        try:
            repo = gitio.open_repo(Path(candidate))
        except gitio.RepoError:
            continue
        root = gitio.work_tree(repo)
        if root is not None and ((root / CONFIG_NAME).is_file() or (root / Files().log).is_file()):
            return Workspace.for_repo(repo, workspace=workspace)
    return None
