"""Reading history: revisions, ranges, ancestry, and commits as plain values."""
from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pygit2

from gitmem.gitio.repository import Identity, Repo, RepoError, current_branch, head_id
from gitmem.gitio.snapshots import _tree_blob


@dataclass(frozen=True)
class Commit:
    """One commit as gitmem reads it."""

    id: str
    parents: tuple[str, ...]
    message: str
    author: Identity
    committer: Identity
    time: int                   # the committer's time, seconds since the epoch
    offset: int                 # the committer's UTC offset in minutes

    @property
    def short(self) -> str:
        return self.id[:10]

    @property
    def subject(self) -> str:
        return self.message.split("\n", 1)[0]

    @property
    def committed(self) -> datetime:
        """The committer date, in the committer's own zone."""
        return datetime.fromtimestamp(self.time, timezone(timedelta(minutes=self.offset)))


def _plain(commit: pygit2.Commit) -> Commit:
    return Commit(str(commit.id), tuple(str(p) for p in commit.parent_ids), commit.message,
                  Identity(commit.author.name, commit.author.email),
                  Identity(commit.committer.name, commit.committer.email),
                  commit.commit_time, commit.commit_time_offset)


def _resolve(repo: Repo, rev: str) -> pygit2.Commit:
    try:
        return repo.raw.revparse_single(rev).peel(pygit2.Commit)
    except (KeyError, ValueError, pygit2.GitError):
        raise RepoError(f"unknown revision {rev!r}") from None


def resolve_revision(repo: Repo, rev: str) -> str:
    """The commit id a revision (`HEAD~2`, a branch, a hex id) names; RepoError when it names none."""
    return str(_resolve(repo, rev).id)


def commit(repo: Repo, rev: str) -> Commit:
    return _plain(_resolve(repo, rev))


def _walker(repo: Repo, start: str | None, end: str, hide: Iterable[str] = ()) -> pygit2.Walker:
    walker = repo.raw.walk(_resolve(repo, end).id, pygit2.enums.SortMode.TOPOLOGICAL | pygit2.enums.SortMode.REVERSE)
    for rev in ([start] if start else []) + list(hide):
        walker.hide(_resolve(repo, rev).id)
    return walker


def walk_range(repo: Repo, start: str | None, end: str, hide: Iterable[str] = ()) -> Iterator[Commit]:
    """Commits reachable from `end` and not from `start` (all of them when `start` is None) nor from any of
    `hide`, oldest first."""
    for found in _walker(repo, start, end, hide):
        yield _plain(found)


def count_range(repo: Repo, start: str | None, end: str, hide: Iterable[str] = ()) -> int:
    """How many commits `walk_range` would give, without building them (for a progress bar)."""
    return sum(1 for _ in _walker(repo, start, end, hide))


def remote_tips(repo: Repo, remote: str | None = None) -> dict[str, str]:
    """Remote-tracking branch -> its commit id, for one remote or all (`refs/remotes/*`, symbolic refs skipped)."""
    prefix = f"refs/remotes/{remote}/" if remote else "refs/remotes/"
    tips: dict[str, str] = {}
    for name in repo.raw.references:
        if not name.startswith(prefix):
            continue
        ref = repo.raw.references.get(name)
        if ref is None or ref.type != pygit2.enums.ReferenceType.DIRECT:
            continue
        try:
            tips[name] = str(ref.peel(pygit2.Commit).id)
        except (pygit2.GitError, ValueError, KeyError):
            continue
    return tips


def exists(repo: Repo, rev: str) -> bool:
    """True when `rev` names a commit here (False, not an error, for an unknown id)."""
    try:
        _resolve(repo, rev)
    except RepoError:
        return False
    return True


def shallow_commits(repo: Repo) -> frozenset[str]:
    """The commits where a shallow clone's history is cut (`.git/shallow`); empty for a full clone."""
    if not repo.raw.is_shallow:
        return frozenset()
    try:
        text = (Path(repo.raw.path) / "shallow").read_text(encoding="ascii")
    except OSError:
        return frozenset()
    return frozenset(line.strip() for line in text.splitlines() if line.strip())


