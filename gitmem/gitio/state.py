"""The git state that changes what git runs or sees, as files and references: what a cycle's guard watches.

`state_paths` names the files and directories (inside the git directory, the same files of each submodule's and
each other linked work tree's git directory with the `.git` files that point at them, and the user's global config
files that git reads); `config_files` names every config file git reads for the repository, the files they
include with them, and `config_files_in_tree` those of every git directory in its work tree; `references_all`
and `set_reference` read and put back every reference; `ignored` says what the ignore rules hide; `tree_links`
lists a commit's symlinks; `lock_files` finds the lock files git leaves; `config_entries` reads one config file as
git reads it.
"""
from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import cast

import pygit2
from pygit2.enums import ConfigLevel, FileStatus

from gitmem.confined.walk import walk_tree
from gitmem.gitio.bounded_read import MAX_CONFIG_BYTES, read_bounded, regular_stat
from gitmem.gitio.nested import CONFIG_NAMES, git_dirs_in
from gitmem.gitio.repository import Repo, git_dir, shown_path, work_tree

# Inside the git directory: the config, hooks, the ignore/attribute/sparse files, object sources and the graft,
# shallow and commit-graph files that change which history git sees (a commit-graph states each commit's parents
# and generation, and git answers ancestry from it without reading the commits), and gitmem's own state.
_COMMON = ("config", "config.worktree", "hooks", "info", "objects/info/alternates", "objects/info/http-alternates",
           "objects/info/commit-graph", "objects/info/commit-graphs", "shallow", "gitmem")
_PER_TREE = ("commondir", "gitdir", "config.worktree", "info", "shallow", "gitmem")
# Another linked work tree's own files (`.git/worktrees/<name>/`): where its common git directory is, its own
# config, sparse-checkout and excludes, and where its work tree's `.git` file is. Not its HEAD and index: the human
# works there while a cycle runs.
OTHER_TREE = ("commondir", "gitdir", "config.worktree", "info")
# A submodule's git directory: the same files but gitmem's, which is the superproject's alone.
_SUBMODULE = tuple(name for name in _COMMON if name != "gitmem")
# The system's config file: a git run without the runner's environment (the box passes no GIT_CONFIG_*
# variable) reads it whatever GIT_CONFIG_SYSTEM or GIT_CONFIG_NOSYSTEM say here.
SYSTEM_CONFIG = Path("/etc/gitconfig")


@dataclass(frozen=True)
class StatePath:
    label: str          # how a report names it: `.git/hooks`, `~/.gitconfig`
    path: Path
    inside: bool        # inside the git directory (else a file of the user's that git reads)
    # The git directory it lies in: the guard may turn a link planted between the two back into a folder. None
    # for a file outside every git directory, whose folders are the user's and never changed by the guard.
    base: Path | None = None


def common_dir(repo: Repo) -> Path:
    """The git directory shared by all work trees (a linked work tree's own git directory names it)."""
    own = git_dir(repo)
    try:
        pointer = (own / "commondir").read_text(encoding="utf-8").strip()
    except OSError:
        return own
    return (own / pointer).resolve() if pointer else own


def ref_path(repo: Repo, branch: str) -> str:
    """A branch as a diagnostic names it: its ref file in the git directory, `.git/refs/heads/NAME`, as the cycle's
    refusals name `.git/HEAD` and its lock (line 1: the ref is one line; git may have packed it into packed-refs)."""
    return shown_path(repo, common_dir(repo) / "refs" / "heads" / branch)


def state_paths(repo: Repo) -> list[StatePath]:
    own, common = git_dir(repo), common_dir(repo)
    found: dict[Path, StatePath] = {}

    def add(label: str, path: Path, inside: bool) -> None:
        base = next((d for d in (common, own) if inside and path.is_relative_to(d) and path != d), None)
        found.setdefault(path, StatePath(label, path, inside, base))

    for name in _COMMON:
        add(f".git/{name}", common / name, True)
    if own != common:
        for name in _PER_TREE:
            add(f".git/worktrees/{own.name}/{name}", own / name, True)
    home = Path(os.path.expanduser("~"))
    tree = work_tree(repo)
    if tree is not None and (tree / ".git").is_file():     # a linked work tree's (or a submodule's) `gitdir:` file
        add(".git", tree / ".git", False)
    others = [*_submodule_files(repo, common, tree), *_other_work_trees(common, own)]
    for label, path in others:
        add(label, path, label.startswith(".git/"))
    for path in _user_files(repo, home, others):
        inside = path.is_relative_to(common) or path.is_relative_to(own)
        if inside:
            label = f".git/{path.relative_to(common)}"
        elif tree is not None and path.is_relative_to(tree):
            label = path.relative_to(tree).as_posix()        # a config file kept in the tree
        else:
            label = f"~/{path.relative_to(home)}" if path.is_relative_to(home) else str(path)
        add(label, path, inside)
    return sorted(found.values(), key=lambda item: item.label)


