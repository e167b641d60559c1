"""What a commit cannot hold: the runner keeps it out of its commits, and out of the work tree.

- A changed file over `cycle.max_file_bytes` (GitHub refuses files over 100 MB).
- A changed file larger than the free space on the repository's disk: an agent that filled the disk would
  leave a file no commit, not even the salvage branch's, can store (moving it costs no space).
- A file on a path no commit of gitmem's can hold: one a file system takes for `.git`, and one whose name is
  not UTF-8 (a Latin-1 name, a stray byte), which pygit2 cannot name and a clone on macOS or Windows could not
  check out.
- A folder nested DEPTH_LIMIT levels down, outside what git ignores (`hold_too_deep`): libgit2's status stops at
  it ("directory nesting too deep"), so no cycle could list, commit or salvage anything until it was gone.
- A git repository the agent made inside the work tree (`git init sub`, a clone, a linked worktree): git
  shows it as one untracked directory that no commit takes as files, so it would leave the tree dirty and
  every later cycle would refuse to start. And a folder that is itself a git directory (`git init --bare sub`,
  told it has a work tree): git shows its files, which a commit would take, and in the human's checkout git
  run inside that folder would find it as a repository and run its configuration (`is_repository`).
- A file pytest runs by its name (gitmem.agents.bytecode `RunByName`) that the agent made or changed in a
  git-ignored folder pytest collects from (`hold_runnable`): pytest reads no .gitignore, so it would run at the
  human's next `pytest`, and no diff would show it. Held, not removed: it may be the agent's honest work.
Either is moved to `.git/gitmem/held/cycle-N/<path>`, never deleted, and
the work tree gets back what HEAD has there (nothing, for a new path). So the cycle commits without it, the next
cycle starts from a clean tree, and nothing is lost. A file held there, or in a folder held there, that pytest may
run by its name (gitmem.agents.bytecode `may_run`: any `.py`, a doctest `test*.txt`) is kept as `<name>.held`
(`disarm_runnable`): a project whose own norecursedirs leaves out `.*` sends pytest into .git/ as well, and it would
import the file there under its own name. A secret value in what is held is masked there, as in a
commit (a run's cache carries `.git/gitmem` on). A held repository is kept in a form that runs nothing: its
`.git` (and any `.git` deeper in it) is renamed `.git.held` (`disarm_nested_repos`), so no git command there
finds it and runs what the agent configured (core.fsmonitor runs at `git status`, core.pager at `git log`,
hooks at `git commit`); the note tells the human to read its history in a clone, which takes objects and refs,
never config or hooks.
Memory files are exempt from the size limit on the cycle's own commit: their growth is judged by the GM
rules (GM307 for a LOG entry), and a long-lived LOG outgrows any fixed size.
"""
from __future__ import annotations

import contextlib
import os
import shutil
import stat
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from gitmem import codes, gitio
from gitmem.agents.bytecode import may_run
from gitmem.agents.protected import names_git_dir
from gitmem.codes import Code
from gitmem.confined.walk import walk_tree
from gitmem.cycle.messages import quoted_path
from gitmem.cycle.scrub import scrub_held
from gitmem.workspace import Workspace
from gitmem.workspace.statedir import state_directory

HELD_DIR = "held"
DEPTH_LIMIT = gitio.LISTED_DEPTH     # libgit2's status refuses a tree with a folder this many levels below the top
INERT_GIT = ".git.held"      # what a held repository's `.git` is renamed to: no git command looks for it
INERT_RUNNABLE = ".held"     # what a held file pytest may run by name gets after it (`conftest.py.held`)


