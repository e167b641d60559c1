"""The real pre-commit framework running this repo's .pre-commit-hooks.yaml in an agent repo from `gitmem init`.

pre-commit builds a virtualenv and pip-installs this project into it, so these tests are slow (a minute or
two). `try-repo` always builds in a throwaway store, so it runs twice (bad, good); every other test shares
one installed environment through a session-wide PRE_COMMIT_HOME. pre-commit is pointed at a one-commit
snapshot of this checkout's source-distribution files rather than at the checkout itself: try-repo on a
dirty checkout leaves out untracked files (new modules not yet committed) and runs git against the
developers' own index.
"""
from __future__ import annotations

import shutil
import subprocess
import sys
import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest

import gitmem
from gitmem.scaffold.init import init
from tests.support.gitcli import GIT, isolated_env, run_git
from tests.support.helpers import HUMAN
from tests.support.untraced import untraced_environ

pytestmark = pytest.mark.slow

PROJECT_ROOT = Path(__file__).resolve().parents[2]
PRE_COMMIT = str(Path(sys.executable).parent / "pre-commit")
GITMEM = str(Path(sys.executable).parent / "gitmem")


def source_files() -> list[Path]:
    """What a source distribution holds (pyproject's sdist include list): all pre-commit needs to install."""
    with (PROJECT_ROOT / "pyproject.toml").open("rb") as handle:
        include = tomllib.load(handle)["tool"]["hatch"]["build"]["targets"]["sdist"]["include"]
    found = [PROJECT_ROOT / "pyproject.toml", *PROJECT_ROOT.glob("LICENSE*")]
    for entry in include:
        path = PROJECT_ROOT / entry
        found += [p for p in path.rglob("*") if p.is_file()] if path.is_dir() else [path] if path.is_file() else []
    return [p for p in found if "__pycache__" not in p.parts and p.suffix != ".pyc"]


def run(argv: list[str], cwd: Path, env: dict[str, str], check: bool = True) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, check=False)
    if check and done.returncode != 0:
        raise AssertionError(f"{' '.join(argv)} failed ({done.returncode}):\n{done.stdout}{done.stderr}")
    return done


@pytest.fixture(scope="session")
def session_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("pre-commit-session")


@pytest.fixture(scope="session")
def env(session_dir: Path) -> dict[str, str]:
    """No GIT_* leaking in from an outer hook, an empty global git config, one pre-commit store for all.

    Untraced by coverage: the hooks run gitmem from the virtualenv pre-commit builds, which never measures, and the
    agent's `gitmem log add` is the CLI's own tests' subject; traced, only pre-commit's own processes paid for it."""
    return {**isolated_env(untraced_environ(), global_config=session_dir / "gitconfig"),
            "PRE_COMMIT_HOME": str(session_dir / "pre-commit-home"), "PRE_COMMIT_COLOR": "never"}


@pytest.fixture(scope="session")
def hook_repo(session_dir: Path, env: dict[str, str]) -> tuple[str, str]:
    """A git repo holding this checkout's working tree in one commit: (path, sha) for pre-commit."""
    snapshot = session_dir / "gitmem-src"
    for path in source_files():
        destination = snapshot / path.relative_to(PROJECT_ROOT)
        destination.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(path, destination)
    run([GIT, "init", "-q", "-b", "main"], snapshot, env)
    run([GIT, "add", "-A"], snapshot, env)
    run([GIT, "-c", f"user.name={HUMAN[0]}", "-c", f"user.email={HUMAN[1]}", "commit", "-q", "-m", "snapshot"],
        snapshot, env)
    return str(snapshot), run([GIT, "rev-parse", "HEAD"], snapshot, env).stdout.strip()