def _other_work_trees(common: Path, own: Path) -> list[tuple[str, Path]]:
    """The files that steer git in every other linked work tree (a human's `git worktree add ../feature`), and the
    `.git` file in its folder: pointed at a git directory of the agent's, the human's next `git status` there would
    run that directory's `core.fsmonitor`."""
    found: list[tuple[str, Path]] = []
    try:
        names = sorted(entry.name for entry in os.scandir(common / "worktrees") if entry.is_dir(follow_symlinks=False))
    except OSError:
        return found
    for name in names:
        admin = common / "worktrees" / name
        if admin == own:
            continue
        found += [(f".git/worktrees/{name}/{item}", admin / item) for item in OTHER_TREE]
        try:
            pointer = (admin / "gitdir").read_text(encoding="utf-8").strip()
        except (OSError, UnicodeDecodeError):
            continue
        if pointer and os.path.isabs(pointer):
            found.append((pointer, Path(pointer)))
    return found


def _submodule_files(repo: Repo, common: Path, tree: Path | None) -> list[tuple[str, Path]]:
    """A submodule's git state, as the superproject's: a human's `git status` runs `git status` in every
    submodule, with that submodule's config (its `core.fsmonitor`), and a commit inside one runs its hooks. So:
    the state files of each git directory under `.git/modules/` (nested submodules' too), of a submodule's own
    `.git` folder in the tree (a nested submodule's too), of one a submodule's `.git` file leads to elsewhere, and
    the `.git` file in each submodule's folder that says where its git directory is."""
    found: list[tuple[str, Path]] = []
    dirs: list[tuple[str, Path]] = []
    modules = common / "modules"
    for rel, own in _submodules_in_tree(repo, tree) if tree is not None else []:
        dot_git = Path(tree or "", rel, ".git")
        if dot_git.is_dir() and not dot_git.is_symlink():
            dirs.append((f"{rel}/.git", dot_git))          # its own `.git` folder in the tree
            continue
        found.append((f"{rel}/.git", dot_git))
        # A `gitdir:` file that leads out of .git/modules (walked below) to another git directory in the tree:
        # that one's files too. Never one outside it: the guard puts back what it watches, and a human's other
        # repository is not the cycle's to put back.
        if own is not None and not own.is_relative_to(modules) and tree is not None \
                and Path(os.path.realpath(own)).is_relative_to(os.path.realpath(tree)):
            dirs.append((own.relative_to(tree).as_posix(), own))
    # The git directories under .git/modules (a submodule's name may hold slashes): walked, not recursed.
    waiting = [modules]
    while waiting:
        folder = waiting.pop()
        try:
            names = [entry.name for entry in os.scandir(folder) if entry.is_dir(follow_symlinks=False)]
        except OSError:
            continue
        if os.path.isfile(folder / "HEAD"):
            dirs.append((f".git/{folder.relative_to(common).as_posix()}", folder))
            waiting.append(folder / "modules")
        else:
            waiting += [folder / name for name in names]
    found += [(f"{label}/{name}", folder / name) for label, folder in dirs for name in _SUBMODULE]
    return found


def config_files(repo: Repo) -> list[Path]:
    """Every config file git reads for `repo`, as absolute paths (some may not exist): its git directories'
    (`config` and `config.worktree` of its own, the common one, each other linked work tree's and each
    submodule's, `.git/modules/` or the submodule's own `.git` folder), the user's and the system's, and the files
    each of them includes, in turn."""
    own, common = git_dir(repo), common_dir(repo)
    others = [*_submodule_files(repo, common, work_tree(repo)), *_other_work_trees(common, own)]
    return _configs(repo, Path(os.path.expanduser("~")), others)