def merge_base(repo: Repo, a: str, b: str) -> str | None:
    """The merge base of two revisions as a hex id; None when they share no history."""
    base = repo.raw.merge_base(_resolve(repo, a).id, _resolve(repo, b).id)
    return str(base) if base is not None else None


def is_ancestor(repo: Repo, ancestor: str, descendant: str) -> bool:
    """True when `ancestor` is `descendant` or reachable from it (both revisions must exist)."""
    old, new = _resolve(repo, ancestor).id, _resolve(repo, descendant).id
    return old == new or bool(repo.raw.descendant_of(new, old))


def is_ancestor_id(repo: Repo, ancestor: str, descendant: str) -> bool:
    """Like `is_ancestor`, but False when either is unknown (gc'd, rewritten) instead of an error."""
    try:
        old = repo.raw.get(ancestor)
        new = repo.raw.get(descendant)
        if old is None or new is None:
            return False
        return old.id == new.id or bool(repo.raw.descendant_of(new.id, old.id))
    except (ValueError, KeyError, pygit2.GitError):
        return False


def head_off(repo: Repo, branch: str, tip: str | None = None) -> str:
    """Why HEAD is not on `branch` (at `tip` or after it, when given), in a few words; "" when it is. What a run
    that began on `branch` at `tip` asks before it acts on HEAD again: the human may have switched branches,
    detached HEAD, or reset the branch below `tip` meanwhile (git takes no gitmem lock)."""
    now = current_branch(repo)
    if now is None:
        return f"HEAD left {branch} (it is detached now)"
    if now != branch:
        return f"HEAD is on {now} now, not {branch}"
    head = head_id(repo)
    if tip is None or (head is not None and is_ancestor_id(repo, tip, head)):
        return ""
    return f"{branch} no longer holds {tip[:10]}"


@dataclass(frozen=True)
class CommitInfo:
    """One commit as recall indexes it."""

    id: str
    time: int                   # seconds since the epoch
    offset: int                 # the committer's UTC offset in minutes
    author: str
    message: str
    touched: frozenset[str]     # which of the asked-for paths differ from the first parent


def _blob_ids(tree: pygit2.Tree, paths: Iterable[str]) -> dict[str, str | None]:
    found: dict[str, str | None] = {}
    for path in paths:
        blob = _tree_blob(tree, path)
        found[path] = str(blob.id) if blob is not None else None
    return found


def _commit_info(found: pygit2.Commit, wanted: tuple[str, ...]) -> CommitInfo:
    parent = found.parents[0] if found.parents else None
    if not wanted or (parent is not None and parent.tree_id == found.tree_id):
        touched: frozenset[str] = frozenset()
    else:
        mine = _blob_ids(found.tree, wanted)
        theirs = _blob_ids(parent.tree, wanted) if parent is not None else {}
        touched = frozenset(p for p in wanted if mine[p] != theirs.get(p))
    return CommitInfo(str(found.id), found.commit_time, found.commit_time_offset, found.author.name,
                      found.message, touched)


LINEAR_LIMIT = 2000


def commits_since(repo: Repo, start: str | None, paths: Iterable[str] = ()) -> list[CommitInfo] | None:
    """Commits reachable from HEAD and not from `start` (all when None), oldest first; None when `start`
    is not an ancestor of HEAD (history was rewritten, or `start` is gone).

    `touched` names which of `paths` differ from the first parent, by blob id: a tree lookup per path,
    never a full diff. A linear stretch since `start` is followed parent by parent, so the cost follows
    the number of new commits, not the length of history; merges fall back to a revision walk.
    """
    wanted = tuple(paths)
    raw = repo.raw
    if raw.head_is_unborn:
        return [] if start is None else None
    head = raw.head.peel(pygit2.Commit)
    if start is not None:
        chain: list[pygit2.Commit] = []
        current = head
        for _ in range(LINEAR_LIMIT):
            if str(current.id) == start:
                return [_commit_info(c, wanted) for c in reversed(chain)]
            if len(current.parents) != 1:
                break
            chain.append(current)
            current = current.parents[0]
        if not is_ancestor_id(repo, start, str(head.id)):
            return None
    walker = raw.walk(head.id, pygit2.enums.SortMode.TOPOLOGICAL | pygit2.enums.SortMode.REVERSE)
    if start is not None:
        walker.hide(pygit2.Oid(hex=start))
    return [_commit_info(found, wanted) for found in walker]


