"""Hostile cases, class 7: no traceback, ever. Every command, in every damaged repository below, exits 0-5 with
one line that names what is wrong and the fix; exit 70 and a traceback remain for genuine bugs only, and the
last tests prove that a bug injected anywhere still gets them.

A damaged repository is what careless users and hostile agents leave behind: a corrupt index, a missing object,
`.git/gitmem` as a plain file, memory files that are directories or FIFOs, a config that is not text, a prompt
that is a directory, a cache that is garbage.
"""
from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pygit2
import pytest

from tests.support.helpers import GitRepo, make_repo
from tests.support.hostile import deadline, plant

CONFIG = "agent:\n  backend: command\n  command: 'true'\n"


def _object_path(repo: GitRepo, oid: str) -> Path:
    return repo.path / ".git" / "objects" / oid[:2] / oid[2:]


def _drop_head_tree(repo: GitRepo, outside: Path) -> None:
    repo.commit_files({"notes.txt": "a second commit\n"})
    _object_path(repo, str(repo.repo.head.peel(pygit2.Commit).tree_id)).unlink()


def _drop_log_blob(repo: GitRepo, outside: Path) -> None:
    _object_path(repo, str(repo.repo.head.peel(pygit2.Commit).tree["LOG.md"].id)).unlink()


def _write(rel: str, data: bytes) -> Callable[[GitRepo, Path], None]:
    def damage(repo: GitRepo, outside: Path) -> None:
        target = repo.path / rel
        if target.is_dir() and not target.is_symlink():
            shutil.rmtree(target)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    return damage


def _mkdir(rel: str) -> Callable[[GitRepo, Path], None]:
    def damage(repo: GitRepo, outside: Path) -> None:
        target = repo.path / rel
        if target.is_file() or target.is_symlink():
            target.unlink()
        (target / "inside").mkdir(parents=True, exist_ok=True)
    return damage


def _plant(rel: str, kind: str) -> Callable[[GitRepo, Path], None]:
    return lambda repo, outside: plant(repo.path, rel, kind, outside)


def _state_link(repo: GitRepo, outside: Path) -> None:
    state = repo.path / ".git" / "gitmem"
    shutil.rmtree(state, ignore_errors=True)
    state.symlink_to(outside)


def _detach(repo: GitRepo, outside: Path) -> None:
    repo.repo.set_head(repo.repo.head.target)


def _gitfile_nowhere(repo: GitRepo, outside: Path) -> None:
    shutil.rmtree(repo.path / ".git")
    (repo.path / ".git").write_text(f"gitdir: {outside / 'gone'}\n", encoding="utf-8")


def _unborn(repo: GitRepo, outside: Path) -> None:
    shutil.rmtree(repo.path / ".git")
    pygit2.init_repository(str(repo.path), initial_head="main")


# name -> (damage, a name the failing commands' message must contain, or "")
DAMAGE: dict[str, tuple[Callable[[GitRepo, Path], None], str]] = {
    "corrupt-index": (_write(".git/index", b"DIRC garbage, not an index"), "index"),
    "truncated-index": (_write(".git/index", b"DIRC\x00\x00\x00\x02"), "index"),
    "missing-tree": (_drop_head_tree, "git fsck"),
    "missing-log-blob": (_drop_log_blob, "git fsck"),
    "state-dir-is-a-file": (_write(".git/gitmem", b"not a directory\n"), ".git/gitmem"),
    "state-dir-is-a-link": (_state_link, ".git/gitmem"),
    "recall-index-is-a-dir": (_mkdir(".git/gitmem/recall.sqlite"), ""),
    "recall-index-is-garbage": (_write(".git/gitmem/recall.sqlite", b"garbage" * 100), ""),
    "lines-cache-is-garbage": (_write(".git/gitmem/lines.json", b"\xff{not json"), ""),
    "lines-cache-is-a-dir": (_mkdir(".git/gitmem/lines.json"), ""),
    "lock-is-a-dir": (_mkdir(".git/gitmem/cycle.lock"), ""),
    "lock-is-garbage": (_write(".git/gitmem/cycle.lock", b"\x00\xff garbage"), ""),
    "rules-is-a-dir": (_mkdir("RULES.md"), "RULES.md"),
    "log-is-a-submodule": (_plant("LOG.md", "submodule"), "LOG.md"),
    "now-is-a-fifo": (_plant("NOW.md", "fifo"), "NOW.md"),
    "decisions-is-a-loop": (_plant("DECISIONS.md", "link-loop"), "DECISIONS.md"),
    "roadmap-is-a-dir": (_mkdir("ROADMAP.md"), "ROADMAP.md"),
    "config-is-a-dir": (_mkdir("gitmem.yaml"), "gitmem.yaml"),
    "config-is-binary": (_write("gitmem.yaml", b"\xff\xfe\x00garbage"), "gitmem.yaml"),
    "config-is-a-list": (_write("gitmem.yaml", b"- a\n- b\n"), "gitmem.yaml"),
    "prompt-is-a-dir": (_mkdir("prompts/cycle.md"), ""),
    "close-prompt-is-a-dir": (_mkdir("prompts/close.md"), ""),
    "precommit-config-is-a-dir": (_mkdir(".pre-commit-config.yaml"), ""),
    "memory-is-binary": (_write("LESSONS.md", b"\x00\xff\xfe binary \x00"), "LESSONS.md"),
    "memory-is-empty": (_write("LOG.md", b""), ""),
    "detached-head": (_detach, ""),
    "unborn-head": (_unborn, ""),
    "gitfile-points-nowhere": (_gitfile_nowhere, "git"),
}