MAX_TREE_CONFIGS = 512         # config files of the git directories in the work tree, their includes with them


def config_files_in_tree(repo: Repo) -> list[Path]:
    """The config files of every git directory in the work tree (gitmem.gitio.nested: a clone kept in the
    project, a bare repository, where a `.git` file or link leads, each one's `modules/` and `worktrees/`), the
    repository's own among them, and the files each includes, in turn: git reads them there. Absolute paths,
    MAX_TREE_CONFIGS at most; none for a bare repository."""
    tree = work_tree(repo)
    if tree is None:
        return []
    configs = [folder / name for folder in git_dirs_in(tree) for name in CONFIG_NAMES
               if (folder / name).is_file()][:MAX_TREE_CONFIGS]
    included = _included(configs, fence=_Fence.of(repo), limit=MAX_TREE_CONFIGS - len(configs))
    return [*configs, *(path for path in included if path not in configs)][:MAX_TREE_CONFIGS]


def _configs(repo: Repo, home: Path, others: list[tuple[str, Path]]) -> list[Path]:
    """`config_files`, given the state files of the other git directories (`others`: submodules', linked work
    trees')."""
    own, common = git_dir(repo), common_dir(repo)
    configs = [common / "config", common / "config.worktree", own / "config.worktree",
               *(path for _label, path in others if path.name in CONFIG_NAMES), *_global_configs(home)]
    configs = list(dict.fromkeys(Path(os.path.abspath(p)) for p in configs))
    # The files the config includes, where each including file says (`include.path`, `includeIf.*.path`), are
    # config as much as the file that names them: git reads them, and they hold what it holds (a credential).
    return [*configs, *(path for path in _included(configs, fence=_Fence.of(repo)) if path not in configs)]


def _global_configs(home: Path) -> list[Path]:
    """The user's and the system's config files, as git and libgit2 find them."""
    xdg = Path(os.environ.get("XDG_CONFIG_HOME") or home / ".config")
    paths = [Path(p) for p in (os.environ.get("GIT_CONFIG_GLOBAL"), os.environ.get("GIT_CONFIG_SYSTEM")) if p]
    if not os.environ.get("GIT_CONFIG_GLOBAL"):
        paths += [home / ".gitconfig", xdg / "git" / "config"]
    paths.append(SYSTEM_CONFIG)
    for level, name in ((ConfigLevel.GLOBAL, ".gitconfig"), (ConfigLevel.XDG, "config"),
                        (ConfigLevel.SYSTEM, "gitconfig")):
        try:
            paths += [Path(p) / name for p in str(pygit2.settings.search_path[level]).split(os.pathsep) if p]
        except (KeyError, ValueError, pygit2.GitError):
            pass
    return paths


MAX_SUBMODULE_DEPTH = 8        # submodules of submodules followed this deep (git status recurses into each)
MAX_SUBMODULES = 1_000         # and this many in all: the work tree is the agent's while the box is made


def _submodules_in_tree(repo: Repo, tree: Path) -> list[tuple[str, Path | None]]:
    """Every submodule in the work tree, the path relative to the tree, with the git directory it is checked out
    with (None where it is not): the superproject's index names its submodules, and each checked-out
    submodule's own index names its own, which git status runs in as well."""
    found: list[tuple[str, Path | None]] = []
    top = Path(os.path.realpath(tree))
    waiting: list[tuple[str, pygit2.Repository, int]] = [("", repo.raw, 0)]
    while waiting and len(found) < MAX_SUBMODULES:
        prefix, here, depth = waiting.pop()
        try:
            gitlinks = [entry.path for entry in here.index if entry.mode == pygit2.enums.FileMode.COMMIT]
        except pygit2.GitError:
            continue
        for rel in gitlinks[:MAX_SUBMODULES - len(found)]:
            path = f"{prefix}{rel}"
            dot_git = tree / path / ".git"
            own: Path | None = None
            # A nested submodule's index is in the tree, the agent's to write: its paths stay in the tree.
            if ".." in Path(rel).parts or os.path.isabs(rel) \
                    or not Path(os.path.realpath(tree / path)).is_relative_to(top):
                continue
            if depth < MAX_SUBMODULE_DEPTH and not dot_git.is_symlink() and dot_git.exists():
                try:
                    sub = pygit2.Repository(str(tree / path), pygit2.enums.RepositoryOpenFlag.NO_SEARCH)
                except pygit2.GitError:
                    sub = None
                if sub is not None:
                    own = Path(os.path.abspath(sub.path))
                    waiting.append((f"{path}/", sub, depth + 1))
            found.append((path, own))
    return found


