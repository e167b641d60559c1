"""`gitmem verify` beyond A..B: a new branch, a shallow clone, GitHub outputs, progress, and flat memory."""
from __future__ import annotations

import gc
import os
import pty
import subprocess
import sys
from pathlib import Path

import pytest

from gitmem.checks.check_and_verify import new_branch, verify_range
from gitmem.gitio.blobproof import DerivedSnapshot
from tests.support.gitcli import git
from tests.support.helpers import GitRepo, make_repo, many_commits
from tests.support.terminal import run_on_a_terminal

BIN = Path(sys.executable).parent
ZERO = "0" * 40


def bad_log(repo: GitRepo) -> None:
    """A LOG change that `check` refuses: a heading that is not a cycle entry."""
    repo.append("LOG.md", "## not an entry\n")


def note(repo: GitRepo, text: str) -> str:
    return str(repo.commit_files({"notes.txt": text + "\n"}, f"note: {text}"))


@pytest.fixture
def pushed(tmp_path: Path, git_env: None) -> tuple[GitRepo, Path]:
    """An agent repo whose main, already on origin, holds a commit verify would refuse (pushed without hooks),
    and a branch `feature` with two good commits that origin does not have yet."""
    repo = make_repo(tmp_path / "agent")
    bad_log(repo)
    repo.stage("LOG.md")
    repo.commit("an old mistake, already on origin")
    origin = tmp_path / "origin.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(origin))
    git(repo.path, "remote", "add", "origin", str(origin))
    git(repo.path, "push", "-q", "origin", "main")
    git(repo.path, "checkout", "-q", "-b", "feature")
    note(repo, "one")
    note(repo, "two")
    return repo, origin


def gitmem(cwd: Path, *args: str, stdin: str = "",
           env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(BIN / "gitmem"), *args], cwd=cwd, input=stdin, capture_output=True, text=True,
                          env={**os.environ, **(env or {})})


def test_a_new_branch_pushed_with_the_plain_hook_verifies_only_its_own_commits(pushed) -> None:
    repo, _ = pushed
    line = f"refs/heads/feature {repo.head()} refs/heads/feature {ZERO}\n"
    done = gitmem(repo.path, "verify", "--pre-push", "--remote", "origin", stdin=line)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "2 commit(s) verified" in done.stderr
    # Without a remote name (an old hook), every remote's branches count: the same two commits.
    assert "2 commit(s) verified" in gitmem(repo.path, "verify", "--pre-push", stdin=line).stderr
    # Deleting a branch sends a zero local sha: nothing to verify.
    deleted = gitmem(repo.path, "verify", "--pre-push", stdin=f"(delete) {ZERO} refs/heads/old {repo.head()}\n")
    assert deleted.returncode == 0 and "0 commit(s) verified" in deleted.stderr


def test_a_remote_tip_this_clone_lacks_counts_as_a_new_branch(pushed) -> None:
    repo, _ = pushed
    unknown = "1234567890" * 4
    line = f"refs/heads/feature {repo.head()} refs/heads/feature {unknown}\n"
    done = gitmem(repo.path, "verify", "--pre-push", "--remote", "origin", stdin=line)
    assert done.returncode == 0 and "2 commit(s) verified" in done.stderr


def test_ci_on_a_new_branch_verifies_what_no_other_remote_branch_has(pushed) -> None:
    repo, _ = pushed
    git(repo.path, "push", "-q", "origin", "feature")
    git(repo.path, "fetch", "-q", "origin")
    done = gitmem(repo.path, "verify", "--range", f"{ZERO}..{repo.head()}", "--branch", "feature")
    assert done.returncode == 0 and "2 commit(s) verified" in done.stderr, done.stderr
    # Without the branch's name, branches containing it do not count: still only what main lacks.
    done = gitmem(repo.path, "verify", "--range", f"{ZERO}..{repo.head()}")
    assert done.returncode == 0 and "2 commit(s) verified" in done.stderr, done.stderr
    # A new branch at a commit main already has: nothing new to verify, given its name.
    git(repo.path, "push", "-q", "origin", "main:copy")
    git(repo.path, "fetch", "-q", "origin")
    main = git(repo.path, "rev-parse", "main").strip()
    done = gitmem(repo.path, "verify", "--range", f"{ZERO}..{main}", "--branch", "refs/heads/copy")
    assert done.returncode == 0 and "0 commit(s) verified" in done.stderr, done.stderr


def test_new_branch_span_hides_each_kind_of_tip(pushed) -> None:
    repo, _ = pushed
    main = git(repo.path, "rev-parse", "main").strip()
    git(repo.path, "fetch", "-q", "origin")
    ws = repo.ws()
    assert new_branch(ws, "feature").hide == (main,)
    assert [c.commits for c in [verify_range(ws, None, "feature", hide=(main,))]] == [2]
    assert new_branch(ws, "feature", remote="elsewhere").hide == ()


