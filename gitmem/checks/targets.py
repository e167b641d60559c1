"""What to check: the staged change, the work tree, or a range of commits. The library entry points of
`gitmem check` and `gitmem verify`."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from gitmem import codes, gitio
from gitmem.checks import CheckInput, run_checks
from gitmem.checks.violation import Violation
from gitmem.config import CONFIG_NAME, Config, ConfigError, parse_config
from gitmem.gitio import Snapshot
from gitmem.workspace import Workspace, files


def config_at(snapshot_bytes: bytes | None, *, workspace: str | None = None) -> Config:
    config = parse_config(snapshot_bytes) if snapshot_bytes is not None else Config()
    return config.with_workspace(workspace) if workspace else config


def staged_config(ws: Workspace) -> Config:
    """The config a commit of the index would carry: what is staged is judged by the staged gitmem.yaml."""
    staged = gitio.index_snapshot(ws.repo, [CONFIG_NAME]).read(CONFIG_NAME)
    on_disk = files.worktree_snapshot(ws.root).read(CONFIG_NAME)
    return ws.config if staged == on_disk else config_at(staged, workspace=ws.name or None)


def _paths(config: Config) -> list[str]:
    """The paths a snapshot holds: the memory files, and the other trusted files whose mode GM908 judges."""
    from gitmem.checks.repo_wide import trusted_paths

    return trusted_paths(config)


def _derived(repo: gitio.Repo, snapshot: Snapshot | None, paths: list[str],
             source: Callable[[str], bytes | None]) -> Snapshot | None:
    """`snapshot`, reading big LOG/NOW versions from a newer copy when provably identical (gitio.blobproof)."""
    if snapshot is None:
        return None
    return gitio.derived(snapshot, paths, source, lambda oid: gitio.blob_size(repo, oid))


def _worktree_source(repo: gitio.Repo) -> Callable[[str], bytes | None]:
    workdir = gitio.work_tree(repo)
    if workdir is None:
        return lambda path: None
    return files.worktree_snapshot(workdir).read


def _author_email(repo: gitio.Repo) -> str | None:
    identity = gitio.user_identity(repo)
    return identity.email if identity else None


def check_staged(ws: Workspace) -> list[Violation]:
    """What is staged (the index, honouring GIT_INDEX_FILE) against HEAD, judged by `ws.config`.

    Never writes anything.
    """
    repo, paths = ws.repo, _paths(ws.config)
    new = gitio.staged_snapshot(repo, paths)
    # HEAD's LOG is a prefix of the staged one and HEAD's NOW a part of it: derive them (gitio.blobproof).
    old = _derived(repo, gitio.commit_snapshot(repo, gitio.head_id(repo), paths), paths, new.read)
    return run_checks(CheckInput(ws.config, old, new, _author_email(repo)))


def check_worktree(ws: Workspace) -> list[Violation]:
    """The working-tree files against HEAD."""
    repo, paths = ws.repo, _paths(ws.config)
    new = files.worktree_snapshot(gitio.root(repo))
    old = _derived(repo, gitio.commit_snapshot(repo, gitio.head_id(repo), paths), paths, new.read)
    return run_checks(CheckInput(ws.config, old, new, _author_email(repo)))


def _has_memory(snapshot: Snapshot | None, config: Config) -> bool:
    return snapshot is not None and any(snapshot.oid(path) is not None for path in config.memory_paths().values())


@dataclass
class RangeResult:
    violations: list[Violation] = field(default_factory=list)
    commits: int = 0
    rewritten: bool = False


def verify_range(ws: Workspace, start: str | None, end: str) -> RangeResult:
    """Check every commit in START..END against its first parent, with the config each commit carries.

    With no START, every commit reachable from END is checked (a new branch, a first push).
    """
    repo, workspace = ws.repo, ws.name or None
    last = gitio.resolve(repo, end)
    first = gitio.resolve(repo, start) if start else None
    result = RangeResult()
    if first is not None and not gitio.is_ancestor(repo, first, last):
        result.rewritten = True
        result.violations.append(Violation.of(codes.HISTORY_REWRITTEN, "(range)", 1, end=end, start=start))
        return result
    newest = _Newest(repo, last)
    configs: dict[str | None, Config] = {}
    previous: tuple[str, list[str], Snapshot | None] | None = None
    for commit in gitio.walk_range(repo, start, end):
        result.commits += 1
        config_key = gitio.file_id_at(repo, commit.id, CONFIG_NAME)
        try:
            if config_key not in configs:     # parse each distinct gitmem.yaml once, not once per commit
                configs[config_key] = config_at(gitio.file_at(repo, commit.id, CONFIG_NAME), workspace=workspace)
            config = configs[config_key]
        except ConfigError as err:
            raise ConfigError(f"commit {commit.short}: {err}") from None
        paths = _paths(config)
        parent = commit.parents[0] if commit.parents else None
        # Consecutive commits share a snapshot: the parent's is the one just checked, contents already read.
        if previous is not None and parent is not None and previous[0] == parent and previous[1] == paths:
            old = previous[2]
        else:
            old = _derived(repo, gitio.commit_snapshot(repo, parent, paths), paths, newest.read)
        new = _derived(repo, gitio.commit_snapshot(repo, commit.id, paths), paths, newest.read)
        assert new is not None      # commit_snapshot is None only for no commit, never for a commit
        previous = (commit.id, paths, new)
        if not _has_memory(new, config) and (old is None or not _has_memory(old, config)):
            continue        # history from before gitmem was adopted: there is no memory to check
        found = run_checks(CheckInput(config, old, new, commit.author.email))
        result.violations += [Violation(v.path, v.line, v.code, f"{v.message} (commit {commit.short})", v.hint)
                              for v in found]
    result.violations.sort()
    return result


class _Newest:
    """The newest copy of each file in a range: END's blob, read once (from the work tree when it matches).

    Older versions of LOG and NOW in the range are derived from it instead of being inflated one by one.
    """

    def __init__(self, repo: gitio.Repo, commit_id: str) -> None:
        self.repo, self.commit_id = repo, commit_id
        self.worktree = _worktree_source(repo)
        self.cache: dict[str, bytes | None] = {}

    def read(self, path: str) -> bytes | None:
        if path not in self.cache:
            snapshot = _derived(self.repo, gitio.commit_snapshot(self.repo, self.commit_id, [path]), [path],
                                self.worktree)
            self.cache[path] = snapshot.read(path) if snapshot is not None else None
        return self.cache[path]
