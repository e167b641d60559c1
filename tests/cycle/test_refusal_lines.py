"""A cycle's refusals, and a session's write refused while a cycle runs, are printed as `path:1: GMnnn message`:
the file or the lock they are about, never `(cycle)`; line 1, as no line of it means anything. Exit codes stay."""
from __future__ import annotations

import json
import re
import shutil

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


# -- refusals that had `(cycle)` for a path: a gitmem.yaml setting's line, the first line a listing names, a branch

def located(err: str) -> list[tuple[str, int, str]]:
    """(path, line, code) of each line of stderr that reads `path:line: GMnnn message [slug]`."""
    return [(found.group(1), int(found.group(2)), found.group(3)) for line in err.splitlines()
            if (found := re.match(r"^(\S+?):([0-9]+): (GM[0-9]{3}) \S.* \[[a-z0-9-]+\]", line))]


def line_of(text: str, line: str) -> int:
    return text.splitlines().index(line) + 1


def test_over_the_daily_cap_is_refused_at_the_cap_in_gitmem_yaml(memrepo: GitRepo, cli) -> None:
    from gitmem.memory_writer import MemoryWriter

    config = memrepo.read("gitmem.yaml").replace("\ncycle:\n", "\ncycle:\n  cost_per_day: 0.5\n", 1)
    memrepo.commit_files({"gitmem.yaml": config.replace("  # backend: anthropic",
                                                        "  backend: command\n  command: 'true'\n  #")}, "capped")
    MemoryWriter(memrepo.ws()).add_log_entry(task="earlier", outcome="built", result="done", cycle=1,
                                             evidence="tokens: input 10, output 5, cost_usd 0.75, total 15")
    memrepo.commit_files({"LOG.md": memrepo.read("LOG.md")}, "cycle 1")
    result = cli(["cycle"], cwd=memrepo.path)
    assert result.code == ExitCode.DIRTY
    cap = line_of(memrepo.read("gitmem.yaml"), "  cost_per_day: 0.5")
    assert located(result.err) == [("gitmem.yaml", cap, "GM750")], result.err
    answer = json.loads(cli(["cycle", "--json"], cwd=memrepo.path).out)
    assert [(v["path"], v["line"], v["code"]) for v in answer["violations"]] == [("gitmem.yaml", cap, "GM750")]


def test_no_box_is_refused_at_agent_sandbox_in_gitmem_yaml(memrepo: GitRepo, cli, tmp_path, monkeypatch) -> None:
    """`agent.sandbox: bubblewrap` and no bwrap on PATH (only git is)."""
    from tests.support.helpers import with_command_backend

    memrepo.commit_files({"gitmem.yaml": with_command_backend(memrepo.read("gitmem.yaml"), "true",
                                                              sandbox="bubblewrap")}, "a boxed command agent")
    only_git = tmp_path / "bin"
    only_git.mkdir()
    (only_git / "git").symlink_to(shutil.which("git") or "/usr/bin/git")
    monkeypatch.setenv("PATH", str(only_git))
    result = cli(["cycle"], cwd=memrepo.path)
    assert result.code == ExitCode.DIRTY
    mode = line_of(memrepo.read("gitmem.yaml"), "    mode: bubblewrap")
    assert located(result.err) == [("gitmem.yaml", mode, "GM707")], result.err


def test_invalid_memory_is_refused_at_the_first_line_it_names(memrepo: GitRepo, cli) -> None:
    memrepo.commit_files({"gitmem.yaml": COMMAND_AGENT}, "a command agent")
    bad = memrepo.read("LOG.md") + "\n## 2026-11-30 15:00 UTC · cycle seven · built\n- Task: t\n"
    memrepo.commit_files({"LOG.md": bad}, "a heading committed past the hook")
    result = cli(["cycle", "--json"], cwd=memrepo.path)
    assert result.code == ExitCode.DIRTY
    found = [(v["path"], v["line"], v["code"]) for v in json.loads(result.out)["violations"]]
    heading = line_of(bad, "## 2026-11-30 15:00 UTC · cycle seven · built")
    assert found[0] == ("LOG.md", heading, "GM705") and ("LOG.md", heading) in [f[:2] for f in found[1:]], found


def test_a_failed_agent_that_changed_nothing_is_reported_at_the_cycle_branch(memrepo: GitRepo, cli) -> None:
    memrepo.commit_files({"gitmem.yaml": COMMAND_AGENT.replace("'true'", "'false'")}, "an agent that fails")
    result = cli(["cycle", "--json"], cwd=memrepo.path)
    assert result.code == ExitCode.SALVAGED, result.out + result.err
    found = [(v["path"], v["line"], v["code"]) for v in json.loads(result.out)["violations"]]
    assert found == [(".git/refs/heads/main", 1, "GM710")], found


# -- the close's refusals had `(close)` for a path: they name what they are about as the cycle's do

def test_the_close_refuses_uncommitted_memory_at_its_first_file(memrepo: GitRepo, cli) -> None:
    memrepo.append("NOW.md", "\nan unsaved line\n")
    result = cli(["close", "--no-llm", "--json"], cwd=memrepo.path)
    assert result.code == ExitCode.DIRTY
    found = [(v["path"], v["line"], v["code"]) for v in json.loads(result.out)["violations"]]
    assert found == [("NOW.md", 1, "GM801")], found
    assert diagnostics(cli(["close", "--no-llm"], cwd=memrepo.path).err) == [("NOW.md", "GM801")]


def test_the_close_refuses_a_held_lock_at_the_lock_file(memrepo: GitRepo, cli) -> None:
    hold_the_lock(memrepo)
    result = cli(["close", "--no-llm", "--json"], cwd=memrepo.path)
    assert result.code == ExitCode.DIRTY
    found = [(v["path"], v["line"], v["code"]) for v in json.loads(result.out)["violations"]]
    assert found == [(".git/gitmem/cycle.lock", 1, "GM801")], found