class Agent:
    def __init__(self, root: Path, env: dict[str, str]) -> None:
        self.root, self.env = root, env

    def git(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        return run_git(self.root, *args, env=self.env, check=check)

    def pre_commit(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        return run([PRE_COMMIT, *args], self.root, self.env, check)

    def head(self) -> str:
        return self.git("rev-parse", "HEAD").stdout.strip()

    def remote_head(self, branch: str = "main") -> str:
        return self.git("ls-remote", "origin", f"refs/heads/{branch}").stdout.split()[0]

    def log_add(self, task: str) -> None:
        run([GITMEM, "log", "add", "--task", task, "--outcome", "built", "--result", "done"], self.root, self.env)

    def too_long_now_block(self) -> str:
        """Stage a 12-line NOW block; returns the exact diagnostic prefix it must produce."""
        path = self.root / "NOW.md"
        text = path.read_text(encoding="utf-8")
        line = len(text.splitlines()) + 2
        path.write_text(text + "\n## 2026-11-30 09:00 UTC · cycle 1\n"
                        + "".join(f"- Did: step {i}\n" for i in range(12)), encoding="utf-8")
        self.git("add", "NOW.md")
        return f"NOW.md:{line}: GM101 NOW block has 12 non-blank lines; the limit is 10 [now-block-too-long]"

    def rewrite_log(self) -> str:
        path = self.root / "LOG.md"
        lines = path.read_text(encoding="utf-8").split("\n")
        index = next(i for i, line in enumerate(lines) if line.startswith("- Task:"))
        lines[index] = "- Task: quietly changed"
        path.write_text("\n".join(lines), encoding="utf-8")
        self.git("add", "LOG.md")
        return f"LOG.md:{index + 1}: GM301 LOG was rewritten at line {index + 1}; only appending is allowed"


def has_line(output: str, prefix: str) -> bool:
    """True when a whole output line starts with `prefix` (the rest is the fix hint)."""
    return any(line.startswith(prefix) for line in output.splitlines())


def make_agent(root: Path, env: dict[str, str]) -> Agent:
    init(root)
    agent = Agent(root, env)
    agent.git("config", "user.name", HUMAN[0])
    agent.git("config", "user.email", HUMAN[1])
    agent.git("add", "-A")
    agent.git("commit", "-q", "-m", "Start the agent")
    return agent


def test_try_repo_refuses_a_bad_commit_and_accepts_a_good_one(
        tmp_path: Path, env: dict[str, str], hook_repo: tuple[str, str]) -> None:
    agent = make_agent(tmp_path / "agent", env)
    source, sha = hook_repo
    expected = agent.too_long_now_block()
    refused = agent.pre_commit("try-repo", source, "gitmem-check", "--ref", sha, check=False)
    assert refused.returncode == 1, refused.stdout + refused.stderr
    assert "gitmem check (memory format)" in refused.stdout and "Failed" in refused.stdout
    assert has_line(refused.stdout, expected)

    agent.git("reset", "-q", "--hard")
    agent.log_add("a first real task")
    agent.git("add", "LOG.md")
    accepted = agent.pre_commit("try-repo", source, "gitmem-check", "--ref", sha, check=False)
    assert accepted.returncode == 0, accepted.stdout + accepted.stderr
    assert [line for line in accepted.stdout.splitlines() if line.startswith("gitmem check")] == [
        "gitmem check (memory format)" + "." * 45 + "Passed"]


@pytest.fixture()
def installed(tmp_path: Path, env: dict[str, str], hook_repo: tuple[str, str]) -> Iterator[Agent]:
    """An agent repo whose template .pre-commit-config.yaml points at this checkout, installed with plain
    `pre-commit install` (the template's default_install_hook_types adds pre-push), pushed to a bare origin."""
    agent = make_agent(tmp_path / "agent", env)
    source, sha = hook_repo
    config = agent.root / ".pre-commit-config.yaml"
    text = config.read_text(encoding="utf-8")
    config.write_text(text.replace("https://github.com/gitmem-agent/gitmem", source)
                      .replace(f"rev: {gitmem.PINNED_COMMIT}  # frozen: v{gitmem.__version__}\n", f"rev: {sha}\n"),
                      encoding="utf-8")
    agent.git("commit", "-q", "-a", "-m", "Use the local hooks")
    installed = agent.pre_commit("install")
    assert "pre-commit installed at .git/hooks/pre-commit" in installed.stdout
    assert "pre-commit installed at .git/hooks/pre-push" in installed.stdout
    run([GIT, "init", "-q", "--bare", str(tmp_path / "origin.git")], tmp_path, env)
    agent.git("remote", "add", "origin", str(tmp_path / "origin.git"))
    agent.log_add("before the first push")
    agent.git("commit", "-q", "-a", "-m", "First entry")
    agent.git("push", "-q", "-u", "origin", "main")
    yield agent


def test_installed_hook_refuses_bad_commits_and_accepts_good_ones(installed: Agent) -> None:
    before = installed.head()
    expected = installed.too_long_now_block()
    refused = installed.git("commit", "-q", "-m", "too long", check=False)
    assert refused.returncode != 0
    assert has_line(refused.stdout + refused.stderr, expected)
    assert installed.head() == before
    installed.git("reset", "-q", "--hard")

    expected = installed.rewrite_log()
    refused = installed.git("commit", "-q", "-m", "rewrite", check=False)
    assert refused.returncode != 0
    assert has_line(refused.stdout + refused.stderr, expected)
    assert installed.head() == before
    installed.git("reset", "-q", "--hard")

    installed.log_add("a good one")
    installed.git("commit", "-q", "-a", "-m", "good")
    assert installed.head() != before
    # `git commit -a` hands the hook a temporary index: a bad unstaged NOW is still caught.
    expected = installed.too_long_now_block()
    installed.git("reset", "-q")
    refused = installed.git("commit", "-q", "-a", "-m", "sneaky", check=False)
    assert refused.returncode != 0
    assert has_line(refused.stdout + refused.stderr, expected)


def test_pre_push_refuses_bad_history(installed: Agent) -> None:
    pushed = installed.remote_head()
    expected = installed.rewrite_log()
    installed.git("commit", "-q", "--no-verify", "-m", "rewrite LOG behind the hook's back")
    bad = installed.head()
    refused = installed.git("push", "origin", "main", check=False)
    assert refused.returncode != 0
    output = refused.stdout + refused.stderr
    assert "gitmem verify (memory history)" in output
    assert has_line(output, f"{expected} (commit {bad[:10]}) [log-not-append-only]")
    assert installed.remote_head() == pushed

    # The same through `pre-commit run` with explicit refs, as CI or a human would run it.
    ran = installed.pre_commit("run", "--hook-stage", "pre-push", "--from-ref", pushed, "--to-ref", bad,
                               "gitmem-verify", check=False)
    assert ran.returncode == 1
    assert has_line(ran.stdout, f"{expected} (commit {bad[:10]}) [log-not-append-only]")


def test_pre_push_refuses_rewritten_history_and_accepts_a_clean_push(installed: Agent) -> None:
    installed.log_add("two")
    installed.git("commit", "-q", "-a", "-m", "two")
    accepted = installed.git("push", "origin", "main", check=False)
    assert accepted.returncode == 0, accepted.stdout + accepted.stderr
    assert "gitmem verify (memory history)" in accepted.stdout + accepted.stderr
    pushed = installed.remote_head()
    assert pushed == installed.head()

    installed.git("reset", "-q", "--hard", "HEAD~1")
    installed.log_add("two, told differently")
    installed.git("commit", "-q", "-a", "-m", "two again")
    refused = installed.git("push", "--force", "origin", "main", check=False)
    assert refused.returncode != 0
    output = refused.stdout + refused.stderr
    assert has_line(output, "(range):1: GM906 ") and "history was rewritten" in output
    assert installed.remote_head() == pushed


def test_first_push_of_a_bad_root_history_is_refused(tmp_path: Path, env: dict[str, str],
                                                      hook_repo: tuple[str, str]) -> None:
    agent = make_agent(tmp_path / "agent", env)
    source, sha = hook_repo
    (agent.root / ".pre-commit-config.yaml").write_text(
        f"repos:\n- repo: {source}\n  rev: {sha}\n  hooks:\n  - id: gitmem-verify\n", encoding="utf-8")
    agent.pre_commit("install", "--hook-type", "pre-push")
    agent.log_add("entry")
    agent.git("commit", "-q", "-a", "-m", "entry")
    expected = agent.rewrite_log()
    agent.git("commit", "-q", "-m", "rewrite")
    run([GIT, "init", "-q", "--bare", str(tmp_path / "origin.git")], tmp_path, env)
    agent.git("remote", "add", "origin", str(tmp_path / "origin.git"))
    refused = agent.git("push", "origin", "main", check=False)
    assert refused.returncode != 0
    assert has_line(refused.stdout + refused.stderr, expected)
