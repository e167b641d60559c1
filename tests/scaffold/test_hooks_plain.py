"""hooks/pre-commit and hooks/pre-push as plain git hooks: real `git commit` and `git push` to a bare origin."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from gitmem import install_command
from gitmem.scaffold.init import init
from tests.support.gitcli import GIT, isolated_env, run_git
from tests.support.helpers import HUMAN

PROJECT_ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent


def git_env(tmp_path: Path, path: str) -> dict[str, str]:
    """The caller's environment minus anything git-related; an empty global config so no hooksPath applies."""
    return {**isolated_env(global_config=tmp_path / "gitconfig"), "PATH": path}


class Repo:
    def __init__(self, root: Path, env: dict[str, str]) -> None:
        self.root = root
        self.env = env

    def git(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        return run_git(self.root, *args, env=self.env, check=check)

    def gitmem(self, *args: str) -> None:
        subprocess.run([str(BIN / "gitmem"), *args], cwd=self.root, env=self.env, check=True, capture_output=True)

    def head(self, ref: str = "HEAD") -> str:
        return self.git("rev-parse", ref).stdout.strip()

    def read(self, rel: str) -> str:
        return (self.root / rel).read_text(encoding="utf-8")

    def write(self, rel: str, text: str) -> None:
        (self.root / rel).write_text(text, encoding="utf-8")


def install_plain_hooks(root: Path) -> None:
    for name in ("pre-commit", "pre-push"):
        destination = root / ".git" / "hooks" / name
        shutil.copyfile(PROJECT_ROOT / "hooks" / name, destination)
        destination.chmod(0o755)


def new_agent(tmp_path: Path, env: dict[str, str]) -> Repo:
    """An agent repo from `gitmem init`, plain hooks installed, first commit made through the hook and pushed."""
    init(tmp_path / "agent")
    repo = Repo(tmp_path / "agent", env)
    repo.git("config", "user.name", HUMAN[0])
    repo.git("config", "user.email", HUMAN[1])
    install_plain_hooks(repo.root)
    repo.git("add", "-A")
    repo.git("commit", "-q", "-m", "Start the agent")
    subprocess.run([GIT, "init", "-q", "--bare", str(tmp_path / "origin.git")], env=env, check=True)
    repo.git("remote", "add", "origin", str(tmp_path / "origin.git"))
    repo.git("push", "-q", "-u", "origin", "main")
    return repo


@pytest.fixture()
def agent(tmp_path: Path) -> Repo:
    return new_agent(tmp_path, git_env(tmp_path, f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"))


def too_long_now_block(text: str) -> tuple[str, str]:
    """NOW text with a 12-line block appended, and the `path:line: GM101` prefix it must produce."""
    line = len(text.splitlines()) + 2
    block = "\n## 2026-11-30 09:00 UTC · cycle 1\n" + "".join(f"- Did: step {i}\n" for i in range(12))
    return text + block, f"NOW.md:{line}: GM101 NOW block has 12 non-blank lines; the limit is 10"


def rewrite_log(repo: Repo) -> str:
    """Change an already committed LOG line; returns the `path:line: GM301` prefix it must produce."""
    lines = repo.read("LOG.md").split("\n")
    index = next(i for i, line in enumerate(lines) if line.startswith("- Task:"))
    lines[index] = "- Task: something else entirely"
    repo.write("LOG.md", "\n".join(lines))
    return f"LOG.md:{index + 1}: GM301 LOG was rewritten at line {index + 1}"


def commit_log_entry(repo: Repo, task: str) -> None:
    repo.gitmem("log", "add", "--task", task, "--outcome", "built", "--result", "done")
    repo.git("add", "LOG.md")
    repo.git("commit", "-q", "-m", task)


def test_good_commit_accepted_bad_commits_refused(agent: Repo) -> None:
    first = agent.head()
    commit_log_entry(agent, "write the first thing")
    assert agent.head() != first
    assert agent.git("log", "-1", "--format=%s").stdout == "write the first thing\n"

    good = agent.head()
    text, expected = too_long_now_block(agent.read("NOW.md"))
    agent.write("NOW.md", text)
    agent.git("add", "NOW.md")
    refused = agent.git("commit", "-q", "-m", "too long", check=False)
    assert refused.returncode != 0
    assert expected in (refused.stdout + refused.stderr).splitlines()[0]
    assert agent.head() == good
    agent.git("reset", "-q", "--hard")

    expected = rewrite_log(agent)
    agent.git("add", "LOG.md")
    refused = agent.git("commit", "-q", "-m", "rewrite", check=False)
    assert refused.returncode != 0
    assert expected in refused.stdout + refused.stderr
    assert agent.head() == good


def test_commit_all_is_checked_against_the_temporary_index(agent: Repo) -> None:
    # .git/index stays equal to HEAD; only git's temporary index (GIT_INDEX_FILE) holds the bad NOW.
    text, expected = too_long_now_block(agent.read("NOW.md"))
    agent.write("NOW.md", text)
    before = agent.head()
    refused = agent.git("commit", "-a", "-q", "-m", "sneaky", check=False)
    assert refused.returncode != 0
    assert expected in refused.stdout + refused.stderr
    assert agent.head() == before

    agent.git("checkout", "--", "NOW.md")
    agent.gitmem("log", "add", "--task", "unstaged but good", "--outcome", "built", "--result", "ok")
    agent.git("commit", "-a", "-q", "-m", "commit -a good")
    assert agent.head() != before
    assert agent.git("status", "--porcelain").stdout == ""


def test_commit_only_paths_is_checked_against_the_temporary_index(agent: Repo) -> None:
    # The real index holds a bad staged NOW, but `git commit -- LOG.md` commits only LOG: it must pass.
    text, expected = too_long_now_block(agent.read("NOW.md"))
    agent.write("NOW.md", text)
    agent.git("add", "NOW.md")
    agent.gitmem("log", "add", "--task", "only this path", "--outcome", "built", "--result", "ok")
    before = agent.head()
    agent.git("commit", "-q", "-m", "only LOG", "--", "LOG.md")
    assert agent.head() != before
    assert agent.git("show", "--name-only", "--format=", "HEAD").stdout == "LOG.md\n"
    # ...and the bad NOW, committed on its own path, is refused.
    refused = agent.git("commit", "-q", "-m", "only NOW", "--", "NOW.md", check=False)
    assert refused.returncode != 0
    assert expected in refused.stdout + refused.stderr


def test_push_of_bad_history_refused(agent: Repo) -> None:
    commit_log_entry(agent, "a good entry")
    agent.git("push", "-q", "origin", "main")
    pushed = agent.head("origin/main")
    expected = rewrite_log(agent)
    agent.git("commit", "-q", "-a", "--no-verify", "-m", "rewrite LOG behind the hook's back")
    bad = agent.head()[:10]
    refused = agent.git("push", "origin", "main", check=False)
    assert refused.returncode != 0
    output = refused.stdout + refused.stderr  # git passes a pre-push hook's stdout through
    assert f"{expected}; only appending is allowed (commit {bad}) [log-not-append-only]" in output
    assert agent.git("ls-remote", "origin", "refs/heads/main").stdout.split()[0] == pushed


def test_force_push_of_rewritten_history_refused(agent: Repo) -> None:
    commit_log_entry(agent, "one")
    commit_log_entry(agent, "two")
    agent.git("push", "-q", "origin", "main")
    pushed = agent.head()
    # Drop the last entry and write a different one: every commit is valid on its own, but the remote's
    # history would be rewritten.
    agent.git("reset", "-q", "--hard", "HEAD~1")
    commit_log_entry(agent, "two, rewritten")
    refused = agent.git("push", "--force", "origin", "main", check=False)
    assert refused.returncode != 0
    output = refused.stdout + refused.stderr
    assert "(range):1: GM906" in output
    assert "history was rewritten" in output
    assert agent.git("ls-remote", "origin", "refs/heads/main").stdout.split()[0] == pushed


def test_first_push_of_a_new_branch_checks_every_new_commit(agent: Repo) -> None:
    commit_log_entry(agent, "on main")
    agent.git("push", "-q", "origin", "main")
    agent.git("checkout", "-q", "-b", "feature")
    expected = rewrite_log(agent)
    agent.git("commit", "-q", "-a", "--no-verify", "-m", "bad on a new branch")
    refused = agent.git("push", "origin", "feature", check=False)
    assert refused.returncode != 0
    assert expected in refused.stdout + refused.stderr
    assert agent.git("ls-remote", "origin", "refs/heads/feature").stdout == ""


def test_first_push_of_a_new_branch_checks_only_what_no_remote_branch_has(agent: Repo) -> None:
    """Old history already on origin (here with a mistake pushed past the hooks) is not verified again: a new
    branch is checked from where it leaves the remote's branches, as pre-commit computes it."""
    commit_log_entry(agent, "on main")
    rewrite_log(agent)
    agent.git("commit", "-q", "-a", "--no-verify", "-m", "an old mistake")
    agent.git("push", "-q", "--no-verify", "origin", "main")
    agent.git("checkout", "-q", "-b", "feature")
    commit_log_entry(agent, "on the new branch")
    pushed = agent.git("push", "origin", "feature")
    assert "1 commit(s) verified, memory history is clean" in pushed.stderr
    assert agent.git("ls-remote", "origin", "refs/heads/feature").stdout.split()[0] == agent.head()


def test_hook_without_gitmem_says_how_to_install(tmp_path: Path) -> None:
    env = git_env(tmp_path, str(tmp_path / "empty-bin"))  # no gitmem on PATH; git is called by absolute path
    init(tmp_path / "agent")
    repo = Repo(tmp_path / "agent", env)
    install_plain_hooks(repo.root)
    repo.git("add", "-A")
    refused = repo.git("-c", f"user.name={HUMAN[0]}", "-c", f"user.email={HUMAN[1]}", "commit", "-q", "-m", "x",
                       check=False)
    assert refused.returncode != 0
    assert f"gitmem is not installed: {install_command()}" in refused.stderr


def test_plain_hooks_installed_where_no_gitmem_is_on_path_say_so_and_how_to_put_it_there(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The Quick start's gitmem is in a venv nobody activated: init said "next: commit", and every commit then
    failed in the hook. Init now warns, naming the folder that holds this gitmem."""
    only_git = tmp_path / "only git"
    only_git.mkdir()
    (only_git / "git").symlink_to(GIT)
    monkeypatch.setenv("PATH", str(only_git))
    report = init(tmp_path / "agent", (), plain_hooks=True)
    assert report.hooks == ["pre-commit", "pre-push"]
    warned = [w for w in report.warnings if "gitmem is not on PATH" in w]
    assert len(warned) == 1 and str(BIN) in warned[0], report.warnings
    monkeypatch.setenv("PATH", f"{BIN}{os.pathsep}{only_git}")
    again = init(tmp_path / "agent", (), plain_hooks=True)
    assert not [w for w in again.warnings if "gitmem is not on PATH" in w]
