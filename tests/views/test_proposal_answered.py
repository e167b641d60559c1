"""A proposal branch whose decision was answered No waits on nobody: `status` and the fleet say to delete it,
with the command; after any other answer they say to apply it as answered."""
from __future__ import annotations

import json
import shutil
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from gitmem.fleet.fleetfile import load_fleet
from gitmem.fleet.parallel import read_fleet
from gitmem.fleet.read import WAITING
from gitmem.memory_writer import MemoryWriter
from gitmem.scaffold.demo import run_demo
from gitmem.workspace import Workspace
from tests.support.gitcli import git
from tests.support.helpers import AGENT, HUMAN, GitRepo


def proposed(repo: GitRepo) -> str:
    """A real cycle whose agent edits a workflow: the runner keeps it on a proposal branch and asks about it."""
    from gitmem.cycle.runner import run_cycle
    from tests.support.cycle_support import WritingBackend, built

    result = run_cycle(repo.ws(), WritingBackend(built(extra={".github/workflows/x.yml": "on: push\n"})))
    assert result.proposal_branch == "gitmem/proposal/cycle-1", result
    return result.proposal_branch


@pytest.mark.parametrize(("answer", "deletable"), [("No, drop it", True), ("no", True), ("Yes, merge it", False)])
def test_status_says_an_answered_proposal_branch_can_be_deleted(memrepo: GitRepo, cli: Any, answer: str,
                                                                  deletable: bool) -> None:
    branch = proposed(memrepo)
    before = {b["name"]: b for b in json.loads(cli(["status", "--json"], cwd=memrepo.path).out)["branches"]}
    assert not before[branch]["deletable"] and "answer the Pending decision" in before[branch]["todo"]
    assert cli(["decision", "answer", "D-0001", "--answer", answer], cwd=memrepo.path).code == 0
    git(memrepo.path, "commit", "-qam", "answer D-0001")
    data = json.loads(cli(["status", "--json"], cwd=memrepo.path).out)
    kept = {b["name"]: b for b in data["branches"]}[branch]
    assert kept["answered"] == "D-0001" and kept["deletable"] is deletable
    text = cli(["status"], cwd=memrepo.path).out
    if deletable:
        assert f"git branch -D {branch}" in kept["todo"] and f"git branch -D {branch}" in kept["hint"]
        assert "branches     0 waiting on you, 1 to delete (answered No)" in text
        assert f"D-0001 answered No: delete it (git branch -D {branch})" in text
    else:
        assert f"git merge {branch}" in kept["todo"] and "1 waiting on you" in text


def test_the_fleet_says_a_proposal_branch_answered_no_can_be_deleted(tmp_path: Path, git_env: None,
                                                                      cli: Any) -> None:
    demo = run_demo(tmp_path / "demo").path
    agent = tmp_path / "agent"
    shutil.copytree(demo, agent, symlinks=True)
    moment = datetime.now(UTC).replace(second=0, microsecond=0)
    asked = MemoryWriter(Workspace.at(agent), clock=lambda: moment - timedelta(hours=2)).ask_decision(
        title="Apply the agent's change to protected files from cycle 7?", recommendation="review it",
        context="The runner kept the change on branch gitmem/proposal/cycle-7.", cycle=7)
    git(agent, "commit", "-qam", "ask", who=AGENT)
    git(agent, "branch", "gitmem/proposal/cycle-7")
    git(agent, "branch", "gitmem/proposal/cycle-70")          # another proposal, not answered: still waits
    (tmp_path / "fleet.yaml").write_text("agents:\n  - name: agent\n    repo: agent\n", encoding="utf-8")

    def row() -> Any:
        return read_fleet(load_fleet(tmp_path / "fleet.yaml"), clock=lambda: moment).rows[0]

    assert row().deletable_branches == [] and row().verdict == WAITING
    MemoryWriter(Workspace.at(agent), clock=lambda: moment - timedelta(hours=1)).answer_decision(
        asked.id, answer="No: not this one", name=HUMAN[0], email=HUMAN[1])
    git(agent, "commit", "-qam", "answer", who=HUMAN)
    answered = row()
    assert answered.deletable_branches == ["gitmem/proposal/cycle-7"]
    assert "1 proposal branch(es) answered No: delete them" in answered.why
    assert "1 gitmem/* branch(es) to review" in answered.why          # cycle-70 still waits
    git(agent, "branch", "-D", "gitmem/proposal/cycle-70")
    assert row().verdict != WAITING
    text = cli(["fleet", "status"], cwd=tmp_path).out
    # Changed on purpose: the agent is read in place and the branch is its own clone's, so the command deletes it
    # there (it said `git push origin --delete`; tests/fleet/test_fleet_delete_command_runs.py runs it).
    assert ("agent: gitmem/proposal/cycle-7: its decision was answered No; delete it: git branch -D "
            "gitmem/proposal/cycle-7") in text
    # Half an answer typed in place (GM212) still waits, and the fleet's inbox says what is missing.
    half = MemoryWriter(Workspace.at(agent), clock=lambda: moment - timedelta(hours=1)).ask_decision(
        title="Half answered?", recommendation="finish it", cycle=8)
    text = (agent / "DECISIONS.md").read_text(encoding="utf-8")
    typed = text.replace("- Recommendation: finish it\n", "- Recommendation: finish it\n- Answer: maybe\n")
    (agent / "DECISIONS.md").write_text(typed, encoding="utf-8")
    git(agent, "commit", "-qam", "half an answer", who=HUMAN)
    inbox = cli(["fleet", "pending"], cwd=tmp_path).out
    assert f"{half.id} · Half answered?" in inbox and "half an answer is written in it" in inbox
    listed = json.loads(cli(["fleet", "pending", "--json"], cwd=tmp_path).out)["decisions"]
    assert listed[0]["answer_incomplete"] is True
