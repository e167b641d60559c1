"""A cycle's refusals, and a session's write refused while a cycle runs, are printed as `path:1: GMnnn message`:
the file or the lock they are about, never `(cycle)`; line 1, as no line of it means anything. Exit codes stay."""
from __future__ import annotations

import json
import re

from gitmem.errors import ExitCode
from tests.support.gitcli import git
from tests.support.helpers import GitRepo

COMMAND_AGENT = "agent:\n  backend: command\n  command: 'true'\n  sandbox: none\n"


def diagnostics(err: str) -> list[tuple[str, str]]:
    """(path, code) of each line of stderr that reads `path:1: GMnnn message [slug]`."""
    return [(found.group(1), found.group(2)) for line in err.splitlines()
            if (found := re.match(r"^([^\s:]+):1: (GM[0-9]{3}) \S.* \[[a-z0-9-]+\]$", line))]


def hold_the_lock(memrepo: GitRepo) -> None:
    """The cycle lock as a cycle on another machine holds it (a lock from another host always counts as held)."""
    lock = memrepo.path / ".git" / "gitmem" / "cycle.lock"
    lock.parent.mkdir(parents=True, exist_ok=True)
    lock.write_text(json.dumps({"pid": 4242, "host": "elsewhere.example", "started": "2026-12-07 10:00:00 UTC",
                                "what": "cycle"}), encoding="utf-8")


def test_a_dirty_tree_is_refused_at_the_first_file_it_names(memrepo: GitRepo, cli) -> None:
    memrepo.commit_files({"gitmem.yaml": COMMAND_AGENT}, "a command agent")
    memrepo.write("stray.txt", "uncommitted\n")
    result = cli(["cycle"], cwd=memrepo.path)
    assert result.code == ExitCode.DIRTY
    assert diagnostics(result.err) == [("stray.txt", "GM704")], result.err


def test_a_detached_head_is_refused_at_git_head(memrepo: GitRepo, cli) -> None:
    memrepo.commit_files({"gitmem.yaml": COMMAND_AGENT}, "a command agent")
    git(memrepo.path, "checkout", "-q", "--detach")
    result = cli(["cycle"], cwd=memrepo.path)
    assert result.code == ExitCode.DIRTY
    assert diagnostics(result.err) == [(".git/HEAD", "GM702")], result.err


def test_a_held_lock_is_refused_at_the_lock_file(memrepo: GitRepo, cli) -> None:
    memrepo.commit_files({"gitmem.yaml": COMMAND_AGENT}, "a command agent")
    hold_the_lock(memrepo)
    result = cli(["cycle"], cwd=memrepo.path)
    assert result.code == ExitCode.DIRTY
    assert diagnostics(result.err) == [(".git/gitmem/cycle.lock", "GM703")], result.err


def test_a_session_write_while_a_cycle_runs_is_refused_at_the_lock_file(memrepo: GitRepo, cli, monkeypatch) -> None:
    """It had no code at all: now GM722, on stderr and in --json; still exit 1, and nothing is written."""
    monkeypatch.delenv("GITMEM_CYCLE", raising=False)
    hold_the_lock(memrepo)
    before = memrepo.read("LOG.md")
    argv = ["log", "add", "--task", "t", "--outcome", "built", "--result", "r", "--evidence", "e"]
    result = cli(argv, cwd=memrepo.path)
    assert result.code == ExitCode.VIOLATIONS
    assert result.err.startswith("gitmem: refusing to write memory: a cycle is running in this checkout")
    assert diagnostics(result.err) == [(".git/gitmem/cycle.lock", "GM722")], result.err
    answer = json.loads(cli([*argv, "--json"], cwd=memrepo.path).out)
    assert (answer["code"], answer["exit_code"]) == ("GM722", 1)
    assert memrepo.read("LOG.md") == before


def test_a_repository_with_no_commits_is_refused_at_git_head(tmp_path, cli) -> None:
    git(tmp_path, "init", "-q", "-b", "main")
    (tmp_path / "gitmem.yaml").write_text(COMMAND_AGENT, encoding="utf-8")
    result = cli(["cycle"], cwd=tmp_path)
    assert result.code == ExitCode.DIRTY
    assert diagnostics(result.err) == [(".git/HEAD", "GM701")], result.err


def test_a_git_lock_file_is_refused_at_that_file(memrepo: GitRepo, cli) -> None:
    memrepo.commit_files({"gitmem.yaml": COMMAND_AGENT}, "a command agent")
    (memrepo.path / ".git" / "index.lock").write_bytes(b"")
    result = cli(["cycle"], cwd=memrepo.path)
    assert result.code == ExitCode.DIRTY
    assert diagnostics(result.err) == [(".git/index.lock", "GM740")], result.err
