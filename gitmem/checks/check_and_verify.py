"""What to check: the staged change, the work tree, or a range of commits. The library entry points of
`gitmem check` and `gitmem verify`."""
from __future__ import annotations

import os
import stat
from collections.abc import Callable, Iterator
from dataclasses import field, replace

from gitmem import codes, gitio
from gitmem.checks import run_checks
from gitmem.checks.generation import Generations, judged
from gitmem.checks.inputs import CheckInput
from gitmem.checks.rule_inputs import authorship_of
from gitmem.checks.violation import Violation
from gitmem.config import CONFIG_NAME, REQUIRED_ROLES, Config, ConfigError, parse_config, refused
from gitmem.gitio import Snapshot
from gitmem.records import record
from gitmem.workspace import Workspace


def config_at(snapshot_bytes: bytes | None, *, workspace: str | None = None, strict: bool = True) -> Config:
    """The config a tree carries. `strict=False` for a config already in history: rules new in this release
    judge new bytes only (`gitmem.config.parse_config`)."""
    config = parse_config(snapshot_bytes, strict=strict) if snapshot_bytes is not None else Config()
    return config.with_workspace(workspace) if workspace else config


def staged_config(ws: Workspace) -> Config:
    """The config a commit of the index would carry: what is staged is judged by the staged gitmem.yaml."""
    staged = gitio.index_snapshot(ws.repo, [CONFIG_NAME]).read(CONFIG_NAME)
    on_disk = gitio.worktree_snapshot(ws.root).read(CONFIG_NAME)
    return ws.config if staged == on_disk else config_at(staged, workspace=ws.name or None)


def workspace_from_index(workspace: str | None) -> Workspace | None:
    """The workspace of the current repository, judged by the gitmem.yaml staged in the index, for a commit whose
    work-tree gitmem.yaml is not a regular file (a link, a directory): that one says nothing about the commit
    being made, and GM908 reports it if it is staged as such too. None when the work tree's gitmem.yaml is a
    regular file (or missing): its own error stands."""
    from gitmem.confined import files

    repo = gitio.open_repo()
    root = gitio.work_tree(repo)
    if root is None or files.why_refused(root, CONFIG_NAME) is None:
        return None
    staged = gitio.index_snapshot(repo, [CONFIG_NAME]).read(CONFIG_NAME)
    return Workspace.for_repo(repo, config_at(staged, workspace=workspace))


@record(frozen=True)
class Side:
    """The old side of a check: a commit's memory files read with that commit's own config, under the names
    the new config gives them, and the roles whose file moved."""

    snapshot: Snapshot | None
    config: Config | None
    remapped: tuple[tuple[str, str, str], ...] = ()


def old_side(repo: gitio.Repo, commit_id: str | None, config: Config, *, workspace: str | None,
             source: Callable[[str], bytes | None], configs: dict[str, Config | None] | None = None,
             config_bytes: bytes | None = None) -> Side:
    """`commit_id`'s memory with its own gitmem.yaml, as the old side of a check judged by `config`
    (whose gitmem.yaml holds `config_bytes`, when known: a commit with the same bytes needs no parse)."""
    if commit_id is None:
        return Side(None, None)
    own = _own_config(repo, commit_id, config, workspace, configs if configs is not None else {}, config_bytes)
    if own is None:
        return Side(None, None)
    paths = _paths(own)
    snapshot = _derived(repo, gitio.commit_snapshot(repo, commit_id, paths), paths, source)
    names = {config.path(role): own.path(role) for role in config.memory_paths()}
    moved = tuple((role, own.path(role), config.path(role)) for role in config.memory_paths()
                  if own.path(role) != config.path(role))
    if moved and snapshot is not None:
        snapshot = gitio.RenamedSnapshot(snapshot, names)
    return Side(snapshot, own, moved)


