"""Hostile cases, class 7: GIT_DIR and GIT_WORK_TREE are honoured by every command, wherever it runs from.

The repository is reached in every way git allows (a separate git dir, a linked worktree, relative variables,
a subdirectory, core.worktree), each command runs from somewhere else, and its effect must land in that
repository and nowhere else. Bad variables exit 2 naming the variable.
"""
from __future__ import annotations

import shutil
import sys
from collections.abc import Callable
from pathlib import Path

import pygit2
import pytest

from gitmem.confined import files
from tests.support.gitcli import run_git
from tests.support.helpers import GitRepo, make_repo
from tests.support.hostile import digest

AGENT_CONFIG = (f"agent:\n  backend: command\n  command: \"{sys.executable} -m gitmem log add --task t "
                "--outcome built --result r\"\n")

# name -> argv; what each must leave behind is checked below
COMMANDS: dict[str, list[str]] = {
    "check": ["check"],
    "check-worktree": ["check", "--worktree"],
    "verify": ["verify", "--range", "HEAD~1..HEAD"],
    "status": ["status", "--json"],
    "context": ["context"],
    "pending": ["pending"],
    "recall": ["recall", "clock"],
    "report": ["report", "--format", "summary", "--out", "-"],
    "log-add": ["log", "add", "--task", "t", "--outcome", "built", "--result", "r"],
    "close": ["close", "--no-llm"],
    "cycle": ["cycle"],
}


class Place:
    """Where the repository is (its work tree and git dir), and where and how a command reaches it."""

    def __init__(self, root: Path, git_dir: Path, cwd: Path, env: dict[str, str]) -> None:
        self.root, self.git_dir, self.cwd, self.env = root, git_dir, cwd, env


def _repo(tmp_path: Path) -> GitRepo:
    repo = make_repo(tmp_path / "repo")
    repo.commit_files({"gitmem.yaml": AGENT_CONFIG}, "a command agent")
    return repo


def _elsewhere(tmp_path: Path) -> Path:
    place = tmp_path / "elsewhere"
    place.mkdir(exist_ok=True)
    return place


def absolute_variables(tmp_path: Path) -> Place:
    repo = _repo(tmp_path)
    return Place(repo.path, repo.path / ".git", _elsewhere(tmp_path),
                 {"GIT_DIR": str(repo.path / ".git"), "GIT_WORK_TREE": str(repo.path)})


def relative_variables(tmp_path: Path) -> Place:
    repo = _repo(tmp_path)
    return Place(repo.path, repo.path / ".git", tmp_path, {"GIT_DIR": "repo/.git", "GIT_WORK_TREE": "repo"})


def git_dir_only_at_the_root(tmp_path: Path) -> Place:
    repo = _repo(tmp_path)
    return Place(repo.path, repo.path / ".git", repo.path, {"GIT_DIR": str(repo.path / ".git")})


def _separate(tmp_path: Path) -> tuple[Path, Path]:
    repo = _repo(tmp_path)
    outside_dir = tmp_path / "store.git"
    shutil.move(str(repo.path / ".git"), outside_dir)
    return repo.path, outside_dir


def separate_git_dir_by_variables(tmp_path: Path) -> Place:
    root, store = _separate(tmp_path)
    return Place(root, store, _elsewhere(tmp_path), {"GIT_DIR": str(store), "GIT_WORK_TREE": str(root)})


def separate_git_dir_by_gitfile(tmp_path: Path) -> Place:
    root, store = _separate(tmp_path)
    (root / ".git").write_text(f"gitdir: {store}\n", encoding="utf-8")
    pygit2.Repository(str(store)).config["core.worktree"] = str(root)
    return Place(root, store, root, {})


def core_worktree_with_git_dir(tmp_path: Path) -> Place:
    root, store = _separate(tmp_path)
    pygit2.Repository(str(store)).config["core.worktree"] = str(root)
    return Place(root, store, _elsewhere(tmp_path), {"GIT_DIR": str(store)})


def linked_worktree(tmp_path: Path) -> Place:
    repo = _repo(tmp_path)
    run_git(repo.path, "worktree", "add", "-q", str(tmp_path / "linked"), "-b", "side")
    return Place(tmp_path / "linked", repo.path / ".git" / "worktrees" / "linked", tmp_path / "linked", {})


def subdirectory(tmp_path: Path) -> Place:
    repo = _repo(tmp_path)
    (repo.path / "src" / "deep").mkdir(parents=True)
    return Place(repo.path, repo.path / ".git", repo.path / "src" / "deep", {})


PLACES: dict[str, Callable[[Path], Place]] = {f.__name__: f for f in (
    absolute_variables, relative_variables, git_dir_only_at_the_root, separate_git_dir_by_variables,
    separate_git_dir_by_gitfile, core_worktree_with_git_dir, linked_worktree, subdirectory)}


