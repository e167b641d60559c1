"""Pull-request mode in a named workspace: `gitmem github pr --workspace ops` pushes the memory branch by that
workspace's rules, as the default workspace's is pushed (a real bare origin, a human's clone, a fake GitHub)."""
from __future__ import annotations

from pathlib import Path

import pytest

from gitmem.errors import ExitCode
from gitmem.memory import log
from tests.support.cycle_support import clone, origin_and_clone
from tests.support.fake_github import FakeGitHub
from tests.support.gitcli import git
from tests.support.helpers import DANA, GitRepo, fill_in_rules


def _session(cli, root: Path, task: str) -> None:
    """One session's LOG entry and NOW block in `ops`, committed."""
    for argv in (["log", "add", "-w", "ops", "--task", task, "--outcome", "built", "--result", "done"],
                 ["now", "add", "-w", "ops", "--did", task, "--human", "nothing", "--next", "more"]):
        ran = cli(argv, cwd=root)
        assert ran.code == ExitCode.OK, ran.out + ran.err
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", f"session: {task}")


def test_a_session_pushed_to_the_memory_branch_is_renumbered_around_in_a_named_workspace(
        tmp_path: Path, memrepo: GitRepo, cli, monkeypatch: pytest.MonkeyPatch) -> None:
    memrepo.write("gitmem.yaml", memrepo.read("gitmem.yaml") + "\nworkspaces:\n  ops:\n    memory_dir: ops\n")
    assert cli(["init", "."], cwd=memrepo.path).code == ExitCode.OK
    fill_in_rules(memrepo.path / "ops")
    git(memrepo.path, "add", "-A")
    git(memrepo.path, "commit", "-q", "-m", "the ops workspace")
    origin = origin_and_clone(tmp_path, memrepo)
    with FakeGitHub() as fake:
        for name, value in (("GITHUB_API_URL", fake.url), ("GITHUB_REPOSITORY", fake.repository),
                            ("GITMEM_GIT_TOKEN", fake.token), ("GITHUB_REF_NAME", "main")):
            monkeypatch.setenv(name, value)
        assert cli(["github", "prepare", "-w", "ops"], cwd=memrepo.path).code == ExitCode.OK
        _session(cli, memrepo.path, "first")
        assert cli(["github", "pr", "--phase", "cycle", "-w", "ops"], cwd=memrepo.path).code == ExitCode.OK
        # The runner's next run writes cycle 2; meanwhile the human's session on the memory branch took it.
        _session(cli, memrepo.path, "the runner's")
        human = clone(origin, tmp_path / "human", DANA)
        git(human.path, "switch", "-q", "gitmem/memory")
        _session(cli, human.path, "the human's")
        git(human.path, "push", "-q", "origin", "gitmem/memory")
        pushed = cli(["github", "pr", "--phase", "cycle", "-w", "ops"], cwd=memrepo.path)
    assert pushed.code == ExitCode.OK, pushed.out + pushed.err
    entries = log.parse(git(origin, "show", "gitmem/memory:ops/LOG.md")).entries
    assert [(e.cycle, e.get("Task")) for e in entries] == [(1, "first"), (2, "the human's"), (3, "the runner's")]
    assert "gitmem/memory-conflict" not in git(origin, "branch", "--list")


def test_offline_a_branch_squash_merged_into_main_is_continued_as_it_is_never_merged_again(
        tmp_path: Path, memrepo: GitRepo, cli, monkeypatch: pytest.MonkeyPatch) -> None:
    """Without a token nothing says whether the branch's PR is open: it is continued as before, and main (which
    may hold it squashed) is not merged into it, which would add its NOW block a second time."""
    origin_and_clone(tmp_path, memrepo)
    assert cli(["github", "prepare"], cwd=memrepo.path).code == ExitCode.OK
    for argv in (["log", "add", "--task", "first", "--outcome", "built", "--result", "done"],
                 ["now", "add", "--did", "first", "--human", "nothing", "--next", "more"]):
        assert cli(argv, cwd=memrepo.path).code == ExitCode.OK
    git(memrepo.path, "commit", "-q", "-am", "gitmem: cycle 1")
    git(memrepo.path, "push", "-q", "-u", "origin", "gitmem/memory")
    tip = memrepo.head()
    git(memrepo.path, "switch", "-q", "main")
    git(memrepo.path, "merge", "-q", "--squash", "gitmem/memory")
    git(memrepo.path, "commit", "-q", "-m", "Memory from gitmem (#1)")
    for name in ("GITHUB_API_URL", "GITHUB_REPOSITORY", "GITMEM_GIT_TOKEN", "GITHUB_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    prepared = cli(["github", "prepare"], cwd=memrepo.path)
    assert prepared.code == ExitCode.OK, prepared.out + prepared.err
    assert memrepo.head() == tip and "brought the base's" not in prepared.err