def _own_config(repo: gitio.Repo, commit_id: str, config: Config, workspace: str | None,
                configs: dict[str, Config | None], config_bytes: bytes | None) -> Config | None:
    """The config `commit_id` carries; None when the workspace did not exist there (its memory is all new)."""
    key = gitio.file_id_at(repo, commit_id, CONFIG_NAME)
    if key is None:
        # No gitmem.yaml: a repository adopting one may hold unrelated files under the default names (a
        # project's own LOG.md), so its first config is judged by itself, as before this release.
        return config
    if key not in configs:
        if config_bytes is not None and gitio.blob_id(config_bytes) == key:
            configs[key] = config
            return config
        try:
            configs[key] = config_at(gitio.file_at(repo, commit_id, CONFIG_NAME), workspace=workspace, strict=False)
        except ConfigError as err:
            # A config no reader can read (committed without the hook): read the old side with the new config,
            # as before this release.
            configs[key] = None if "unknown workspace" in str(err) else config
    return configs[key]


def _paths(config: Config) -> list[str]:
    """The paths a snapshot holds: the memory files, and the other trusted files whose mode GM908 judges."""
    from gitmem.checks.owned_paths import trusted_paths

    # Every workspace's memory files too: GM923 compares their blob ids, never their contents.
    others = [path for paths in config.workspace_paths().values() for path in paths.values()]
    return list(dict.fromkeys([*trusted_paths(config), *others]))


def _read_as_memory(config: Config) -> set[str]:
    """The files the memory rules read for secrets themselves (gitmem.checks.every_memory_file: every workspace's memory
    files, ROADMAP among them); every other changed file is read as a file (gitmem.checks.non_memory_files), gitmem.yaml
    and the `always_load` files too."""
    others = [path for paths in config.workspace_paths().values() for path in paths.values()]
    return {*config.memory_paths().values(), *others}


def derived_commit(repo: gitio.Repo, commit_id: str, paths: list[str],
                   source: Callable[[str], bytes | None]) -> Snapshot | None:
    """The memory files of a commit as the old side of a check whose new side `source` reads: its LOG and NOW,
    a prefix and a part of the newer ones, are proven by one hash and never inflated (75 MB at 100x)."""
    return _derived(repo, gitio.commit_snapshot(repo, commit_id, paths), paths, source)


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
    return gitio.worktree_snapshot(workdir).read


def _author_email(repo: gitio.Repo) -> str | None:
    identity = gitio.user_identity(repo)
    return identity.email if identity else None


def check_staged(ws: Workspace) -> list[Violation]:
    """What is staged (the index, honouring GIT_INDEX_FILE) against HEAD, judged by `ws.config`; HEAD is read
    with HEAD's own gitmem.yaml.

    Never writes anything.
    """
    repo, paths = ws.repo, _paths(ws.config)
    new = gitio.staged_snapshot(repo, paths)
    # HEAD's LOG is a prefix of the staged one and HEAD's NOW a part of it: derive them (gitio.blobproof).
    staged = gitio.index_snapshot(repo, [CONFIG_NAME]).read(CONFIG_NAME)
    on_disk = gitio.worktree_snapshot(gitio.root(repo)).read(CONFIG_NAME)
    # `ws.config` is the work tree's config, or the staged one (`staged_config`): when both files hold the
    # same bytes, a HEAD with those bytes too needs no parse.
    found = _check(ws, new, _author_email(repo), staged if staged == on_disk else None)
    return sorted(_missing_explained(repo, found) + other_files_staged(ws, _read_as_memory(ws.config)))


def _missing_explained(repo: gitio.Repo, found: list[Violation]) -> list[Violation]:
    """`found`, with each memory file missing from the index said why when it is not missing (GM904's variants):
    git holds it unmerged (a merge or rebase stopped on a conflict in it), or the work tree holds it unstaged
    (right after `gitmem init`, or after `git add` of some of the files). "Run `gitmem init`" sent the human to a
    command that changes nothing there."""
    code = codes.MEMORY_FILE_MISSING.code
    missing = [v.path for v in found if v.code == code]
    if not missing:
        return found
    held, root = set(gitio.unmerged(repo, missing)), gitio.root(repo)

    def why(path: str) -> str | None:
        if path in held:
            return "unmerged"
        try:
            return "unstaged" if stat.S_ISREG(os.lstat(root / path).st_mode) else None
        except (OSError, ValueError):
            return None

    return [Violation.of(codes.MEMORY_FILE_MISSING, v.path, v.line, variant, path=v.path)
            if v.code == code and (variant := why(v.path)) is not None else v for v in found]