COMMANDS: dict[str, list[str]] = {
    "check": ["check"],
    "check-worktree": ["check", "--worktree"],
    "verify": ["verify", "--range", "0000000000000000000000000000000000000000..HEAD"],
    "status": ["status", "--json"],
    "pending": ["pending"],
    "context": ["context"],
    "recall": ["recall", "clock", "--until", "9999-12-31"],
    "log-add": ["log", "add", "--task", "t", "--outcome", "built", "--result", "r"],
    "now-add": ["now", "add", "--did", "d", "--human", "h", "--next", "n"],
    "decision-ask": ["decision", "ask", "--title", "Which?", "--recommendation", "this"],
    "lesson-add": ["lesson", "add", "--title", "t", "--happened", "h", "--why", "w", "--change", "c"],
    "close": ["close", "--no-llm"],
    "cycle": ["cycle"],
    "report": ["report", "--format", "summary", "--out", "-"],
    "config": ["config"],
    "init": ["init", "."],
}


@pytest.fixture
def damaged_world(tmp_path: Path, git_env: None, monkeypatch: pytest.MonkeyPatch) -> GitRepo:
    repo = make_repo(tmp_path / "repo")
    repo.commit_files({"gitmem.yaml": CONFIG}, "a command agent")
    monkeypatch.setenv("GITMEM_CYCLE", "1")
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    return repo


@pytest.mark.parametrize("command", sorted(COMMANDS))
@pytest.mark.parametrize("damage", sorted(DAMAGE))
def test_no_traceback_ever(damaged_world: GitRepo, tmp_path: Path, cli, damage: str, command: str) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "precious.txt").write_text("keep me\n", encoding="utf-8")
    how, name = DAMAGE[damage]
    how(damaged_world, outside)
    with deadline(60):
        result = cli(COMMANDS[command], cwd=damaged_world.path)
    both = result.out + result.err
    assert "Traceback" not in both and result.code != 70, both
    assert result.code in (0, 1, 2, 3, 4, 5), both
    if result.code == 2:
        lines = [line for line in result.err.splitlines() if line and not line.startswith("gitmem: warning:")]
        assert lines and lines[0].startswith(("gitmem: ", "Usage:")), result.err
        if name and result.err.startswith("gitmem: "):
            assert name in result.err, result.err
    assert (outside / "precious.txt").read_text(encoding="utf-8") == "keep me\n"
    assert not [p for p in outside.rglob("*") if p.name not in ("precious.txt",)] or damage == "state-dir-is-a-link"


# -- the one error map still shows a bug as a bug -------------------------------------------------------------------

BUGS = {
    "check": ("gitmem.checks.check_and_verify", "check_staged", ["check"]),
    "context": ("gitmem.cycle.budget", "reading", ["context"]),
    "log-add": ("gitmem.memory_writer", "MemoryWriter.add_log_entry", COMMANDS["log-add"]),
    "status": ("gitmem.views.status", "collect_status", ["status"]),
    "files": ("gitmem.confined.files", "_open", ["context"]),
    "gitio": ("gitmem.gitio.repository", "head_id", ["status"]),
}


