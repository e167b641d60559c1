"""An open repository, found the way the git command line finds it, and the small facts about it.

`Repo` is the handle the rest of gitmem holds. It wraps a pygit2.Repository that never leaves the git
layer: every function of `gitmem.gitio` takes a `Repo` and answers in plain types (paths, hex ids,
names, dataclasses of those).
"""
from __future__ import annotations

import os
import re
from collections.abc import Iterable
from pathlib import Path

import pygit2
from pygit2.enums import FileStatus, RepositoryOpenFlag

from gitmem.errors import ExitCode, GitmemError
from gitmem.records import record

STATE_DIR_NAME = "gitmem"     # .git/gitmem/: locks, the recall index, caches; never committed
# libgit2's words when its safe.directory check refuses a repository another user owns (compiled only when a
# repository fails to open: the pre-commit path compiles no pattern it does not use)
NOT_OWNED = r"repository path '(.*)' is not owned by current user"


class RepoError(GitmemError):
    """A git problem, with a message that tells the user what to do."""

    exit_code = ExitCode.USAGE


# libgit2's status lists no folder this many levels below the top of the work tree ("directory nesting too deep"),
# where git itself does: the whole listing fails.
LISTED_DEPTH = 100


def explained(err: BaseException) -> RepoError | None:
    """A RepoError saying what git could not read and how to repair it; None for anything but git's errors
    (those are bugs, and must keep their traceback)."""
    if isinstance(err, RepoError) or not isinstance(err, pygit2.GitError):
        return None
    what = str(err).strip() or type(err).__name__
    lowered = what.lower()
    if "nesting too deep" in lowered:        # `git status` shows nothing wrong there: say what is
        return RepoError(f"git cannot list the work tree ({what}): a folder lies {LISTED_DEPTH} levels or more below "
                         "its top, deeper than gitmem's git library goes, though git itself lists it; move that "
                         "folder, or git-ignore it")
    if "index" in lowered:
        return RepoError(f"git cannot read the index ({what}); if .git/index is damaged, rebuild it from HEAD with "
                         "`rm .git/index && git reset` (this unstages every staged change)")
    if any(word in lowered for word in ("object", "tree", "blob", "commit", "odb", "pack", "not found")) or \
            re.fullmatch(r"'?[0-9a-f]{7,64}'?", lowered):         # a missing object is named by its id only
        return RepoError(f"git cannot read what the repository needs ({what}); `git fsck` shows what is damaged "
                         "or missing (a fresh clone repairs a damaged copy)")
    return RepoError(f"git failed: {what}; `git status` shows what is wrong with the repository")


@record(frozen=True)
class Identity:
    """A git author or committer: name and email."""
    name: str
    email: str

    def __str__(self) -> str:
        return f"{self.name} <{self.email}>"


class Repo:
    """An open repository. Build it with `open_repo`; `raw` is for the git layer only."""

    def __init__(self, raw: pygit2.Repository) -> None:
        self.raw = raw

    def __repr__(self) -> str:
        return f"Repo({self.raw.path!r})"


def open_repo(path: str | Path | None = None) -> Repo:
    """Open like the git command line does.

    Without `path`: GIT_DIR names the repository (else it is found from the current directory), and the
    work tree is GIT_WORK_TREE, else core.worktree, else (with GIT_DIR) the current directory, as git has
    it. GIT_INDEX_FILE is honoured either way: hooks get a temporary index during `git commit -a`. Relative
    GIT_DIR and GIT_WORK_TREE are made absolute in the environment, as git's own commands see them, so that
    libgit2 and the agent a cycle starts (in the work tree, not here) find the same repository.
    """
    start = str(path) if path is not None else os.getcwd()
    git_dir = _absolute_env("GIT_DIR") if path is None else None
    work_tree = _absolute_env("GIT_WORK_TREE") if path is None else None
    if git_dir and not os.path.isdir(git_dir):
        raise RepoError(f"GIT_DIR={git_dir} is not a directory; point it at a repository's .git or unset it")
    if work_tree and not os.path.isdir(work_tree):
        raise RepoError(f"GIT_WORK_TREE={work_tree} is not a directory; point it at the work tree or unset it")
    try:
        if git_dir:
            raw = pygit2.Repository(git_dir, RepositoryOpenFlag.FROM_ENV)
        elif path is None or os.environ.get("GIT_INDEX_FILE"):
            raw = pygit2.Repository(start, RepositoryOpenFlag.FROM_ENV)
        else:
            raw = pygit2.Repository(start)
    except pygit2.GitError as err:
        where = f"GIT_DIR={git_dir}" if git_dir else start
        owned = re.search(NOT_OWNED, str(err))
        if owned:       # git's safe.directory check: the repository is there, and another user owns it
            raise RepoError(f"{where}: git refuses the repository at {owned.group(1)}, which is owned by another "
                            "user; run gitmem as its owner, or, if you trust it: git config --global --add "
                            f"safe.directory {owned.group(1)}") from None
        raise RepoError(f"{where} is not inside a git repository; run `git init` first") from None
    if work_tree:
        raw.workdir = work_tree
    elif git_dir and "core.worktree" not in raw.config and not raw.is_bare:
        raw.workdir = os.getcwd()
    return Repo(raw)