def check_worktree(ws: Workspace, *, skip_unchanged: bool = False) -> list[Violation]:
    """The working-tree files against HEAD (read with HEAD's own gitmem.yaml). A file unchanged since HEAD is
    judged whole, as committed; with `skip_unchanged` it is skipped as the staged check skips it."""
    repo = ws.repo
    new = gitio.worktree_snapshot(gitio.root(repo), repo=repo if skip_unchanged else None, stored_by=repo)
    found = _check(ws, new, _author_email(repo), new.read(CONFIG_NAME))
    return sorted(found + other_files_worktree(ws, _read_as_memory(ws.config)))


def check_since_checked(ws: Workspace) -> list[Violation]:
    """Whether memory is valid, for a cycle about to start, at the cost of what changed since a cycle or a
    close last checked it. That commit's memory passed the checks before it was committed (the agent cannot
    commit: its sandbox holds .git read-only), so only the commits since are verified, each against its
    parent with its own author, and the work tree against HEAD. With no such commit near, every file is judged
    whole against HEAD."""
    repo = ws.repo
    base = last_checked(ws)
    if base is None:
        return check_worktree(ws)
    head = gitio.head_id(repo)
    try:
        # Memory only: a key in another file of the human's is the required check's to refuse (and rotating it
        # cannot take it out of history), not a reason no cycle can start again.
        since = verify_range(ws, base, head, by_this_clock=False, every_file=False).violations \
            if head is not None and head != base else []
    except ShallowHistoryError:          # a shallow clone's cut between them: judge every file whole instead
        return check_worktree(ws)
    return sorted(since + check_worktree(ws, skip_unchanged=True))


def last_checked(ws: Workspace) -> str | None:
    """The newest commit near HEAD that a cycle or a close made, whose memory was checked before it was
    committed; the agent is recognised by the one rule of the checks (`authorship_of`), not by exact email."""
    email = ws.config.agent.email
    return gitio.last_phase_commit(ws.repo, lambda author: authorship_of(author, [email]).is_agent)


def _check(ws: Workspace, new: Snapshot, author: str | None, config_bytes: bytes | None) -> list[Violation]:
    repo = ws.repo
    side = old_side(repo, gitio.head_id(repo), ws.config, workspace=ws.name or None,
                    source=new.read, config_bytes=config_bytes)
    # The fence state at the end of HEAD's LOG is counted from HEAD's bytes by the LOG check itself (one pass,
    # gitmem.memory.fences.count_marks), never taken from the line cache: a verdict reads no cache.
    return run_checks(CheckInput(ws.config, side.snapshot, new, author, side.config, side.remapped,
                                 moment=ws.clock()()))


def other_files_staged(ws: Workspace, memory: set[str]) -> list[Violation]:
    """GM903 over every other staged file: its text, its name, a symlink's target (gitmem.checks.non_memory_files)."""
    repo = ws.repo
    changed = [item for item in gitio.staged_files(repo) if item.path not in memory and not item.is_gitlink]
    if not changed:
        return []
    from gitmem.checks.non_memory_files import FileToScan, scan_files
    from gitmem.secrets import ALLOWLIST_FILE, Allowlist

    allow = Allowlist.parse(gitio.index_snapshot(repo, [ALLOWLIST_FILE]).read(ALLOWLIST_FILE))
    def staged(item: gitio.ChangedFile) -> Callable[[], Iterator[bytes]]:
        return lambda: iter((gitio.read_staged(repo, item),))

    files = [FileToScan(item.path, item.is_link, staged(item)) for item in changed]
    return scan_files(files, allow)


