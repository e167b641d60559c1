"""Library entry points for validation: staged changes, the work tree, or a range of commits."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import pygit2

from gitmem import repo as git
from gitmem.checks import CheckInput, run_checks
from gitmem.checks.violation import Violation
from gitmem.config import CONFIG_NAME, Config, ConfigError, parse_config
from gitmem.snapread import derived
from gitmem.snapshot import Snapshot


def config_at(snapshot_bytes: bytes | None, *, workspace: str | None = None) -> Config:
    config = parse_config(snapshot_bytes) if snapshot_bytes is not None else Config()
    return config.with_workspace(workspace) if workspace else config


def _paths(config: Config) -> list[str]:
    return list(config.memory_paths().values())


def _derived(repository: pygit2.Repository, snapshot: Snapshot | None, paths: list[str],
             source: Callable[[str], bytes | None]) -> Snapshot | None:
    """`snapshot`, reading big LOG/NOW versions from a newer copy when provably identical (gitmem.snapread)."""
    if snapshot is None:
        return None
    return derived(snapshot, paths, source, lambda oid: git.blob_size(repository, oid))


def _worktree_source(repository: pygit2.Repository) -> Callable[[str], bytes | None]:
    if repository.workdir is None:
        return lambda path: None
    return git.worktree_snapshot(git.root(repository)).read


def check_staged(repository: pygit2.Repository, config: Config) -> list[Violation]:
    """What is staged (the index, honouring GIT_INDEX_FILE) against HEAD. Never writes anything."""
    paths = _paths(config)
    head = git.head_commit(repository)
    identity = git.user_identity(repository)
    new = git.staged_snapshot(repository, paths)
    # HEAD's LOG is a prefix of the staged one and HEAD's NOW a part of it: derive them (gitmem.snapread).
    old = _derived(repository, git.commit_snapshot(repository, head, paths), paths, new.read)
    return run_checks(CheckInput(config, old, new, identity.email if identity else None))


def check_worktree(repository: pygit2.Repository, config: Config) -> list[Violation]:
    """The working-tree files against HEAD."""
    paths = _paths(config)
    head = git.head_commit(repository)
    identity = git.user_identity(repository)
    new = git.worktree_snapshot(git.root(repository), paths)
    return run_checks(CheckInput(config, _derived(repository, git.commit_snapshot(repository, head, paths), paths,
                                                  new.read),
                                 new, identity.email if identity else None))


def _has_memory(snapshot: Snapshot | None, paths: list[str]) -> bool:
    return snapshot is not None and any(snapshot.oid(path) is not None for path in paths)


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
    newest = _Newest(repository, last)
    configs: dict[str | None, Config] = {}
    previous: tuple[pygit2.Oid, list[str], Snapshot | None] | None = None
    for commit in git.walk_range(repository, start, end):
        result.commits += 1
        config_blob = git.tree_blob(commit.tree, CONFIG_NAME)
        config_key = str(config_blob.id) if config_blob is not None else None
        try:
            if config_key not in configs:     # parse each distinct gitmem.yaml once, not once per commit
                configs[config_key] = config_at(config_blob.data if config_blob is not None else None,
                                                workspace=workspace)
            config = configs[config_key]
        except ConfigError as err:
            raise ConfigError(f"commit {str(commit.id)[:10]}: {err}") from None
        paths = _paths(config)
        parent = commit.parents[0] if commit.parents else None
        # Consecutive commits share a snapshot: the parent's is the one just checked, contents already read.
        if previous is not None and parent is not None and previous[0] == parent.id and previous[1] == paths:
            old = previous[2]
        else:
            old = _derived(repository, git.commit_snapshot(repository, parent, paths), paths, newest.read)
        new = _derived(repository, git.commit_snapshot(repository, commit, paths), paths, newest.read)
        assert new is not None      # commit_snapshot is None only for an unborn HEAD, never for a commit
        previous = (commit.id, paths, new)
        if not _has_memory(new, paths) and (old is None or not _has_memory(old, paths)):
            continue        # history from before gitmem was adopted: there is no memory to check
        found = run_checks(CheckInput(config, old, new, git.author_email(commit)))
        short = str(commit.id)[:10]
        result.violations += [Violation(v.path, v.line, v.code, f"{v.message} (commit {short})", v.hint)
                              for v in found]
    result.violations.sort()
    return result


class _Newest:
    """The newest copy of each file in a range: END's blob, read once (from the work tree when it matches).

    Older versions of LOG and NOW in the range are derived from it instead of being inflated one by one.
    """

    def __init__(self, repository: pygit2.Repository, commit: pygit2.Commit) -> None:
        self.repository, self.commit = repository, commit
        self.worktree = _worktree_source(repository)
        self.cache: dict[str, bytes | None] = {}

    def read(self, path: str) -> bytes | None:
        if path not in self.cache:
            snapshot = _derived(self.repository, git.commit_snapshot(self.repository, self.commit, [path]), [path],
                                self.worktree)
            self.cache[path] = snapshot.read(path) if snapshot is not None else None
        return self.cache[path]