@pytest.mark.parametrize("where", sorted(BUGS))
@pytest.mark.parametrize("bug", [RuntimeError, KeyError, OSError, ValueError, TypeError])
def test_an_injected_bug_still_exits_70_with_its_traceback(damaged_world: GitRepo, cli, monkeypatch, where: str,
                                                           bug: type[Exception]) -> None:
    """No catch-all hides a bug as a usage error: not in the error map, not in the file layer, not in the git
    layer's translation of git's own errors (an OSError raised by gitmem's own code is a bug too)."""
    import importlib

    module_name, dotted, argv = BUGS[where]
    target: object = importlib.import_module(module_name)
    *owners, attribute = dotted.split(".")
    for owner in owners:
        target = getattr(target, owner)

    def broken(*args: object, **kwargs: object) -> None:
        raise bug("an injected bug")

    if where == "gitio":      # through the git layer's translating wrapper, resolved afresh
        from gitmem import gitio
        assert gitio.head_id is not None
        monkeypatch.delitem(gitio.__dict__, "head_id")
    monkeypatch.setattr(target, attribute, broken)
    result = cli(argv, cwd=damaged_world.path)
    assert result.code == 70, result.out + result.err
    assert "unexpected error; please report it" in result.err and "Traceback" in result.err
    assert f"{bug.__name__}: " in result.err and "an injected bug" in result.err


def test_git_errors_are_translated_only_when_they_are_git_errors() -> None:
    """The git layer turns git's own errors (pygit2.GitError) into one-line RepoErrors; nothing else."""
    from gitmem.gitio.repository import RepoError, explained

    assert explained(RuntimeError("index")) is None
    assert explained(KeyError("object")) is None
    assert explained(OSError("index")) is None
    found = explained(pygit2.GitError("failed to read index: bad signature"))
    assert isinstance(found, RepoError) and "rm .git/index && git reset" in str(found)
    assert "git fsck" in str(explained(pygit2.GitError("object not found - no match for id (abc)")))
    assert "git status" in str(explained(pygit2.GitError("something else")))


def test_a_corrupt_index_names_the_index_and_the_fix(damaged_world: GitRepo, cli) -> None:
    (damaged_world.path / ".git" / "index").write_bytes(b"garbage")
    result = cli(["check"], cwd=damaged_world.path)
    assert result.code == 2
    assert result.err.startswith("gitmem: git cannot read the index") and "git reset" in result.err


def test_a_huge_recall_window_is_not_an_overflow(damaged_world: GitRepo, cli) -> None:
    for bounds in (["--until", "9999-12-31"], ["--since", "0001-01-01"], ["--since", "9999-12-31"],
                   ["--since", "0001-01-01", "--until", "9999-12-31"]):
        result = cli(["recall", "clock", *bounds], cwd=damaged_world.path)
        assert result.code == 0 and "Traceback" not in result.err


def test_report_to_an_unwritable_place_exits_2(damaged_world: GitRepo, cli) -> None:
    (damaged_world.path / "out-dir").mkdir()
    result = cli(["report", "--out", str(damaged_world.path / "out-dir")], cwd=damaged_world.path)
    assert result.code == 2 and result.err.startswith("gitmem: cannot write ") and "--out" in result.err


def test_the_runner_does_not_leave_the_lock_when_the_state_dir_is_refused(damaged_world: GitRepo, cli) -> None:
    state = damaged_world.path / ".git" / "gitmem"
    shutil.rmtree(state, ignore_errors=True)
    state.write_text("x", encoding="utf-8")
    result = cli(["cycle"], cwd=damaged_world.path)
    assert result.code == 2 and ".git/gitmem is not a directory" in result.err
    assert state.read_text(encoding="utf-8") == "x" and not os.path.isdir(state)


@pytest.mark.parametrize("bounds", [["--since", "0001-01-01"], ["--until", "9999-12-31"], ["--since", "1969-12-31"],
                                    ["--until", "2200-01-01"], ["--since", "2026-02-30"]])
def test_report_days_out_of_range_exit_2(damaged_world: GitRepo, cli, bounds: list[str]) -> None:
    """The last day of the calendar has no next day, and a chart has a point per day: both are bounded."""
    result = cli(["report", *bounds, "--format", "summary", "--out", "-"], cwd=damaged_world.path)
    assert result.code == 2 and "Traceback" not in result.err and bounds[0] in result.err


@pytest.mark.parametrize("command", ["init", "demo"])
@pytest.mark.parametrize("where", ["/dev/null", "{repo}/LOG.md", "{repo}/LOG.md/inside", "{repo}/.git/HEAD/x"])
def test_init_and_demo_into_a_place_that_is_no_directory_exit_2(damaged_world: GitRepo, cli, command: str,
                                                                where: str) -> None:
    target = where.format(repo=damaged_world.path)
    before = damaged_world.read("LOG.md")
    result = cli([command, target], cwd=damaged_world.path)
    assert result.code == 2 and "Traceback" not in result.err and target in result.err
    assert damaged_world.read("LOG.md") == before
