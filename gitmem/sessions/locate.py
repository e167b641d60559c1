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


def working_directory() -> Path | None:
    """The process's working directory, the last place a session's repository is looked for; None when it is gone
    (removed after the host, or the shell that started it, went there) or cannot be read: then it is no place to
    look, and the other places (the payload's cwd, the client's roots) still are."""
    try:
        return Path.cwd()
    except OSError:
        return None


def find_workspace(candidates: list[str | Path | None], workspace: str | None = None) -> Workspace | None:
    """The memory repository of the first candidate directory inside one (a git work tree with gitmem.yaml or
    LOG.md at its root). A memory repository with a broken gitmem.yaml raises its ConfigError: it is found, not
    valid."""
    for candidate in candidates:
        if not candidate or not _is_directory(Path(candidate)):
            continue
        try:
            repo = gitio.open_repo(Path(candidate))
        except gitio.RepoError:
            continue
        found = _outermost_memory(repo)
        if found is not None:
            return Workspace.for_repo(found, workspace=workspace)
    return None


def _outermost_memory(repo: gitio.Repo) -> gitio.Repo | None:
    """Of the work trees nested around `repo`'s, the outermost that is a memory repository, as the launcher the
    hooks and servers run is the outermost work tree's (gitmem.sessions.launcher.FIND): a session in a clone
    inside the tree (vendor/lib) is still the memory repository's, and a repository the agent made inside the
    tree, with a gitmem.yaml, LOG and RULES of its own, never stands in for the human's memory. A linked work
    tree of the same repository (`git worktree add .worktrees/x`) is the user's own checkout: it keeps its own."""
    found = repo if _is_memory(repo) else None
    top = gitio.work_tree(repo)
    while top is not None:
        try:
            outer = gitio.open_repo(top.parent)
        except gitio.RepoError:
            break
        outer_top = gitio.work_tree(outer)
        if outer_top is None or outer_top not in top.parents:    # no work tree around this one: the outermost
            break
        if _is_memory(outer) and (found is None or gitio.common_dir(found) != gitio.common_dir(outer)):
            found = outer
        top = outer_top
    return found


def _is_memory(repo: gitio.Repo) -> bool:
    from gitmem.config import CONFIG_NAME, Files

    root = gitio.work_tree(repo)
    return root is not None and ((root / CONFIG_NAME).is_file() or (root / Files().log).is_file())