def _user_files(repo: Repo, home: Path, others: list[tuple[str, Path]]) -> list[Path]:
    """The config files git and libgit2 read outside the git directories (`_configs`: the user's, the system's,
    the files any config includes), the global ignore and attributes files, and a hooks directory that
    core.hooksPath puts outside the git directory."""
    xdg = Path(os.environ.get("XDG_CONFIG_HOME") or home / ".config")
    config = repo.raw.config
    paths = _configs(repo, home, others)
    paths += [xdg / "git" / "ignore", xdg / "git" / "attributes"]
    tree = work_tree(repo)
    hooks: list[Path] = []
    for entry in config:
        name = entry.name.lower()
        value = entry.value or ""
        if not value or name not in ("core.excludesfile", "core.attributesfile", "core.hookspath"):
            continue
        given = Path(os.path.expanduser(value))
        places = [given] if given.is_absolute() else [     # relative to where git runs: the likely places
            common_dir(repo) / given, home / given, *([tree / given] if tree is not None else [])]
        (hooks if name == "core.hookspath" else paths).extend(places)
    # The files the config includes (`_configs`), and the ignore and attributes files it names are git state
    # wherever they are, in the work tree too: a tracked file that .git/config includes is config the agent
    # could write, and the runner's own git commands (its push) would run what it says.
    if tree is not None:
        paths += _programs_in(tree, [entry.value or "" for entry in config])
    # A hooks folder kept in the work tree is tracked content: a protected path (gitmem.cycle.agent_guard), whose
    # edits go to a proposal, not git state.
    inside = [git_dir(repo), common_dir(repo)]
    found = [Path(os.path.abspath(p)) for p in hooks if str(p) != os.devnull]
    real = {p: Path(os.path.realpath(p)) for p in found}
    kept = [p for p in found if tree is None or not real[p].is_relative_to(tree.resolve())
            or any(real[p].is_relative_to(g.resolve()) for g in inside)]
    return [*(Path(os.path.abspath(p)) for p in paths if str(p) != os.devnull), *kept]


def _programs_in(tree: Path, values: list[str]) -> list[Path]:
    """The files in the work tree that config values name as a program or a file to read (`core.sshCommand =
    ./tools/ssh.sh`, `credential.helper = !tools/cred`, `core.fsmonitor`, a filter or diff driver): the agent can
    edit a tracked one, and git would run it as the human. Every word of each value that names a file of the
    tree, from the tree's top: a program's arguments are files it reads or runs too (`sh tools/ssh.sh`,
    `ssh -F tools/ssh_config`)."""
    found: list[Path] = []
    top = Path(os.path.realpath(tree))
    for value in values:
        for word in value.strip().lstrip("!").split():
            given = Path(os.path.expanduser(word.strip("'\"")))
            path = Path(os.path.abspath(given if given.is_absolute() else tree / given))
            real = Path(os.path.realpath(path))
            if real.is_relative_to(top) and real != top and ".git" not in real.relative_to(top).parts \
                    and path.is_file() and not path.is_symlink() and path not in found:
                found.append(path)
    return found


CONFIG_LIST_SECONDS = 10.0


def config_entries(path: Path) -> list[tuple[str, str | None]] | None:
    """The entries of the config file `path` as git reads them, in order, its includes not followed: (key, value),
    the key as `git config --list` names it (`section.subsection.name`, section and name in lower case), the value
    None for a key with no `=` (true). None when git cannot read the file."""
    try:
        done = subprocess.run(["git", "config", "--file", str(path), "--no-includes", "--list", "-z"],
                              capture_output=True, timeout=CONFIG_LIST_SECONDS, check=False,
                              env={**os.environ, "GIT_CONFIG_NOSYSTEM": "1"})
    except (OSError, subprocess.SubprocessError):
        return None
    if done.returncode != 0:
        return None
    entries: list[tuple[str, str | None]] = []
    for item in done.stdout.decode("utf-8", "surrogateescape").split("\0")[:-1]:
        key, newline, value = item.partition("\n")
        entries.append((key, value if newline else None))
    return entries


