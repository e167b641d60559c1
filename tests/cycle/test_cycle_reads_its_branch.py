"""The cycle pushes the branches it made to the remote of its own branch (the one HEAD was on when it took the lock),
whatever branch HEAD is on by then. The human may `git switch` at any moment (git takes no gitmem lock): the moment
is made exact by wrapping the real `push.publish`, which then runs as it is. A real origin and a second real remote,
no git call faked. Before, the branches the cycle made went to the remote of the branch HEAD was on after the push:
the human's `feature`, which tracks their fork."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import pygit2
import pytest

from gitmem import gitio
from gitmem.cycle.runner import Settings, run_cycle
from gitmem.errors import ExitCode
from tests.cycle.test_two_writers import _crash, _remote_heads
from tests.support.cycle_support import WritingBackend, origin_and_clone
from tests.support.gitcli import git
from tests.support.helpers import DANA, GitRepo


def test_a_switch_to_a_branch_of_another_remote_does_not_send_the_cycles_branches_there(
        tmp_path: Path, memrepo: GitRepo, monkeypatch: pytest.MonkeyPatch) -> None:
    from gitmem.publish import push

    origin = origin_and_clone(tmp_path, memrepo)
    fork = tmp_path / "fork.git"
    pygit2.init_repository(str(fork), bare=True, initial_head="main")
    git(memrepo.path, "remote", "add", "fork", str(fork))
    git(memrepo.path, "switch", "--quiet", "-c", "feature")
    memrepo.commit_files({"feature.txt": "the human's feature\n"}, "feature work", author=DANA)
    git(memrepo.path, "push", "--quiet", "-u", "fork", "feature")
    git(memrepo.path, "switch", "--quiet", "main")
    real = push.publish
    switched: list[str] = []

    def after_a_switch(repo: gitio.Repo, **kwargs: Any) -> push.SyncResult:
        if not switched:
            switched.append(git(memrepo.path, "switch", "--quiet", "feature"))
        return real(repo, **kwargs)

    monkeypatch.setattr(push, "publish", after_a_switch)
    report = run_cycle(memrepo.ws(), WritingBackend(_crash), settings=Settings(push=True, sleep=lambda s: None))
    assert switched and report.exit_code == ExitCode.SALVAGED, report.messages
    assert report.branches_pushed == ["gitmem/salvage/cycle-1"]
    assert "gitmem/salvage/cycle-1" in _remote_heads(origin)
    assert _remote_heads(fork) == {"feature"}
    assert "pushed gitmem/salvage/cycle-1 to origin" in report.messages
    assert git(memrepo.path, "symbolic-ref", "HEAD").strip() == "refs/heads/feature"
