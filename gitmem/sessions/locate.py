"""Which memory repository a session works in: hosts start hooks and MCP servers from different places."""
from __future__ import annotations

from pathlib import Path

from gitmem import gitio
from gitmem.errors import ExitCode, GitmemError
from gitmem.workspace import Workspace


class NotAMemoryRepository(GitmemError):
    exit_code = ExitCode.USAGE


def _is_directory(path: Path) -> bool:
    """A candidate the system cannot even look at (a name too long, a loop of links, no permission) is no
    repository: Path.is_dir() raises for ENAMETOOLONG, and the candidates come from a hook payload, the MCP
    client's roots or --root, any of which may be an attacker's."""
    try:
        return path.is_dir()
    except OSError as err:
        if err.errno is None:
            raise
        return False


def find_workspace(candidates: list[str | Path | None], workspace: str | None = None) -> Workspace | None:
    """The first candidate directory inside a memory repository (a git work tree with gitmem.yaml or LOG.md at
    its root). A memory repository with a broken gitmem.yaml raises its ConfigError: it is found, not valid."""
    from gitmem.config import CONFIG_NAME, Files

    for candidate in candidates:
        if not candidate or not _is_directory(Path(candidate)):
            continue
        try:
            repo = gitio.open_repo(Path(candidate))
        except gitio.RepoError:
            continue
        root = gitio.work_tree(repo)
        if root is not None and ((root / CONFIG_NAME).is_file() or (root / Files().log).is_file()):
            return Workspace.for_repo(repo, workspace=workspace)
    return None
