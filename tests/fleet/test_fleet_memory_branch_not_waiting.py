"""Pull-request mode's own branch (`gitmem/memory`, `gitmem/memory-N` after a squash merge) waits in its pull
request, as `gitmem status` says (gitmem.views.kept_branches): the fleet and the report listed it among the
`gitmem/*` branches to review, so an agent in pull-request mode was never "ok", whatever else it needed, and the
memory branch fleet.yaml's `branch:` reads (docs/fleet.md) counted as one waiting on the human."""
from __future__ import annotations

from pathlib import Path

import pytest

from gitmem.fleet.fleetfile import load_fleet
from gitmem.fleet.parallel import read_fleet
from gitmem.fleet.read import OK, WAITING
from gitmem.memory_writer import MemoryWriter
from gitmem.report.collect import every_waiting_branch
from gitmem.workspace import Workspace
from tests.support.gitcli import git
from tests.support.helpers import make_repo


def _kept(path: Path, name: str) -> None:
    tip = git(path, "commit-tree", "-p", "HEAD", "-m", "work on it", "HEAD^{tree}").strip()
    git(path, "update-ref", f"refs/heads/{name}", tip)


@pytest.mark.parametrize("as_url", [False, True])
def test_the_memory_branch_waits_in_its_pull_request_not_in_the_fleet(tmp_path: Path, git_env: None,
                                                                       monkeypatch: pytest.MonkeyPatch,
                                                                       as_url: bool) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    agent = make_repo(tmp_path / "agent")
    MemoryWriter(Workspace.at(agent.path)).add_log_entry(task="keep going", outcome="built", result="done")
    git(agent.path, "commit", "-qam", "a cycle")
    for name in ("gitmem/memory", "gitmem/memory-2"):
        _kept(agent.path, name)
    repo = agent.path.as_uri() if as_url else "agent"
    (tmp_path / "fleet.yaml").write_text(f"agents:\n  - name: agent\n    repo: {repo}\n", encoding="utf-8")
    row = read_fleet(load_fleet(tmp_path / "fleet.yaml")).rows[0]
    assert row.waiting_branches == [] and row.verdict == OK, row.why
    assert every_waiting_branch(Workspace.at(agent.path)) == []
    _kept(agent.path, "gitmem/proposal/cycle-1")
    _kept(agent.path, "gitmem/memory-conflict")          # a conflict's side branch does wait on the human
    row = read_fleet(load_fleet(tmp_path / "fleet.yaml")).rows[0]
    assert sorted(row.waiting_branches) == ["gitmem/memory-conflict", "gitmem/proposal/cycle-1"]
    assert row.verdict == WAITING
