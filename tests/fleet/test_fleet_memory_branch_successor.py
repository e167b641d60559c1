"""fleet.yaml names the open memory branch of an agent in pull-request mode (`branch: gitmem/memory`, as
docs/fleet.md says), and a squash merge ends that branch: the next run starts `gitmem/memory-2`, and GitHub
deletes the merged one. The fleet then read a branch that no longer moved (stalled), or failed to fetch one that
was gone (unreadable). A memory branch named in `branch:` is followed to its newest successor."""
from __future__ import annotations

from pathlib import Path

import pytest

from gitmem.fleet.fleetfile import load_fleet
from gitmem.fleet.parallel import read_fleet
from gitmem.fleet.read import UNREADABLE
from gitmem.memory_writer import MemoryWriter
from gitmem.publish.pullrequest import _free_name
from gitmem.workspace import Workspace
from tests.support.gitcli import git
from tests.support.helpers import make_repo


def _cycle_on(path: Path, branch: str, task: str) -> None:
    git(path, "switch", "-q", "-C", branch)
    MemoryWriter(Workspace.at(path)).add_log_entry(task=task, outcome="built", result="done")
    git(path, "commit", "-qam", task)
    git(path, "switch", "-q", "main")


@pytest.mark.parametrize("merged_branch_deleted", [True, False])
@pytest.mark.parametrize("memory", ["gitmem/memory", "agent-memory"])
def test_the_fleet_follows_the_memory_branch_to_its_successor(tmp_path: Path, git_env: None,
                                                              merged_branch_deleted: bool, memory: str) -> None:
    """`agent-memory`: the agent runs pull-request mode with `--branch agent-memory`; its successors take the
    same numbers `gitmem github prepare` gives them (`agent-memory-2`)."""
    agent = make_repo(tmp_path / "agent")
    _cycle_on(agent.path, memory, "the first pull request's cycle")
    (tmp_path / "fleet.yaml").write_text(f"agents:\n  - name: agent\n    repo: {agent.path.as_uri()}\n"
                                         f"    branch: {memory}\n", encoding="utf-8")
    row = read_fleet(load_fleet(tmp_path / "fleet.yaml")).rows[0]
    assert row.last_cycle is not None and row.last_cycle["task"] == "the first pull request's cycle", row

    git(agent.path, "merge", "-q", "--squash", memory)                   # the pull request, squash-merged
    git(agent.path, "commit", "-qm", "the memory pull request (#1)")
    if merged_branch_deleted:
        git(agent.path, "branch", "-q", "-D", memory)
    successor = _free_name([memory], memory)                            # the name the next run starts
    git(agent.path, "switch", "-q", "-c", successor)
    git(agent.path, "switch", "-q", "main")
    _cycle_on(agent.path, successor, "the second pull request's cycle")

    row = read_fleet(load_fleet(tmp_path / "fleet.yaml")).rows[0]

    assert row.verdict != UNREADABLE, row.error
    assert row.branch == successor == f"{memory}-2" and row.last_cycle is not None
    assert row.last_cycle["task"] == "the second pull request's cycle"