@dataclass(frozen=True)
class Held:
    path: str          # repo-relative, where the file or the repository was
    size: int          # a file's size in bytes; 0 for a repository
    kept: str          # where it is now: from the work tree's root when inside it (.git/gitmem/held/...)
    repository: bool = False
    free: int | None = None    # the disk's free bytes, when it was held for not fitting them
    masked: bool = False       # a secret value in it was masked where it is kept (gitmem.cycle.scrub.scrub_held)
    git_name: bool = False     # a path a file system takes for `.git`
    too_deep: bool = False     # a folder DEPTH_LIMIT levels down, held whole
    not_utf8: bool = False     # a name that is not UTF-8 (`path` and `kept` show such bytes escaped)
    runnable: bool = False     # a file pytest runs by its name, in a git-ignored folder
    renamed: bool = False      # what pytest may run by name in it was kept as `<name>.held` (`disarm_runnable`)

    @property
    def code(self) -> Code:
        if self.runnable:
            return codes.CYCLE_RUNNABLE_HELD
        if self.git_name or self.not_utf8 or self.too_deep:
            return codes.CYCLE_PATH_HELD
        return codes.CYCLE_REPOSITORY_HELD if self.repository else codes.CYCLE_FILE_HELD

    def note(self, limit: int) -> str:
        renamed = self.renamed and not self.runnable
        return self._where(limit) + (
            f"; what pytest could run by its name there is kept as <name>{INERT_RUNNABLE}, which it never runs"
            if renamed else "") + ("; a secret value in it was masked" if self.masked else "")

    def _where(self, limit: int) -> str:
        if self.runnable:
            return (f"kept {self.path} out of the work tree: pytest runs a file of that name from any folder it "
                    f"collects, git-ignored or not, so your next `pytest` would have run it with no diff to show "
                    f"it; it was moved to {self.kept}, a name pytest never runs: read it there, and move it back "
                    "if it is yours")
        if self.too_deep:
            return (f"kept {self.path}/ out of the commit: its folders nest {DEPTH_LIMIT} levels down, past what "
                    f"gitmem's git library lists, which stops every cycle; it was moved to {self.kept}, whole")
        if self.not_utf8:
            return (f"kept {self.path} out of the commit: its name is not UTF-8, which gitmem cannot store and a "
                    f"clone on macOS or Windows cannot check out; it was moved to {self.kept}")
        if self.git_name:
            return (f"kept {self.path} out of the commit: a file system on macOS or Windows takes a folder on its "
                    f"path for `.git`, the repository itself, so git refuses to store it or to check it out; it was "
                    f"moved to {self.kept}")
        if self.repository:
            return (f"kept {self.path}/ out of the commit: it is a git repository of its own, which a commit "
                    f"cannot hold as files; it was moved to {self.kept}, its .git renamed {INERT_GIT} so that no "
                    f"git command there runs the configuration or hooks the agent gave it: read its files as "
                    f"files, and its history in a clone (`git clone {self.kept}/{INERT_GIT} <new directory>`), "
                    f"never with git inside {self.kept}")
        if self.free is not None:
            return (f"kept {self.path} ({self.size} bytes) out of the commit: the disk is full ({self.free} bytes "
                    f"free), too full for git to store it; it was moved to {self.kept}")
        return (f"kept {self.path} ({self.size} bytes) out of the commit: it is over cycle.max_file_bytes="
                f"{limit}; it was moved to {self.kept}")


def hold_out(ws: Workspace, paths: Iterable[str], cycle: int, *, exempt: Iterable[str] = ()) -> list[Held]:
    """Move every regular file of `paths` over the limit or larger than the disk's free space, and every
    repository among them, out of the work tree; returns what was held."""
    limit, skip, free = ws.config.cycle.max_file_bytes, set(exempt), _free_bytes(ws.root)
    held: list[Held] = []
    for listed in paths:
        rel = listed.rstrip("/")            # git lists a repository inside the tree as "sub/"
        full = ws.root / rel
        try:
            found = os.lstat(full)
        except OSError:
            continue
        # Git lists an untracked directory whole, as "sub/", only when it is a repository: with every untracked
        # file shown, a plain directory is listed file by file, and an empty one not at all. (A directory left
        # where a tracked file was is listed by the file's name, with no slash: that one is not held here.)
        git_name, not_utf8 = names_git_dir(rel), not _utf8(rel)
        odd = git_name or not_utf8
        repository = not odd and listed.endswith("/") and stat.S_ISDIR(found.st_mode) and is_repository(full)
        too_big = found.st_size > limit or found.st_size > free
        if not repository and not odd and (rel in skip or not stat.S_ISREG(found.st_mode) or not too_big):
            continue
        target = _held_place(ws, cycle, rel, runnable=not stat.S_ISDIR(found.st_mode))
        if repository and not os.path.lexists(full / ".git"):     # the folder is the git directory
            target.mkdir()
            _move(str(full), str(target / INERT_GIT))
        else:
            _move(str(full), str(target))
        renamed = disarm_runnable(target) or (may_run(full.name) and not stat.S_ISDIR(found.st_mode))
        if repository:
            disarm_nested_repos(target)
            # A folder HEAD tracks that the agent turned into a git directory: HEAD's files come back.
            gitio.restore_paths(ws.repo, gitio.head_files_under(ws.repo, rel))
        elif not not_utf8:                         # (no commit of gitmem's holds such a name to put back)
            gitio.restore_paths(ws.repo, [rel])    # HEAD's version back, if it has one
        # Named from the work tree when it is inside it: the note goes into LOG, which a runner's path would
        # only clutter (and a linked worktree's git directory may be elsewhere).
        kept = target.relative_to(ws.root) if target.is_relative_to(ws.root) else target
        unfit = free if not repository and found.st_size <= limit else None      # held for the disk, not the limit
        masked = scrub_held(target, INERT_GIT)
        held.append(Held(quoted_path(rel), 0 if repository else found.st_size, quoted_path(kept.as_posix()), repository,
                         None if odd else unfit, masked, git_name, not_utf8, renamed=renamed))
    return held


