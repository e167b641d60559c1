"""The git state of the repositories nested in a work tree: `nested_state_paths`, what the cycle's guard watches
in each git directory the bounded walk found (gitmem.gitio.nested) besides the repository's own.

A clone kept in the tree (`vendor/lib/.git`), a bare repository, a git directory a `.git` file in the tree leads
to: each is in the work tree, the agent's to write with the box and without it, and git run there by the human
reads it. What counts is what makes that git run a program, or read one's settings, by git's own documentation:

- `config` and `config.worktree` (`git help config`): `core.hooksPath`, `core.fsmonitor` (run at every `git
  status`), `core.sshCommand`, `core.pager`, `include.path` and `includeIf.*.path` (which pull in a file that
  says any of these), filter and diff drivers, aliases; and `config.worktree` is read once
  `extensions.worktreeConfig` is set, which the agent can set as easily.
- `hooks/` (`git help githooks`): run by `git commit`, `git checkout`, `git merge`, `git push` in it.
- `info/` (`git help gitattributes`): `info/attributes` names which filter and diff driver (the human's global
  config defines them: git-lfs, a textconv) runs on which file; `info/exclude` and `info/sparse-checkout` steer
  what it sees, kept with them as the repository's own `.git/info` is.
- `commondir` and `gitdir` (`git help repository-layout`): where git takes the config, hooks and objects from;
  one the agent adds sends the human's git to a git directory of the agent's.
- each linked tree's folder, `worktrees/<name>/`: the same pointers, config.worktree and info (gitmem.gitio.state
  `OTHER_TREE`).
- the `.git` file or link in the tree that says where a git directory is: pointed elsewhere, the human's next
  `git status` there reads another config.

Not HEAD, the index, references or objects: they say what is checked out, not what runs, and the agent may work
in a nested clone as it works in the tree; what it commits there stays. The repository's own git directory,
and what lies under it (`.git/modules/`, `.git/worktrees/`), are `state_paths`' already.
"""
from __future__ import annotations

import os
from pathlib import Path

from gitmem.gitio.nested import NestedWalk
from gitmem.gitio.repository import Repo, git_dir, work_tree
from gitmem.gitio.state import OTHER_TREE, StatePath, common_dir

# In each nested git directory: what git reads to know what to run (the module's docstring says why each).
NESTED_STATE = ("config", "config.worktree", "hooks", "info", "commondir", "gitdir")


def nested_state_paths(repo: Repo, walk: NestedWalk) -> list[StatePath]:
    """The state places of every git directory `walk` found inside `repo`'s work tree, and every `.git` pointer
    it passed there, labelled by their path in the tree (`vendor/lib/.git/hooks`); none of the repository's own
    git directory, and none outside the tree (a human's other repository is not the cycle's to put back)."""
    tree = work_tree(repo)
    if tree is None:
        return []
    top = Path(os.path.realpath(tree))
    own = [Path(os.path.realpath(folder)) for folder in (git_dir(repo), common_dir(repo))]
    found: dict[Path, StatePath] = {}
    for folder in walk.git_dirs:
        if not folder.is_relative_to(top) or any(folder.is_relative_to(mine) for mine in own):
            continue
        label = folder.relative_to(top).as_posix()
        places = [(f"{label}/{name}", folder / name) for name in NESTED_STATE]
        places += [(f"{label}/worktrees/{admin.name}/{name}", admin / name)
                   for admin in _linked_trees(folder) for name in OTHER_TREE]
        # A `.git` folder the agent swapped for a link (or a file) is made a folder again, as one in the
        # repository's own git directory is (gitmem.cycle.gitstate): the folder that holds it is the base.
        base = folder.parent if folder.name == ".git" else folder
        for rel, path in places:
            found.setdefault(path, StatePath(rel, path, True, base))
    for pointer in walk.pointers:
        real = Path(os.path.realpath(pointer.parent)) / pointer.name
        if real.is_relative_to(top) and not any(real.is_relative_to(mine) for mine in own):
            found.setdefault(real, StatePath(real.relative_to(top).as_posix(), real, False))
    return list(found.values())


def _linked_trees(folder: Path) -> list[Path]:
    """The folders of a git directory's linked trees, `worktrees/<name>/` (real folders only)."""
    try:
        with os.scandir(folder / "worktrees") as entries:
            return sorted(folder / "worktrees" / entry.name for entry in entries if entry.is_dir(follow_symlinks=False))
    except OSError:
        return []
