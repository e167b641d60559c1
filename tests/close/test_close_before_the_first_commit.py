"""A newcomer runs `gitmem close` right after `gitmem init`, before the first commit: the close refuses to start
as the cycle does (exit 3, the memory files are not committed), not exit 1, "the result would be invalid"."""
from __future__ import annotations

from pathlib import Path

from gitmem.errors import ExitCode
from tests.support.gitcli import git


def test_a_close_before_the_first_commit_refuses_to_start_with_exit_3_and_says_what_to_commit(
        tmp_path: Path, cli, git_env) -> None:  # type: ignore[no-untyped-def]
    git(tmp_path, "init", "-q", "-b", "main")
    assert cli(["init"], cwd=tmp_path).code == ExitCode.OK
    log_before = (tmp_path / "LOG.md").read_bytes()
    done = cli(["close", "--no-llm"], cwd=tmp_path)
    assert done.code == ExitCode.DIRTY, done.out + done.err
    assert "no commits yet; commit the memory files first" in done.err
    assert (tmp_path / "LOG.md").read_bytes() == log_before
    assert git(tmp_path, "rev-list", "--all") == ""