def history(repo: Repo, start: str = "HEAD") -> Iterator[Commit]:
    """Commits reachable from `start`, newest first (topological: a commit comes before its parents)."""
    walker = repo.raw.walk(_resolve(repo, start).id, pygit2.enums.SortMode.TOPOLOGICAL | pygit2.enums.SortMode.TIME)
    for found in walker:
        yield _plain(found)


@dataclass(frozen=True)
class Change:
    """A commit whose version of a path is new: it differs from the version in every parent."""

    commit: Commit
    blob: str | None                    # the path's blob id in the commit (None: removed)
    parents: tuple[str | None, ...]     # its blob id in each parent


def changes(repo: Repo, path: str, start: str = "HEAD") -> Iterator[Change]:
    """Commits reachable from `start`, newest first by commit time, that changed `path` themselves.

    A merge that took one side's version changed nothing: the change is found on that side. Only blob ids are
    compared (a tree lookup per commit), so walking a long history costs no blob reads. libgit2's unsorted
    walk is already newest first by commit date, and it yields as it goes: any sort mode (time, topological)
    first walks all of history, and callers stop after the first few changes.
    """
    raw = repo.raw
    walker = raw.walk(_resolve(repo, start).id, pygit2.enums.SortMode.NONE)
    for found in walker:
        mine = _blob_ids(found.tree, (path,))[path]
        theirs = tuple(_blob_ids(parent.tree, (path,))[path] for parent in found.parents)
        if (not theirs and mine is not None) or (theirs and all(blob != mine for blob in theirs)):
            yield Change(_plain(found), mine, theirs)


def blob(repo: Repo, blob_id: str) -> bytes:
    """The bytes of a blob by its id, read from the object database: a loose object is inflated once, where
    looking the object up and then asking for its data takes libgit2 twice as long (a 1.4 MB LESSONS blob,
    which the close reads at many commits: about 20 ms against 40)."""
    kind, data = repo.raw.odb.read(blob_id)
    if kind != pygit2.enums.ObjectType.BLOB:
        raise ValueError(f"{blob_id} is not a blob")
    return bytes(data)


def signature(repo: Repo, commit_id: str) -> tuple[bytes, bytes] | None:
    """(signature, signed payload) of a signed commit; None when it is not signed."""
    found = _resolve(repo, commit_id).gpg_signature
    if not found or found[0] is None or found[1] is None:
        return None
    return bytes(found[0]), bytes(found[1])


def last_phase_commit(repo: Repo, by_agent: Callable[[str], bool], *, depth: int = 64) -> str | None:
    """The newest of HEAD's first-parent ancestors, at most `depth` back, that a cycle or a close committed: by
    an author email `by_agent` takes for the agent's, with a `Gitmem-Phase:` trailer. None when there is none
    that near. Which email is the agent's is the checks' one rule (gitmem.checks.rule_inputs.authorship_of), which
    this layer, below the checks, is handed."""
    raw = repo.raw
    if raw.head_is_unborn:
        return None
    walker = raw.walk(raw.head.target, pygit2.enums.SortMode.NONE)     # any sort would walk all history first
    walker.simplify_first_parent()
    for seen, found in enumerate(walker):
        if seen >= depth:
            break
        if is_phase_commit(found.message, found.author.email, by_agent):
            return str(found.id)
    return None


def is_phase_commit(message: str, author_email: str, by_agent: Callable[[str], bool]) -> bool:
    """Whether a commit is one a cycle or a close made: by the agent (`by_agent` on its author's email), with a
    `Gitmem-Phase:` trailer."""
    return "\nGitmem-Phase: " in message and by_agent(author_email)