def other_files_worktree(ws: Workspace, memory: set[str]) -> list[Violation]:
    """The same over the work tree's changed, not ignored files, read in chunks (any size)."""
    repo, root = ws.repo, gitio.root(ws.repo)
    changed = [item for item in gitio.worktree_changed(repo) if item.path not in memory]
    if not changed:
        return []
    from gitmem.checks.non_memory_files import FileToScan, scan_files
    from gitmem.secrets import ALLOWLIST_FILE, Allowlist

    allow = Allowlist.parse(gitio.worktree_snapshot(root, [ALLOWLIST_FILE]).read(ALLOWLIST_FILE))
    def on_disk(item: gitio.ChangedFile) -> Callable[[], Iterator[bytes]]:
        return lambda: gitio.worktree_bytes(root, item)

    files = [FileToScan(item.path, item.is_link, on_disk(item)) for item in changed]
    return scan_files(files, allow)


def other_files_committed(repo: gitio.Repo, commit_id: str, memory: set[str]) -> list[Violation]:
    """The same over every other file a commit brings (gitmem.gitio.committed_files), with the allowlist the
    commit holds, as `check` reads the staged one: what the required check reads is what `check` read."""
    changed = [item for item in gitio.committed_files(repo, commit_id)
               if item.path not in memory and not item.is_gitlink]
    if not changed:
        return []
    from gitmem.checks.non_memory_files import FileToScan, scan_files
    from gitmem.secrets import ALLOWLIST_FILE, Allowlist

    allow = Allowlist.parse(gitio.file_at(repo, commit_id, ALLOWLIST_FILE))
    def blob(item: gitio.ChangedFile) -> Callable[[], Iterator[bytes]]:
        return lambda: iter((gitio.read_staged(repo, item),))

    files = [FileToScan(item.path, item.is_link, blob(item)) for item in changed]
    return scan_files(files, allow, committed=True)


def _has_memory(snapshot: Snapshot | None, config: Config) -> bool:
    return snapshot is not None and any(snapshot.oid(path) is not None for path in config.memory_paths().values())


def _adopted(repo: gitio.Repo, commit_id: str | None, snapshot: Snapshot | None, config: Config) -> bool:
    """Whether the commit holding `snapshot` has gitmem's memory: some memory file, and a gitmem.yaml or every
    required one. A project's own file under a default name (its ROADMAP.md, a LOG.md) from before gitmem was
    adopted is no memory, and the files it has no companions of are no defect (GM904)."""
    if commit_id is None or not _has_memory(snapshot, config):
        return False
    assert snapshot is not None
    return gitio.file_id_at(repo, commit_id, CONFIG_NAME) is not None or all(
        snapshot.oid(config.path(role)) is not None for role in REQUIRED_ROLES)


@record
class RangeResult:
    """The violations found over a range of commits, how many commits it held, and whether one rewrote history."""
    violations: list[Violation] = field(default_factory=list)
    commits: int = 0
    rewritten: bool = False
    before_adoption: int = 0        # commits from before gitmem was adopted: no memory in them to check


@record(frozen=True)
class Span:
    """The commits to verify: reachable from `end`, not from `start` (None: from the root) nor from `hide`."""

    start: str | None
    end: str
    hide: tuple[str, ...] = ()


class ShallowHistoryError(gitio.RepoError):
    """The range reaches past where a shallow clone's history stops."""


SHALLOW_HINT = ("this clone is shallow, and its history stops inside the range; fetch the whole history "
                "(actions/checkout with `fetch-depth: 0`, or `git fetch --unshallow`) and verify again")