@pytest.mark.parametrize("command", sorted(COMMANDS))
@pytest.mark.parametrize("place", sorted(PLACES))
def test_every_command_works_on_the_repository_git_would_use(tmp_path: Path, git_env: None, cli, monkeypatch,
                                                             place: str, command: str) -> None:
    where = PLACES[place](tmp_path)
    for name, value in where.env.items():
        monkeypatch.setenv(name, value)
    if command == "log-add":
        monkeypatch.setenv("GITMEM_CYCLE", "1")
    repo = pygit2.Repository(str(where.git_dir))
    head = str(repo.head.target)
    log_before = (where.root / "LOG.md").read_bytes()
    apart = where.cwd != where.root and where.root not in where.cwd.parents and where.cwd not in where.root.parents
    around = digest(where.cwd) if apart else None
    result = cli(COMMANDS[command], cwd=where.cwd)
    assert result.code == 0, result.out + result.err
    assert "Traceback" not in result.err
    if command == "log-add":
        assert (where.root / "LOG.md").read_bytes().startswith(log_before)
        assert len((where.root / "LOG.md").read_bytes()) > len(log_before)
    if command == "cycle":
        tip = repo.head.peel(pygit2.Commit)
        assert str(tip.id) != head and tip.message.startswith("gitmem: cycle 1 · built")
        assert files.read_bytes(where.root, "LOG.md") == tip.tree["LOG.md"].data
    if command == "close":
        assert (where.git_dir / "gitmem").is_dir() or str(repo.head.target) != head
    if around is not None:
        assert digest(where.cwd) == around          # nothing was written where the command ran from


def test_git_dir_wins_over_the_repository_around_the_current_directory(tmp_path: Path, git_env: None, cli,
                                                                       monkeypatch) -> None:
    target = _repo(tmp_path)
    other = make_repo(tmp_path / "other")
    monkeypatch.setenv("GITMEM_CYCLE", "1")
    monkeypatch.setenv("GIT_DIR", str(target.path / ".git"))
    monkeypatch.setenv("GIT_WORK_TREE", str(target.path))
    before = other.read("LOG.md")
    result = cli(COMMANDS["log-add"], cwd=other.path)
    assert result.code == 0
    assert other.read("LOG.md") == before and target.read("LOG.md") != before


@pytest.mark.parametrize("variables, named", [
    ({"GIT_DIR": "/nonexistent/.git"}, "GIT_DIR=/nonexistent/.git is not a directory"),
    ({"GIT_DIR": "{tmp}"}, "is not inside a git repository"),
    ({"GIT_DIR": "{repo}/.git", "GIT_WORK_TREE": "/nonexistent/tree"}, "GIT_WORK_TREE=/nonexistent/tree is not"),
    ({"GIT_DIR": "{repo}/.git", "GIT_WORK_TREE": "{repo}/LOG.md"}, "GIT_WORK_TREE="),
    ({"GIT_DIR": "{repo}/LOG.md"}, "GIT_DIR="),
])
@pytest.mark.parametrize("argv", [["check"], ["status"], COMMANDS["log-add"], ["cycle"]])
def test_bad_variables_exit_2_naming_them(tmp_path: Path, git_env: None, cli, monkeypatch,
                                          variables: dict[str, str], named: str, argv: list[str]) -> None:
    repo = _repo(tmp_path)
    (tmp_path / "plain").mkdir()
    for name, value in variables.items():
        monkeypatch.setenv(name, value.format(tmp=tmp_path / "plain", repo=repo.path))
    before = digest(repo.path)
    result = cli(argv, cwd=tmp_path / "plain")
    assert result.code == 2 and "Traceback" not in result.err, result.err
    assert result.err.startswith("gitmem: ") and named in result.err and len(result.err.splitlines()) == 1
    assert digest(repo.path) == before


def test_an_alternate_index_is_the_one_checked(memrepo: GitRepo, cli, monkeypatch, tmp_path: Path) -> None:
    """A hook's GIT_INDEX_FILE: a link staged there (and only there) is GM908."""
    alternate = tmp_path / "alternate-index"
    shutil.copy(memrepo.path / ".git" / "index", alternate)
    index = pygit2.Index(str(alternate))
    index.add(pygit2.IndexEntry("RULES.md", memrepo.repo.create_blob(b"/etc/passwd"), pygit2.enums.FileMode.LINK))
    index.write()
    assert cli(["check"], cwd=memrepo.path).code == 0
    monkeypatch.setenv("GIT_INDEX_FILE", str(alternate))
    result = cli(["check"], cwd=memrepo.path)
    assert result.code == 1 and result.lines[0].startswith("RULES.md:1: GM908 RULES.md is a symbolic link")


def test_a_missing_alternate_index_is_an_empty_one_not_a_crash(memrepo: GitRepo, cli, monkeypatch,
                                                               tmp_path: Path) -> None:
    monkeypatch.setenv("GIT_INDEX_FILE", str(tmp_path / "no-such-index"))
    result = cli(["check"], cwd=memrepo.path)
    assert "Traceback" not in result.err and result.code in (1, 2)
    # Read as an empty index: every memory file is staged as gone (not staged: the work tree holds it), each
    # named with its GM code.
    assert result.code == 1, result.out + result.err
    assert "DECISIONS.md:1: GM904 memory file DECISIONS.md is not staged" in result.out
    assert "LOG.md:1: GM301 " in result.out
