"""The git state of the repositories nested in a work tree (gitmem.gitio.nested_state), and the one bounded walk
that finds them (gitmem.gitio.nested): what it says when it stops at a bound, and the walk pinned for a cycle.
Real repositories in temp dirs."""
from __future__ import annotations

from pathlib import Path

import pytest

from gitmem import gitio
from gitmem.gitio import nested
from tests.support.gitcli import git
from tests.support.helpers import GitRepo


def _repo(place: Path) -> Path:
    place.mkdir(parents=True)
    git(place, "init", "-q", "-b", "main")
    git(place, "commit", "-q", "--allow-empty", "-m", "start")
    return place


def test_the_state_of_each_nested_git_directory_and_pointer_is_named_but_never_the_repositorys_own(
        memrepo: GitRepo, tmp_path: Path) -> None:
    root = memrepo.path
    _repo(root / "vendor" / "lib")
    git(root / "vendor" / "lib", "worktree", "add", "-q", "-b", "side", str(root / "vendor" / "side"))
    git(root, "init", "-q", "--bare", str(root / "store" / "app.git"))
    outside = _repo(tmp_path / "elsewhere")
    (root / "tools" / "out").mkdir(parents=True)
    (root / "tools" / "out" / ".git").write_text(f"gitdir: {outside / '.git'}\n", encoding="utf-8")

    labels = {place.label: place for place in
              gitio.nested_state_paths(memrepo.handle, gitio.nested_walk(root))}

    for name in ("config", "config.worktree", "hooks", "info", "commondir", "gitdir"):
        assert f"vendor/lib/.git/{name}" in labels and f"store/app.git/{name}" in labels
    assert {"vendor/lib/.git/worktrees/side/gitdir", "vendor/lib/.git/worktrees/side/commondir",
            "vendor/side/.git", "tools/out/.git"} <= set(labels)
    assert labels["vendor/lib/.git/hooks"].base == (root / "vendor" / "lib").resolve()   # `.git` made again
    assert labels["store/app.git/config"].base == (root / "store" / "app.git").resolve()
    assert not any(label.startswith(".git") or "elsewhere" in label for label in labels)   # own, and outside
    assert not any(name in label for label in labels for name in ("HEAD", "index", "refs", "objects"))


def test_the_walk_says_which_bound_it_stopped_at(memrepo: GitRepo, monkeypatch: pytest.MonkeyPatch) -> None:
    for number in range(30):
        (memrepo.path / "node_modules" / f"pkg{number}").mkdir(parents=True)
    assert nested.nested_walk(memrepo.path).stopped == ""
    monkeypatch.setattr(nested, "MAX_WALK_ENTRIES", 20)
    assert nested.nested_walk(memrepo.path).stopped == "20 entries"
    monkeypatch.setattr(nested, "MAX_WALK_ENTRIES", 100_000)
    monkeypatch.setattr(nested, "MAX_WALK_DEPTH", 1)
    assert nested.nested_walk(memrepo.path).stopped == "1 folders deep"
    monkeypatch.setattr(nested, "MAX_WALK_DEPTH", 24)
    monkeypatch.setattr(nested, "MAX_GIT_DIRS", 1)
    assert nested.nested_walk(memrepo.path).stopped == "1 git directories"


def test_a_pinned_walk_is_the_next_look_at_the_tree_and_only_that_one(memrepo: GitRepo) -> None:
    """The guard's walk, pinned, is the box's made next: the tree is walked once for both. A later box (the SDK
    backend makes one per command, after the agent changed the tree) walks it again."""
    root = memrepo.path
    taken = gitio.nested_walk(root)
    lib = _repo(root / "vendor" / "lib")
    with gitio.pinned_walk(root, taken):
        assert lib.resolve() / ".git" not in nested.git_dirs_in(root)
        assert lib.resolve() / ".git" in nested.git_dirs_in(root)
    with gitio.pinned_walk(root, taken):
        pass                                        # never used: gone with the block
    assert lib.resolve() / ".git" in nested.git_dirs_in(root)
