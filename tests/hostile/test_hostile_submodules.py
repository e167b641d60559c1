"""Hostile agents, class 3b in a repository with a submodule: a submodule's git directory is git state too.

A human's `git status` in the superproject runs `git status` inside every submodule, with the submodule's own
config: its `core.fsmonitor` runs there, and the submodule's hooks run on the human's next commit inside it.
The submodule's git directory lives in `.git/modules/<name>/`, or wherever the `<path>/.git` file in the work
tree points. An agent that writes either (a config, a hook, a gitfile pointing at a git directory of its own)
gets it put back when it is done, named in Evidence, as the superproject's own `.git/config` and hooks are;
and the human's `git status` afterwards runs nothing the agent wrote.
"""
from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from gitmem.errors import ExitCode
from tests.support.gitcli import git, isolated_env, run_git
from tests.support.helpers import HUMAN, GitRepo
from tests.support.hostile import add_submodule, cycle, evidence


@pytest.fixture
def with_sub(memrepo: GitRepo, tmp_path: Path) -> GitRepo:
    """The template with a real submodule `lib/sub` (its git directory in `.git/modules/lib/sub`)."""
    add_submodule(memrepo, tmp_path)
    return memrepo


def _write(path: Path, text: str, *, mode: int = 0o644) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    path.chmod(mode)


def _fsmonitor(marker: Path) -> str:
    return f"[core]\n\tfsmonitor = \"touch {marker}; false\"\n"


def _config(root: Path, marker: Path) -> None:
    config = root / ".git" / "modules" / "lib" / "sub" / "config"
    _write(config, config.read_text(encoding="utf-8") + _fsmonitor(marker))


def _hook(root: Path, marker: Path) -> None:
    _write(root / ".git" / "modules" / "lib" / "sub" / "hooks" / "pre-commit", f"#!/bin/sh\ntouch {marker}\n",
           mode=0o755)


def _gitfile(root: Path, marker: Path) -> None:
    """A git directory of the agent's (a copy of the submodule's, with its own config), and the submodule's
    `.git` file pointed at it."""
    own = marker.parent / "agents-git-dir"
    run_git(root, "clone", "-q", "--bare", str(root / ".git" / "modules" / "lib" / "sub"), str(own),
            env=isolated_env(who=HUMAN))
    _write(own / "config", (own / "config").read_text(encoding="utf-8")
           + f"[core]\n\tbare = false\n\tworktree = {root / 'lib' / 'sub'}\n" + _fsmonitor(marker))
    _write(root / "lib" / "sub" / ".git", f"gitdir: {own}\n")


ACTS: dict[str, tuple[Callable[[Path, Path], None], str]] = {
    "fsmonitor in the submodule's config": (_config, ".git/modules/lib/sub/config (changed)"),
    "a hook in the submodule's git directory": (_hook, ".git/modules/lib/sub/hooks/pre-commit (added)"),
    "the submodule's gitfile pointed elsewhere": (_gitfile, "lib/sub/.git (changed)"),
}


@pytest.mark.parametrize("kind", sorted(ACTS))
def test_a_submodules_git_state_the_agent_changes_is_put_back_and_runs_nothing(with_sub: GitRepo, tmp_path: Path,
                                                                                kind: str) -> None:
    root = with_sub.path
    modules = root / ".git" / "modules" / "lib" / "sub"
    before = {name: (modules / name).read_bytes() for name in ("config", "HEAD")}
    gitfile = (root / "lib" / "sub" / ".git").read_bytes()
    marker = tmp_path / "agent-ran" / "marker"
    marker.parent.mkdir()
    act, label = ACTS[kind]

    report = cycle(with_sub, lambda r, memory, request: act(r, marker))

    assert report.exit_code == ExitCode.OK, report.error
    assert {name: (modules / name).read_bytes() for name in before} == before
    assert not (modules / "hooks" / "pre-commit").exists()
    assert (root / "lib" / "sub" / ".git").read_bytes() == gitfile
    assert "restored git state the agent changed" in evidence(with_sub)
    assert label in evidence(with_sub)
    # The human's next look at the repository, and a commit inside the submodule, run nothing the agent wrote.
    git(root, "status", "--short")
    (root / "lib" / "sub" / "code.txt").write_text("a human's change\n", encoding="utf-8")
    git(root / "lib" / "sub", "commit", "-q", "-am", "a human's commit in the submodule")
    assert not os.path.lexists(marker)


def test_a_commit_the_agent_makes_inside_a_submodule_neither_removes_nor_moves_it_on_main(with_sub: GitRepo) -> None:
    """The cycle commits the work tree's changes; a submodule whose checkout moved is a directory there, not a
    file, and was committed as deleted: the human's submodule left the repository. The runner records no
    submodule commit either (one only the agent's checkout holds, which no clone could fetch)."""
    root = with_sub.path
    pinned = git(root, "rev-parse", "HEAD:lib/sub").strip()

    def act(r: Path, memory, request) -> None:
        (r / "lib" / "sub" / "code.txt").write_text("the agent's code\n", encoding="utf-8")
        git(r / "lib" / "sub", "commit", "-q", "-am", "the agent's commit inside the submodule")

    report = cycle(with_sub, act)
    assert report.exit_code == ExitCode.OK, report.error
    assert git(root, "ls-tree", "HEAD", "lib/sub").split()[:3] == ["160000", "commit", pinned]
    assert git(root, "ls-tree", "HEAD", ".gitmodules").split()[1] == "blob"


def test_a_failed_cycle_leaves_a_submodule_the_agent_moved_in_place_and_pinned(with_sub: GitRepo) -> None:
    """Salvage restores the work tree: a moved submodule is not a file in a file's place to take away."""
    root = with_sub.path
    pinned = git(root, "rev-parse", "HEAD:lib/sub").strip()

    def act(r: Path, memory, request) -> None:
        (r / "lib" / "sub" / "code.txt").write_text("the agent's code\n", encoding="utf-8")
        git(r / "lib" / "sub", "commit", "-q", "-am", "the agent's commit inside the submodule")

    report = cycle(with_sub, act, fail="the model went away")
    assert report.exit_code != ExitCode.OK
    assert git(root, "ls-tree", "HEAD", "lib/sub").split()[:3] == ["160000", "commit", pinned]
    assert (root / "lib" / "sub" / "code.txt").is_file()          # the checkout is still there
    assert not (root / ".git" / "gitmem" / "displaced").exists()
