"""Hostile agents, class 3b with linked work trees: another work tree's git directory is git state too.

A human who keeps a second work tree (`git worktree add ../feature`) runs git there with the files of
`.git/worktrees/<name>/`: `commondir` says which git directory holds its config, hooks and objects,
`config.worktree` is its own config, `info/` its sparse-checkout and excludes, and the `.git` file in its folder
says where all that is. An agent that points any of them at a git directory of its own (with a `core.fsmonitor`)
gets them put back when it is done, named in Evidence, and the human's `git status` there runs nothing.
"""
from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pygit2
import pytest

from gitmem.errors import ExitCode
from tests.support.gitcli import git
from tests.support.helpers import GitRepo
from tests.support.hostile import cycle, evidence


def _fsmonitor(marker: Path) -> str:
    return f"[core]\n\tfsmonitor = \"touch {marker}; false\"\n"


def _own_git_dir(root: Path, marker: Path) -> Path:
    """A copy of the repository's git directory with the agent's config."""
    own = marker.parent / "agents-git-dir"
    shutil.copytree(root / ".git", own)
    (own / "config").write_text((own / "config").read_text(encoding="utf-8") + _fsmonitor(marker), encoding="utf-8")
    return own


def _commondir(root: Path, marker: Path, other: Path) -> None:
    (root / ".git" / "worktrees" / "feature" / "commondir").write_text(f"{_own_git_dir(root, marker)}\n",
                                                                       encoding="utf-8")


def _config_worktree(root: Path, marker: Path, other: Path) -> None:
    git(root, "config", "extensions.worktreeConfig", "true")      # put back too (the repository's config)
    (root / ".git" / "worktrees" / "feature" / "config.worktree").write_text(_fsmonitor(marker), encoding="utf-8")


def _gitfile(root: Path, marker: Path, other: Path) -> None:
    own = _own_git_dir(root, marker)
    (other / ".git").write_text(f"gitdir: {own}\n", encoding="utf-8")


ACTS: dict[str, tuple[Callable[[Path, Path, Path], None], str]] = {
    "commondir pointed at the agent's git directory": (_commondir, ".git/worktrees/feature/commondir (changed)"),
    "config.worktree with fsmonitor": (_config_worktree, ".git/worktrees/feature/config.worktree (added)"),
    "the work tree's .git file pointed elsewhere": (_gitfile, "feature/.git (changed)"),
}


@pytest.mark.parametrize("kind", sorted(ACTS))
def test_another_work_trees_git_state_the_agent_changes_is_put_back_and_runs_nothing(memrepo: GitRepo,
                                                                                    tmp_path: Path,
                                                                                    kind: str) -> None:
    root = memrepo.path
    other = tmp_path / "feature"
    git(root, "worktree", "add", "-q", str(other), "-b", "feature")
    admin = root / ".git" / "worktrees" / "feature"
    before = {name: (admin / name).read_bytes() for name in ("commondir", "gitdir", "HEAD")}
    gitfile = (other / ".git").read_bytes()
    marker = tmp_path / "agent-ran" / "marker"
    marker.parent.mkdir()
    act, label = ACTS[kind]

    report = cycle(memrepo, lambda r, memory, request: act(r, marker, other))

    assert report.exit_code == ExitCode.OK, report.error
    assert {name: (admin / name).read_bytes() for name in before} == before
    assert not (admin / "config.worktree").exists()
    assert (other / ".git").read_bytes() == gitfile
    assert "restored git state the agent changed" in evidence(memrepo)
    assert label in evidence(memrepo)
    git(other, "status", "--short")
    assert not os.path.lexists(marker)


def test_in_a_linked_work_tree_its_own_git_file_and_commondir_are_put_back(memrepo: GitRepo, tmp_path: Path) -> None:
    """The runner in a linked work tree: the agent points that tree's own `.git` file, or its commondir, at a git
    directory of its own."""
    other = tmp_path / "feature"
    git(memrepo.path, "worktree", "add", "-q", str(other), "-b", "feature")
    linked = GitRepo(other, pygit2.Repository(str(other)))
    admin = memrepo.path / ".git" / "worktrees" / "feature"
    gitfile, commondir = (other / ".git").read_bytes(), (admin / "commondir").read_bytes()
    marker = tmp_path / "agent-ran" / "marker"
    marker.parent.mkdir()

    def act(root: Path, memory, request) -> None:
        own = _own_git_dir(memrepo.path, marker)
        (admin / "commondir").write_text(f"{own}\n", encoding="utf-8")
        (root / ".git").write_text(f"gitdir: {own}\n", encoding="utf-8")

    report = cycle(linked, act)
    assert report.exit_code == ExitCode.OK, report.error
    assert (other / ".git").read_bytes() == gitfile and (admin / "commondir").read_bytes() == commondir
    git(other, "status", "--short")
    git(memrepo.path, "status", "--short")
    assert not os.path.lexists(marker)