def test_a_shallow_clone_says_to_fetch_the_whole_history(pushed, tmp_path: Path) -> None:
    repo, origin = pushed
    git(repo.path, "push", "-q", "origin", "feature")
    shallow = tmp_path / "shallow"
    git(tmp_path, "clone", "-q", "--depth", "1", "--branch", "feature", f"file://{origin}", str(shallow))
    output = tmp_path / "github_output"
    summary = tmp_path / "summary"
    env = {"GITHUB_OUTPUT": str(output), "GITHUB_STEP_SUMMARY": str(summary)}

    done = gitmem(shallow, "verify", "--range", "HEAD~1..HEAD", "--format", "github", env=env)

    assert done.returncode == 2
    assert done.stdout.startswith("::error title=gitmem verify::unknown revision 'HEAD~1': this clone is shallow")
    assert "`fetch-depth: 0`" in done.stdout and "fetch-depth: 0" in done.stderr
    assert output.read_text(encoding="utf-8") == "outcome=error\n"
    assert "### gitmem verify: error" in summary.read_text(encoding="utf-8")
    # A range that reaches the cut is refused too, rather than checked as if the cut were the root.
    done = gitmem(shallow, "verify", "--range", f"{ZERO}..HEAD")
    assert done.returncode == 2 and "is where the history stops" in done.stderr
    # A range inside what the clone has still works.
    assert gitmem(shallow, "verify", "--range", "HEAD..HEAD").returncode == 0


def test_github_format_writes_the_outcome_and_a_summary_for_check_and_verify(memrepo: GitRepo,
                                                                            tmp_path: Path) -> None:
    output, summary = tmp_path / "out", tmp_path / "summary"
    env = {"GITHUB_OUTPUT": str(output), "GITHUB_STEP_SUMMARY": str(summary)}
    clean = gitmem(memrepo.path, "check", "--worktree", "--format", "github", env=env)
    assert clean.returncode == 0 and output.read_text(encoding="utf-8") == "outcome=clean\n"
    assert "### gitmem check: clean" in summary.read_text(encoding="utf-8")

    start = memrepo.head()
    bad_log(memrepo)
    memrepo.stage("LOG.md")
    memrepo.commit("a mistake")
    output.write_text("", encoding="utf-8")
    done = gitmem(memrepo.path, "verify", "--range", f"{start}..HEAD", "--format", "github", env=env)
    assert done.returncode == 1
    assert output.read_text(encoding="utf-8") == "outcome=violations\n"
    text = summary.read_text(encoding="utf-8")
    assert "### gitmem verify: violations" in text and "1 commit(s) verified" in text
    assert "LOG.md:" in text and "```text" in text

    output.write_text("", encoding="utf-8")
    done = gitmem(memrepo.path, "verify", "--range", f"HEAD..{start}", "--format", "github", env=env)
    assert done.returncode == 5 and output.read_text(encoding="utf-8") == "outcome=rewritten\n"
    # Text format (a hook) writes nothing to GitHub's files.
    output.write_text("", encoding="utf-8")
    gitmem(memrepo.path, "check", "--worktree", env=env)
    assert output.read_text(encoding="utf-8") == ""


def test_verify_over_a_long_range_shows_progress_on_a_terminal_only(memrepo: GitRepo) -> None:
    start = memrepo.head()
    many_commits(memrepo, 230)
    argv = [str(BIN / "gitmem"), "verify", "--range", f"{start}..main"]
    env = {k: v for k, v in os.environ.items() if k not in ("CI", "GITHUB_ACTIONS")}
    piped = subprocess.run(argv, cwd=memrepo.path, capture_output=True, text=True, env=env)
    assert piped.returncode == 0 and piped.stderr == "230 commit(s) verified, memory history is clean\n"

    done, terminal = run_on_a_terminal(argv, memrepo.path, env, stdout_too=False)
    assert done.returncode == 0
    assert "verifying commits" in terminal and "230/230" in terminal
    # CI gets none, even on a terminal.
    leader, follower = pty.openpty()
    subprocess.run(argv, cwd=memrepo.path, stdout=subprocess.PIPE, stderr=follower, env={**env, "CI": "true"})
    os.close(follower)
    assert b"verifying commits" not in os.read(leader, 65536)
    os.close(leader)


def test_verify_keeps_no_snapshot_alive_between_commits(memrepo: GitRepo) -> None:
    """Flat memory in the range length: each commit's copies are freed by reference counting as soon as the
    next commit is checked, without waiting for the cyclic garbage collector."""
    start = memrepo.head()
    for n in range(5):
        note(memrepo, f"n{n}")
    gc.collect()
    gc.disable()
    try:
        seen: list[int] = []

        def alive(_: int) -> None:
            seen.append(sum(1 for o in gc.get_objects() if isinstance(o, DerivedSnapshot)))

        result = verify_range(memrepo.ws(), start, "HEAD", progress=alive)
        assert result.commits == 5
        assert max(seen) <= 4          # the previous commit's and this commit's pair, nothing older
        assert sum(1 for o in gc.get_objects() if isinstance(o, DerivedSnapshot)) == 0
    finally:
        gc.enable()