def hold_runnable(ws: Workspace, paths: Iterable[str], cycle: int) -> list[Held]:
    """Move each of `paths` (files pytest runs by name that the agent made or changed in git-ignored folders:
    gitmem.cycle.agent_guard finds them) out of the work tree, to `.git/gitmem/held/cycle-N/<path>.held`."""
    held: list[Held] = []
    for rel in paths:
        full = ws.root / rel
        if not os.path.lexists(full):
            continue
        # always `.held`: pytest runs it by name, or as `testpaths` names it (a doctest `notes.rst` too)
        target = _held_place(ws, cycle, f"{rel}{INERT_RUNNABLE}", runnable=False)
        _move(str(full), str(target))
        kept = target.relative_to(ws.root) if target.is_relative_to(ws.root) else target
        held.append(Held(quoted_path(rel), 0, quoted_path(kept.as_posix()), masked=scrub_held(target, INERT_GIT),
                         runnable=True))
    return held


def hold_too_deep(ws: Workspace, cycle: int, ignored: Callable[[str], bool]) -> list[Held]:
    """Move each folder DEPTH_LIMIT levels below the top of the work tree, whole, out of it (to
    `.git/gitmem/held/cycle-N/`), where libgit2's status stops at it; folders `ignored` says the ignore rules
    hide are never entered, as git's status never does (a deep build output stays). Only when the status failed
    (gitmem.cycle.agent_guard `listed`): a walk of the tree would cost every cycle what only an agent's trick
    needs."""
    held: list[Held] = []
    top = str(ws.root)
    for folder, dirs, _ in walk_tree(top):
        rel = os.path.relpath(folder, top)
        depth = 0 if rel == "." else rel.count(os.sep) + 1
        keep = []
        for name in dirs:
            child = name if depth == 0 else f"{rel}/{name}"
            if (depth == 0 and name == ".git") or ignored(child) or ignored(f"{child}/"):
                continue
            if depth + 1 < DEPTH_LIMIT:
                keep.append(name)
                continue
            target = _held_place(ws, cycle, child, runnable=False)
            _move(os.path.join(folder, name), str(target))
            renamed = disarm_runnable(target)
            _remove_empty_parents(folder, top)
            kept = target.relative_to(ws.root) if target.is_relative_to(ws.root) else target
            held.append(Held(quoted_path(child), 0, quoted_path(kept.as_posix()), too_deep=True,
                             masked=scrub_held(target, INERT_GIT), renamed=renamed))
        dirs[:] = keep
    return held


def _held_place(ws: Workspace, cycle: int, rel: str, *, runnable: bool) -> Path:
    """Where the runner keeps `rel`, a free name under `.git/gitmem/held/cycle-N/` (its folder made), by its
    `inert_name` for a file (`runnable`)."""
    target = state_directory(gitio.state_dir(ws.repo)) / HELD_DIR / f"cycle-{cycle}" / rel
    target.parent.mkdir(parents=True, exist_ok=True)
    return _free_name(target.with_name(inert_name(target.name)) if runnable else target)


def inert_name(name: str) -> str:
    """The name the runner keeps a file by in `.git/gitmem/`: `<name>.held` where pytest may run `name` (`may_run`),
    since a project's settings may send pytest there; any other name as it is."""
    return f"{name}{INERT_RUNNABLE}" if may_run(name) else name