def new_branch(ws: Workspace, end: str, *, remote: str | None = None, pushed: bool = False,
               branch: str | None = None) -> Span:
    """A branch new to the remote: only the commits no remote-tracking branch has, as pre-commit computes it.

    Before the push (a pre-push hook) every branch of `remote` (all remotes when None) is verified history.
    After it (CI on the push), the new branch is on the remote itself: with its name (`branch`), every
    other branch counts; without it, branches that contain `end` do not count, so the span may hold more
    than needed, never less.
    """
    repo = ws.repo
    last = _resolve(ws, end)
    tips = gitio.remote_tips(repo, remote)
    if pushed and branch:
        name = branch.removeprefix("refs/heads/")
        hidden = {tip for ref, tip in tips.items() if ref.split("/", 3)[-1] != name}
    elif pushed:
        hidden = {tip for tip in tips.values() if not gitio.is_ancestor(repo, last, tip)}
    else:
        hidden = set(tips.values())
    return Span(None, last, tuple(sorted(hidden)))


def pushed_span(ws: Workspace, remote_sha: str | None, local_sha: str, *, remote: str | None = None) -> Span:
    """What a push of `local_sha` over `remote_sha` sends. A new branch, or a remote tip this clone does not
    have (someone else pushed), counts as new, like pre-commit does."""
    if remote_sha is not None and gitio.exists(ws.repo, remote_sha):
        return Span(remote_sha, local_sha)
    return new_branch(ws, local_sha, remote=remote)


def span_length(ws: Workspace, span: Span) -> int:
    """How many commits `verify_range` would check (counted apart, so callers can show progress)."""
    return gitio.count_range(ws.repo, span.start, span.end, span.hide)


def _resolve(ws: Workspace, rev: str) -> str:
    try:
        return gitio.resolve_revision(ws.repo, rev)
    except gitio.RepoError as err:
        if gitio.shallow_commits(ws.repo):
            raise ShallowHistoryError(f"{err}: {SHALLOW_HINT}") from None
        raise


def _dropped(ws: Workspace, rev: str) -> bool:
    """`rev` is a full commit id this complete (not shallow) clone does not hold: no commit here descends from
    it. A push event's `before` after a force-push is one: no branch holds the old tip, so no checkout fetches it."""
    full_id = len(rev) in (40, 64) and not rev.strip("0123456789abcdef")      # a SHA-1 or a SHA-256 id
    return full_id and not gitio.has_object(ws.repo, rev) and not gitio.shallow_commits(ws.repo)