def _absolute_env(name: str) -> str | None:
    value = os.environ.get(name)
    if value and not os.path.isabs(value):
        value = os.environ[name] = os.path.abspath(value)
    return value or None


def init_repo(path: Path) -> Repo:
    """`git init PATH` with `main` as the first branch."""
    return Repo(pygit2.init_repository(str(path), initial_head="main"))


def work_tree(repo: Repo) -> Path | None:
    """The top of the work tree; None for a bare repository."""
    return Path(repo.raw.workdir) if repo.raw.workdir is not None else None


def root(repo: Repo) -> Path:
    found = work_tree(repo)
    if found is None:
        raise RepoError("this is a bare repository; gitmem needs a work tree")
    return found


def git_dir(repo: Repo) -> Path:
    return Path(repo.raw.path)


def shown_path(repo: Repo, path: Path) -> str:
    """`path` as a diagnostic names it: relative to the work tree when it is inside it (`.git/gitmem/cycle.lock`),
    else whole (a linked work tree's git directory, a bare repository's)."""
    tree = work_tree(repo)
    if tree is not None and path.is_relative_to(tree):
        return path.relative_to(tree).as_posix()
    return str(path)


def state_dir(repo: Repo) -> Path:
    """`.git/gitmem/`: where gitmem keeps its lock, caches and the recall index (per work tree)."""
    return git_dir(repo) / STATE_DIR_NAME


def state_dir_of(root_path: Path) -> Path | None:
    """The state directory of the repository whose work tree is `root_path`; None when it is not one."""
    try:
        repo = Repo(pygit2.Repository(str(root_path), RepositoryOpenFlag.NO_SEARCH))
    except pygit2.GitError:
        return None
    return state_dir(repo)


def is_unborn(repo: Repo) -> bool:
    return bool(repo.raw.head_is_unborn)


def head_id(repo: Repo) -> str | None:
    """HEAD's commit id as hex; None for an unborn HEAD."""
    if repo.raw.head_is_unborn:
        return None
    return str(repo.raw.head.peel(pygit2.Commit).id)


def current_branch(repo: Repo) -> str | None:
    """The short branch name; None when HEAD is detached."""
    raw = repo.raw
    if raw.head_is_detached:
        return None
    ref = raw.references.get("HEAD")
    target = ref.target if ref is not None else None
    return str(target).removeprefix("refs/heads/") if isinstance(target, str) else raw.head.shorthand


def user_identity(repo: Repo) -> Identity | None:
    """Who would author a commit now: GIT_AUTHOR_* first, then user.name / user.email."""
    name = os.environ.get("GIT_AUTHOR_NAME")
    email = os.environ.get("GIT_AUTHOR_EMAIL")
    config = repo.raw.config
    try:
        name = name or config["user.name"]
        email = email or config["user.email"]
    except KeyError:
        pass
    if not name or not email:
        return None
    return Identity(name, email)


def config_value(repo: Repo, key: str) -> str | None:
    """A git config value (`branch.main.remote`), or None when unset."""
    try:
        return str(repo.raw.config[key])
    except KeyError:
        return None


_DIRTY_LABELS = (
    (FileStatus.INDEX_NEW | FileStatus.INDEX_MODIFIED | FileStatus.INDEX_DELETED | FileStatus.INDEX_RENAMED
     | FileStatus.INDEX_TYPECHANGE, "staged"),
    (FileStatus.WT_MODIFIED | FileStatus.WT_DELETED | FileStatus.WT_TYPECHANGE | FileStatus.WT_RENAMED, "modified"),
    (FileStatus.WT_NEW, "untracked"),
    (FileStatus.CONFLICTED, "conflicted"),
)


def dirty_files(repo: Repo) -> list[tuple[str, str]]:
    """(path, what) for staged, modified and untracked-but-not-ignored files, sorted by path."""
    found = []
    for path, flags in repo.raw.status(untracked_files="all", ignored=False).items():
        for mask, label in _DIRTY_LABELS:
            if flags & mask:
                found.append((path, label))
                break
    return sorted(found)


def unmerged(repo: Repo, paths: Iterable[str]) -> list[str]:
    """Those of `paths` the index holds unmerged (a merge, rebase or cherry-pick stopped on a conflict in them,
    and the work-tree file holds git's conflict markers), sorted."""
    conflicts = repo.raw.index.conflicts
    if conflicts is None:
        return []
    held = {(base or ours or theirs).path for base, ours, theirs in conflicts}
    return sorted(held.intersection(paths))


def is_branch_name(name: str) -> bool:
    """Whether `name` is a plain branch name git accepts (`git check-ref-format --branch`), not a full
    reference name (`refs/heads/x` would make a branch called that), nor one a command line takes for an option."""
    return not name.startswith(("refs/", "-")) and pygit2.reference_is_valid_name(f"refs/heads/{name}")


def references(repo: Repo, prefix: str = "refs/") -> list[str]:
    """Full names of the references under `prefix`. Only names git accepts: an agent can write a file under
    .git/refs by any name (an escape sequence, `..`), and git itself would refuse to resolve it, so a reader
    that lists it would fail on it or print it."""
    return sorted(name for name in repo.raw.references
                  if name.startswith(prefix) and pygit2.reference_is_valid_name(name))