def disarm_runnable(top: Path) -> bool:
    """Rename every file (or link) under the held folder `top` that pytest may run by its name to `<name>.held`,
    or a free name beside it; a held repository's git directory too (a hook or a branch may bear such a name).
    A folder the agent made read-only is made writable for its owner first. True when any was renamed."""
    renamed = False
    for folder, _, names in walk_tree(top):
        runnable = [name for name in names if may_run(name)]
        if runnable and not os.access(folder, os.W_OK | os.X_OK):
            with contextlib.suppress(OSError):
                os.chmod(folder, stat.S_IMODE(os.lstat(folder).st_mode) | stat.S_IRWXU)
        for name in runnable:
            try:
                os.rename(os.path.join(folder, name), _free_name(Path(folder, inert_name(name))))
            except OSError:
                continue          # kept as it is, never lost
            renamed = True
    return renamed


def _move(source: str, target: str) -> None:
    """`shutil.move`, from a folder the agent may have made read-only: opened to its owner for the move, its mode
    put back after (else the move failed, the cycle with it, and its salvage left the file where it was)."""
    folder = os.path.dirname(source)
    if os.access(folder, os.W_OK | os.X_OK):
        shutil.move(source, target)
        return
    mode = stat.S_IMODE(os.lstat(folder).st_mode)
    os.chmod(folder, mode | stat.S_IRWXU)
    try:
        shutil.move(source, target)
    finally:
        os.chmod(folder, mode)


def _free_name(path: Path) -> Path:
    """`path`, or `<path>-2`, `-3`… where something is there already (the agent's own `.held`: never moved over)."""
    found, n = path, 1
    while os.path.lexists(found):
        n += 1
        found = path.with_name(f"{path.name}-{n}")
    return found


def _remove_empty_parents(folder: str, top: str) -> None:
    """rmdir `folder` and each folder above it up to `top` while empty: the chain an agent's `mkdir -p` left."""
    while folder != top:
        try:
            os.rmdir(folder)          # only when empty; never a link (rmdir does not follow one)
        except OSError:
            return
        folder = os.path.dirname(folder)


def _utf8(rel: str) -> bool:
    """Whether the path git listed is UTF-8: a byte that is not comes from the file system as a lone surrogate."""
    try:
        rel.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _free_bytes(root: Path) -> int:
    """The free bytes of the disk holding `root` (as many as can be, when that cannot be read)."""
    try:
        return shutil.disk_usage(root).free
    except OSError:
        return 1 << 62


def nested_repositories(root: Path, hidden: Callable[[str], bool]) -> set[str]:
    """Every folder of the work tree that holds a `.git` (a directory or a `gitdir:` file), as `sub/`, not looked
    into further; links are not followed, and folders `hidden` says are ignored are not entered. libgit2's status
    leaves some of them out (a `.git` file naming a repository elsewhere in the tree, with no index yet), where
    git lists them, and a `git status` run in one runs what that repository's config says."""
    found: set[str] = set()
    for folder, dirs, _ in walk_tree(root):
        rel_folder = Path(folder).relative_to(root).as_posix()
        prefix = "" if rel_folder == "." else f"{rel_folder}/"
        entered = []
        for name in dirs:
            rel = f"{prefix}{name}/"
            if name == ".git" or hidden(rel) or os.path.islink(os.path.join(folder, name)):
                continue
            if is_repository(Path(folder, name)):
                found.add(rel)
            else:
                entered.append(name)
        dirs[:] = entered
    return found


def is_repository(folder: Path) -> bool:
    """Whether git, run inside `folder`, finds a repository there: a `.git` entry (a directory or a `gitdir:`
    file), or `folder` itself a git directory by git's own test (`is_git_directory`: a HEAD beside `objects/`
    and `refs/`, or beside a `commondir` file), as a bare repository or a linked work tree's git directory is."""
    if os.path.lexists(folder / ".git"):
        return True
    return os.path.isfile(folder / "HEAD") and (
        os.path.isfile(folder / "commondir") or (os.path.isdir(folder / "objects") and os.path.isdir(folder / "refs")))


def disarm_nested_repos(top: Path) -> None:
    """Rename every `.git` under `top` (a directory or a `gitdir:` file) to INERT_GIT, or to a free name beside
    it: git then finds no repository there, and `git status` in it runs none of the agent's configuration."""
    for folder, dirs, names in walk_tree(top):
        for name in [n for n in (*dirs, *names) if n == ".git"]:
            os.rename(Path(folder) / name, _free_name(Path(folder) / INERT_GIT))
        dirs[:] = [d for d in dirs if d != ".git"]     # a git directory holds no work tree to look into