def verify_range(ws: Workspace, start: str | None, end: str, *, hide: tuple[str, ...] = (),
                 progress: Callable[[int], None] | None = None, by_this_clock: bool = True,
                 every_file: bool = True) -> RangeResult:
    """Check every commit in START..END (not reachable from `hide`) against each of its parents, each side
    with the config it carries. `progress(n)` is called after each commit. `every_file` reads every file a
    commit brings for secrets (GM903), as `check` does; without it, only memory is judged.

    With no START, every commit reachable from END is checked (a first push). Memory stays flat in the
    length of the range: one commit's snapshots are alive at a time, and parsed configs are few.
    A merge is judged against its first parent like any commit, and against every other parent for what that
    parent added: nothing appended or resolved on any parent may be lost (`gitmem.checks.merges`).
    """
    repo, workspace = ws.repo, ws.name or None
    last = _resolve(ws, end)
    dropped = bool(start) and _dropped(ws, str(start))
    first = _resolve(ws, start) if start and not dropped else None
    shallow = gitio.shallow_commits(repo)
    result = RangeResult()
    if dropped or first is not None and not gitio.is_ancestor(repo, first, last):
        if shallow:     # the cut hides whether it descends: say so rather than call it rewritten
            raise ShallowHistoryError(f"cannot tell whether {end} descends from {start}: {SHALLOW_HINT}")
        result.rewritten = True
        result.violations.append(Violation.of(codes.HISTORY_REWRITTEN, "(range)", 1, end=end, start=start))
        return result
    newest = _Newest(repo, last)
    generations = Generations(repo)
    # A fast clock dates a commit ahead as well as its entries (GM309): the verifying clock sees it. A cycle
    # about to start passes by_this_clock=False: another writer's clock is never the cycle's to refuse for.
    verifying = ws.clock()() if by_this_clock else None
    configs: dict[str | None, Config | None] = {}
    old_configs: dict[str, Config | None] = {}
    previous: tuple[str, list[str], Snapshot | None] | None = None
    amended: dict[str, set[int]] = {}
    for commit in gitio.walk_range(repo, first, last, hide):
        if commit.id in shallow:        # git lists only commits whose parents it did not fetch
            raise ShallowHistoryError(f"commit {commit.short} is where the history stops, and its parent is "
                                      f"needed to check it: {SHALLOW_HINT}")
        result.commits += 1
        config = _commit_config(repo, commit, configs, workspace, generations)
        if config is None:          # the workspace does not exist in this commit: it has no memory to check
            previous = None
            continue
        paths = _paths(config)
        parent = commit.parents[0] if commit.parents else None
        # Consecutive commits share a snapshot: the parent's is the one just checked, contents already read.
        if previous is not None and parent is not None and previous[0] == parent and previous[1] == paths \
                and _same_config(repo, parent, commit.id):
            side = Side(previous[2], None)
        else:
            side = old_side(repo, parent, config, workspace=workspace, source=newest.read, configs=old_configs)
        new = _derived(repo, gitio.commit_snapshot(repo, commit.id, paths), paths, newest.read)
        assert new is not None      # commit_snapshot is None only for no commit, never for a commit
        previous = (commit.id, paths, new)
        if progress is not None:
            progress(1)
        others = [old_side(repo, other, config, workspace=workspace, source=newest.read, configs=old_configs)
                  for other in commit.parents[1:]]
        if parent is not None and others:
            others = [_as_merged(repo, config, parent, other, side, theirs, new, workspace=workspace,
                                 source=newest.read, configs=old_configs)
                      for other, theirs in zip(commit.parents[1:], others, strict=True)]
        if not _adopted(repo, commit.id, new, config) and not any(
                _adopted(repo, p, s.snapshot, s.config or config) for p, s in zip(commit.parents, (side, *others),
                                                                                  strict=False)):
            result.before_adoption += 1     # history from before gitmem was adopted: there is no memory to check
            continue
        made_under = generations.of(commit, config.rules_version)
        # Every other file the commit brings, as `check` reads every staged file: made under rules 5 or later.
        outside = other_files_committed(repo, commit.id, _read_as_memory(config)) \
            if every_file and made_under >= _COMMITTED_FILES else []
        found = outside + run_checks(CheckInput(
            config, side.snapshot, new, commit.author.email, side.config, side.remapped,
            tuple(s.snapshot for s in others if s.snapshot is not None),
            _unsigned(repo, commit.id, side.config or config),
            moment=commit.committed, moment_is_commit=True, verifying=verifying, generation=made_under))
        if others:
            from gitmem.checks import merges

            parents = [(p[:10], s.snapshot) for p, s in zip(commit.parents[1:], others, strict=False)]
            found += merges.check_merge(config, side.snapshot, parents, new, generation=made_under)
        # An entry that END's LOG amends is forgiven in every commit: the amendment stands in its place (rules 4).
        found = _forgiven(found, config.path("log"), newest, amended, new)
        # Each commit answers for the rules it was made under: an upgrade does not make old history invalid.
        result.violations += [replace(v, message=f"{v.message} (commit {commit.short})")
                              for v in judged(found, made_under)]
    result.violations.sort()
    return result


def _as_merged(repo: gitio.Repo, config: Config, first: str, other: str, side: Side, theirs: Side, merged: Snapshot,
               *, workspace: str | None, source: Callable[[str], bytes | None],
               configs: dict[str, Config | None]) -> Side:
    """A merge's later parent `other` as the merge holds it: its new decisions and lessons renamed after the first
    parent's, as the merge renamed them (gitmem.checks.merges.as_merged), both sides read from where they split."""
    from gitmem.checks import merges

    fork = gitio.merge_base(repo, first, other)
    if theirs.snapshot is None or fork is None:
        return theirs
    base = old_side(repo, fork, config, workspace=workspace, source=source, configs=configs).snapshot
    return replace(theirs, snapshot=merges.as_merged(config, base, side.snapshot, theirs.snapshot, merged))


