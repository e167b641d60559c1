"""The git state that changes what git runs or sees, as files and references: what a cycle's guard watches.

`state_paths` names the files and directories (inside the git directory, and the user's global config files
that git reads); `references_all` and `set_reference` read and put back every reference; `ignored` says
what the ignore rules hide; `tree_links` lists a commit's symlinks.
"""
from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import cast

import pygit2
from pygit2.enums import ConfigLevel, FileStatus

from gitmem.gitio.repository import Repo, git_dir, work_tree

# Inside the git directory: the config, hooks, the ignore/attribute/sparse files, object sources and the graft
# and shallow files that change which history git sees, and gitmem's own state.
_COMMON = ("config", "config.worktree", "hooks", "info", "objects/info/alternates", "objects/info/http-alternates",
           "shallow", "gitmem")
_PER_TREE = ("config.worktree", "info", "shallow", "gitmem")


@dataclass(frozen=True)
class StatePath:
    label: str          # how a report names it: `.git/hooks`, `~/.gitconfig`
    path: Path
    inside: bool        # inside the git directory (else a file of the user's that git reads)


def common_dir(repo: Repo) -> Path:
    """The git directory shared by all work trees (a linked work tree's own git directory names it)."""
    own = git_dir(repo)
    try:
        pointer = (own / "commondir").read_text(encoding="utf-8").strip()
    except OSError:
        return own
    return (own / pointer).resolve() if pointer else own


def state_paths(repo: Repo) -> list[StatePath]:
    own, common = git_dir(repo), common_dir(repo)
    found: dict[Path, StatePath] = {}

    def add(label: str, path: Path, inside: bool) -> None:
        found.setdefault(path, StatePath(label, path, inside))

    for name in _COMMON:
        add(f".git/{name}", common / name, True)
    if own != common:
        for name in _PER_TREE:
            add(f".git/worktrees/{own.name}/{name}", own / name, True)
    home = Path(os.path.expanduser("~"))
    for path in _user_files(repo, home):
        label = f"~/{path.relative_to(home)}" if path.is_relative_to(home) else str(path)
        inside = path.is_relative_to(common) or path.is_relative_to(own)
        add(label if not inside else f".git/{path.relative_to(common)}", path, inside)
    return sorted(found.values(), key=lambda item: item.label)


def _user_files(repo: Repo, home: Path) -> list[Path]:
    """The global config files git and libgit2 read, the files they include, the global ignore and attributes
    files, and a hooks directory that core.hooksPath puts outside the git directory."""
    xdg = Path(os.environ.get("XDG_CONFIG_HOME") or home / ".config")
    paths = [Path(p) for p in (os.environ.get("GIT_CONFIG_GLOBAL"), os.environ.get("GIT_CONFIG_SYSTEM")) if p]
    if not os.environ.get("GIT_CONFIG_GLOBAL"):
        paths += [home / ".gitconfig", xdg / "git" / "config"]
    if not os.environ.get("GIT_CONFIG_SYSTEM") and not os.environ.get("GIT_CONFIG_NOSYSTEM"):
        paths.append(Path("/etc/gitconfig"))
    for level, name in ((ConfigLevel.GLOBAL, ".gitconfig"), (ConfigLevel.XDG, "config"),
                        (ConfigLevel.SYSTEM, "gitconfig")):
        try:
            paths += [Path(p) / name for p in str(pygit2.settings.search_path[level]).split(os.pathsep) if p]
        except (KeyError, ValueError, pygit2.GitError):
            pass
    config = repo.raw.config
    paths += [xdg / "git" / "ignore", xdg / "git" / "attributes"]
    for entry in config:
        name = entry.name.lower()
        value = entry.value or ""
        if not value or not (name in ("core.excludesfile", "core.attributesfile", "core.hookspath", "include.path")
                             or (name.startswith("includeif.") and name.endswith(".path"))):
            continue
        given = Path(os.path.expanduser(value))
        if given.is_absolute():
            paths.append(given)
        else:       # relative to the including file, which libgit2 does not say: the likely places
            paths += [common_dir(repo) / given, home / given]
    # Files in the work tree (a hooks folder kept there) are tracked content: protected paths, not git state.
    tree = work_tree(repo)
    inside = [git_dir(repo), common_dir(repo)]
    found = [Path(os.path.abspath(p)) for p in paths if str(p) != os.devnull]
    real = {p: Path(os.path.realpath(p)) for p in found}
    return [p for p in found if tree is None or not real[p].is_relative_to(tree.resolve())
            or any(real[p].is_relative_to(g.resolve()) for g in inside)]


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