_SECTION = re.compile(r'^\s*\[\s*([A-Za-z0-9.-]+)(?:\s+"[^"]*")?\s*\]\s*(.*)$')
_PATH_KEY = re.compile(r"^\s*path\s*=\s*(.*?)\s*$", re.IGNORECASE)
MAX_INCLUDE_DEPTH = 10          # git's own limit on nested includes


@dataclass(frozen=True)
class _Fence:
    """Where the agent writes (the work tree, real path), less the repository's own git directories, which the
    box shows read-only: a config there is the agent's, and its includes lead only back into the tree."""

    tree: Path | None
    own: tuple[Path, ...]

    @classmethod
    def of(cls, repo: Repo) -> _Fence:
        tree = work_tree(repo)
        return cls(None if tree is None else Path(os.path.realpath(tree)),
                   tuple(Path(os.path.realpath(folder)) for folder in (git_dir(repo), common_dir(repo))))

    def inside(self, path: Path) -> bool:
        return self.tree is not None and Path(os.path.realpath(path)).is_relative_to(self.tree)

    def agents(self, path: Path) -> bool:
        real = Path(os.path.realpath(path))
        return self.inside(path) and not any(real.is_relative_to(folder) for folder in self.own)


def _included(configs: list[Path], depth: int = 0, *, fence: _Fence, limit: int | None = None) -> list[Path]:
    """The files `configs` include, followed from each including file's folder as git does, and what those
    include in turn. The human's files are read before the agent runs: a plain reading of the `[include]` and
    `[includeIf "..."]` sections' `path` keys is enough. Each file is read as gitio.bounded_read reads what the
    agent may have written (a regular file, non-blocking, never under /proc, /sys or /dev, its first
    MAX_CONFIG_BYTES): a config in the work tree (a nested repository's, a tracked one that .git/config includes)
    may be the agent's, and `[include] path = /proc/kmsg` there held the runner for good. So an include in such a
    config (`fence`) names only a regular file inside the work tree, or a missing one there, and is read only
    when non-empty, through no link at its last step. With a `limit` (configs the agent may have written), that
    many files at most."""
    found: list[Path] = []
    if depth >= MAX_INCLUDE_DEPTH:
        return found
    for config in configs:
        agents = fence.agents(config)
        data = read_bounded(config, MAX_CONFIG_BYTES, follow_links=not agents)
        if data is None:
            continue
        section = ""
        for line in data.decode("utf-8", "replace").splitlines():
            if limit is not None and len(found) >= limit:
                return found
            if (header := _SECTION.match(line)) is not None:
                section, line = header.group(1).lower(), header.group(2)
            key = _PATH_KEY.match(line.split("#", 1)[0].split(";", 1)[0]) if section in ("include", "includeif") \
                else None
            if key is None or not key.group(1):
                continue
            value = key.group(1).strip().strip('"')
            given = Path(os.path.expanduser(value))
            path = Path(os.path.abspath(given if given.is_absolute() else config.parent / given))
            # A folder is no config file (git refuses to include one): never capture a whole tree as state.
            if path in found or path in configs or path.is_dir():
                continue
            # One missing is listed (the cycle's guard watches for the agent making it), and read once it is there.
            if agents and not (fence.inside(path) and (not os.path.lexists(path) or regular_stat(path) is not None)):
                continue
            left = None if limit is None else limit - len(found) - 1
            found += [path, *_included([path], depth + 1, fence=fence, limit=left)]
    return found


# -- references -------------------------------------------------------------------------------------------------

def references_all(repo: Repo) -> dict[str, str]:
    """Every reference and HEAD: name -> a commit id, or `ref: <name>` for a symbolic one."""
    raw = repo.raw
    found: dict[str, str] = {}
    for name in [*raw.references, "HEAD"]:
        try:
            ref = raw.lookup_reference(name)
        except (KeyError, pygit2.InvalidSpecError, pygit2.GitError):
            continue
        target = ref.target
        found[name] = f"ref: {target}" if isinstance(target, str) else str(target)
    return found