# The rules generation from which `verify` reads every file a commit brings (GM903's `committed_*` variants):
# asked only for commits made under it, so older history costs no extra reading.
_COMMITTED_FILES = codes.SECRET_LIKE_TOKEN.generation("committed_file")

# The rules generation that bounded gitmem.yaml's values (0.2.0): a config brought by a commit made under it or
# later is read strictly; later generations add rules, not a second strictness.
STRICT_CONFIG_SINCE = 2


def _unsigned(repo: gitio.Repo, commit_id: str, trusting: Config) -> Callable[[], str]:
    """Why `commit_id` is not signed by a key the old side's config trusts ("" when it is): keys added in the
    same commit count for nothing."""
    return lambda: gitio.unsigned_why(repo, commit_id, trusting.trust.signing_keys)


def _commit_config(repo: gitio.Repo, commit: gitio.Commit, configs: dict[str | None, Config | None],
                   workspace: str | None, generations: Generations) -> Config | None:
    """The config a commit carries, read by the rules it was written under: with every rule of this release
    only when the commit brings it (new bytes) and was made under this release's rules (its rules version).
    None when `workspace` is not one of its workspaces (one added later, or removed)."""
    key = gitio.file_id_at(repo, commit.id, CONFIG_NAME)
    if key not in configs:     # parse each distinct gitmem.yaml once, not once per commit
        data = gitio.file_at(repo, commit.id, CONFIG_NAME)
        brought = all(gitio.file_id_at(repo, parent, CONFIG_NAME) != key for parent in commit.parents)
        try:
            if workspace and all(name != workspace for name, _ in config_at(data, strict=False).workspaces):
                configs[key] = None
                return None
            config = config_at(data, workspace=workspace, strict=False)
            if brought and generations.of(commit, config.rules_version) >= STRICT_CONFIG_SINCE:
                config = config_at(data, workspace=workspace, strict=True)
        except ConfigError as err:
            raise _in_commit(err, commit) from None
        configs[key] = config
    return configs[key]


def _in_commit(err: ConfigError, commit: gitio.Commit) -> ConfigError:
    """A config error of the gitmem.yaml `commit` carries, still the one line `path:line: GMnnn message` (its code,
    path and line kept as data for --json), the commit named after its words as every violation of `verify` has
    it."""
    if err.code is None:
        return ConfigError(f"commit {commit.short}: {err}")
    return refused(err.code, f"{err.path}:{err.line}", f"{err.text} (commit {commit.short})")


def _forgiven(found: list[Violation], path: str, newest: _Newest, amended: dict[str, set[int]],
              new: Snapshot) -> list[Violation]:
    """`found` (in the commit whose memory is `new`) without what the amendments in END's LOG at `path` forgive
    (`gitmem.checks.amendments`). LOG is append-only, so a line of END's LOG is the same line in every commit whose
    LOG END's appends to; a merge's other parent held the entries it brought at other lines, and is forgiven the
    amended entries where it held them."""
    if not any(v.path == path for v in found):
        return found
    from gitmem.checks import amendments

    if path not in amended:
        data = newest.read(path)
        amended[path] = amendments.superseded_lines(data) if data is not None else set()
    lines = amended[path]
    if not lines:
        return found
    tip, data = newest.read(path), new.read(path)
    if tip is not None and data is not None and not tip.startswith(data):
        candidates = [v.line for v in found if v.path == path and v.code in amendments.FORGIVEN]
        lines = amendments.moved_lines(tip, lines, data, candidates)
    return amendments.forgive(found, path, lines)


def _same_config(repo: gitio.Repo, a: str, b: str) -> bool:
    return gitio.file_id_at(repo, a, CONFIG_NAME) == gitio.file_id_at(repo, b, CONFIG_NAME)


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
