"""Library entry points for validation: staged changes, the work tree, or a range of commits."""
from __future__ import annotations

from dataclasses import dataclass, field

import pygit2

from gitmem import repo as git
from gitmem.checks import CheckInput, run_checks
from gitmem.checks.violation import Violation
from gitmem.config import CONFIG_NAME, Config, ConfigError, parse_config


def config_at(snapshot_bytes: bytes | None, *, workspace: str | None = None) -> Config:
    config = parse_config(snapshot_bytes) if snapshot_bytes is not None else Config()
    return config.with_workspace(workspace) if workspace else config


def _paths(config: Config) -> list[str]:
    return list(config.memory_paths().values())


def check_staged(repository: pygit2.Repository, config: Config) -> list[Violation]:
    """What is staged (the index, honouring GIT_INDEX_FILE) against HEAD. Never writes anything."""
    paths = _paths(config)
    head = git.head_commit(repository)
    identity = git.user_identity(repository)
    return run_checks(CheckInput(config, git.commit_snapshot(repository, head, paths),
                                 git.index_snapshot(repository, paths),
                                 identity.email if identity else None))


def check_worktree(repository: pygit2.Repository, config: Config) -> list[Violation]:
    """The working-tree files against HEAD."""
    paths = _paths(config)
    head = git.head_commit(repository)
    identity = git.user_identity(repository)
    return run_checks(CheckInput(config, git.commit_snapshot(repository, head, paths),
                                 git.worktree_snapshot(git.root(repository), paths),
                                 identity.email if identity else None))


@dataclass
class RangeResult:
    violations: list[Violation] = field(default_factory=list)
    commits: int = 0
    rewritten: bool = False


def verify_range(repository: pygit2.Repository, start: str | None, end: str, *,
                 workspace: str | None = None) -> RangeResult:
    """Check every commit in START..END against its first parent, with the config each commit carries.

    With no START, every commit reachable from END is checked (a new branch, a first push).
    """
    last = git.resolve(repository, end)
    first = git.resolve(repository, start) if start else None
    result = RangeResult()
    if first is not None and not git.is_ancestor(repository, first, last):
        result.rewritten = True
        result.violations.append(Violation(
            "(range)", 1, "GM906",
            f"{end} does not descend from {start}: history was rewritten (force-push?)",
            "memory history is append-only; restore the old history and add new commits on top"))
        return result
    for commit in git.walk_range(repository, start, end):
        result.commits += 1
        config_blob = git.tree_blob(commit.tree, CONFIG_NAME)
        try:
            config = config_at(config_blob.data if config_blob is not None else None, workspace=workspace)
        except ConfigError as err:
            raise ConfigError(f"commit {str(commit.id)[:10]}: {err}") from None
        paths = _paths(config)
        parent = commit.parents[0] if commit.parents else None
        found = run_checks(CheckInput(config, git.commit_snapshot(repository, parent, paths),
                                      git.commit_snapshot(repository, commit, paths), git.author_email(commit)))
        short = str(commit.id)[:10]
        result.violations += [Violation(v.path, v.line, v.code, f"{v.message} (commit {short})", v.hint)
                              for v in found]
    result.violations.sort()
    return result