def set_reference(repo: Repo, name: str, target: str | None) -> None:
    """Put `name` back to `target` (as `references_all` gives it); None deletes it."""
    raw = repo.raw
    if target is None:
        try:
            raw.lookup_reference(name).delete()
        except (KeyError, pygit2.GitError):
            pass
        return
    if target.startswith("ref: "):
        if name == "HEAD":
            raw.set_head(target[5:])
        else:
            raw.references.create(name, target[5:], force=True)
        return
    if name == "HEAD":
        raw.set_head(pygit2.Oid(hex=target))
        return
    raw.references.create(name, pygit2.Oid(hex=target), force=True)


def has_object(repo: Repo, oid: str) -> bool:
    return oid in repo.raw


def forget_cached(repo: Repo) -> None:
    """Drop what the handle holds of the object store (its object cache, its open packs): after someone else
    pruned it, an object still in the cache would count as present while git no longer has it."""
    repo.raw.free()


# -- ignore rules and links -------------------------------------------------------------------------------------

def ignored(repo: Repo) -> list[str]:
    """Paths the ignore rules hide now, as git status shows them (an ignored directory ends in `/`)."""
    return sorted(path for path, flags in repo.raw.status(untracked_files="normal", ignored=True).items()
                  if flags & FileStatus.IGNORED)


def path_ignored(repo: Repo, rel: str) -> bool:
    """Whether the ignore rules in effect now hide the repo-relative `rel` (a file or a folder)."""
    return bool(repo.raw.path_is_ignored(rel))


def tree_links(repo: Repo, commit_id: str) -> dict[str, str]:
    """Every symlink in a commit's tree: path -> its target."""
    return {path: data.decode("utf-8", "surrogateescape")
            for path, data in _tree_blobs(repo, commit_id, lambda name, mode: mode == pygit2.enums.FileMode.LINK)}


def tree_files_named(repo: Repo, commit_id: str, name: str) -> dict[str, bytes]:
    """Every regular file called `name` in a commit's tree, at any depth (`.gitignore`): path -> its bytes."""
    return dict(_tree_blobs(repo, commit_id, lambda found, mode: found == name and mode in (
        pygit2.enums.FileMode.BLOB, pygit2.enums.FileMode.BLOB_EXECUTABLE)))


def _tree_blobs(repo: Repo, commit_id: str, wanted: Callable[[str, int], bool]) -> list[tuple[str, bytes]]:
    raw = repo.raw
    found: list[tuple[str, bytes]] = []

    def walk(tree: pygit2.Tree, prefix: str) -> None:
        for entry in tree:
            path = f"{prefix}{entry.name}"
            if entry.type == pygit2.enums.ObjectType.TREE:
                walk(cast(pygit2.Tree, raw[entry.id]), path + "/")
            elif entry.name is not None and wanted(entry.name, int(entry.filemode)):
                found.append((path, cast(pygit2.Blob, raw[entry.id]).data))

    walk(raw[commit_id].peel(pygit2.Commit).tree, "")
    return found


def lock_files(repo: Repo) -> list[StatePath]:
    """The lock files git leaves beside what it is writing (`index.lock`, `HEAD.lock`, `packed-refs.lock`,
    `config.lock`, a reference's `refs/heads/main.lock`): while one is there, git and libgit2 refuse to write
    that file, so a cycle could neither rebuild its index nor move its branch. The git directory's own files and
    every reference; gitmem's state directory keeps its own locks (gitmem.workspace.cyclelock)."""
    found: dict[Path, StatePath] = {}
    common = common_dir(repo)
    for base in dict.fromkeys([common, git_dir(repo)]):
        places = [*_top_locks(base), *sorted(Path(folder) / name for folder, dirs, names in walk_tree(base / "refs")
                                              for name in [*dirs, *names] if name.endswith(".lock"))]
        for path in places:
            if os.path.lexists(path):
                found.setdefault(path, StatePath(f".git/{path.relative_to(common).as_posix()}", path, True))
    return sorted(found.values(), key=lambda item: item.label)


def _top_locks(base: Path) -> list[Path]:
    try:
        return sorted(entry for entry in base.iterdir() if entry.name.endswith(".lock"))
    except OSError:
        return []
