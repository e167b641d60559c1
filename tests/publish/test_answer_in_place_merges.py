"""An answer's pull request merges over the agent's new questions with git's own 3-way merge (rules 4).

GitHub's merge button runs no custom merge driver, so the layout alone must keep asking and answering apart: the
agent asks on top of Pending (`gitmem decision ask`), the human answers in place at the end of the decision's
block, as docs/format.md says (by hand, as in GitHub's web editor, or with `gitmem decision answer`). Real git
does each merge (a merge commit, a squash, a rebase) in clones of one bare origin; the result passes `check`
and `verify` and reads the answer as an answer.
"""
from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from gitmem.memory import decisions
from gitmem.memory.timestamps import Timestamp
from tests.support.gitcli import git, run_git
from tests.support.helpers import AGENT, HUMAN, make_repo

PATH = "DECISIONS.md"


def ask(cli: Any, clone: Path, monkeypatch: pytest.MonkeyPatch, title: str, cycle: int) -> None:
    """The agent asks as it does in a cycle: `gitmem decision ask`, committed by the agent identity."""
    monkeypatch.setenv("GITMEM_CYCLE", str(cycle))
    done = cli(["decision", "ask", "--title", title, "--recommendation", "yes"], cwd=clone)
    monkeypatch.delenv("GITMEM_CYCLE")
    assert done.code == 0, done.err
    git(clone, "commit", "-q", "-am", f"cycle {cycle}: ask {title}", who=AGENT)


def answer_by_hand(text: str, decision_id: str, answer: str) -> str:
    """What a human types in GitHub's web editor, as docs/format.md says: `- Answer:` and `- Answered:` added
    at the end of the decision's block, nothing else touched."""
    lines = text.split("\n")
    start = next(i for i, line in enumerate(lines) if line.startswith(f"### {decision_id} "))
    end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith(("### ", "## "))), len(lines))
    last = max(i for i in range(start, end) if lines[i].strip())
    stamp = Timestamp.from_datetime(datetime.now(UTC).replace(second=0, microsecond=0))
    lines[last + 1:last + 1] = [f"- Answer: {answer}", f"- Answered: {stamp} by {HUMAN[0]} <{HUMAN[1]}>"]
    return "\n".join(lines)


@pytest.fixture
def origin(tmp_path: Path, git_env: None, cli: Any, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A bare origin whose main holds three Pending decisions, D-0001 to D-0003, asked by the agent."""
    base = make_repo(tmp_path / "base")
    for number in (1, 2, 3):
        ask(cli, base.path, monkeypatch, f"Question {number}?", number)
    run_git(tmp_path, "clone", "-q", "--bare", str(base.path), str(tmp_path / "origin.git"))
    return tmp_path / "origin.git"


def clone(origin: Path, name: str) -> Path:
    where = origin.parent / name
    run_git(origin.parent, "clone", "-q", str(origin), str(where))
    return where


def merged(cli: Any, origin: Path, answers: list[str], asks: int, *, how: str,
           monkeypatch: pytest.MonkeyPatch, by_command: bool = False) -> tuple[Path, decisions.DecisionsDoc]:
    """The human answers `answers` on branch `answer` of one clone while the agent, in another, asks `asks`
    new decisions and pushes them to main; then main takes `answer` as GitHub's button would (`how`: a merge
    commit, a squash, or a rebase). Returns the merging clone and the merged DECISIONS."""
    human, agent = clone(origin, "human"), clone(origin, "agent")
    start = git(human, "rev-parse", "HEAD").strip()
    git(human, "switch", "-q", "-c", "answer")
    for decision_id in answers:
        if by_command:
            done = cli(["decision", "answer", decision_id, "--answer", f"go with {decision_id}"], cwd=human)
            assert done.code == 0, done.err
        else:
            text = (human / PATH).read_text(encoding="utf-8")
            (human / PATH).write_text(answer_by_hand(text, decision_id, f"go with {decision_id}"), encoding="utf-8")
    git(human, "commit", "-q", "-am", "answer " + ", ".join(answers))
    git(human, "push", "-q", "origin", "answer")
    for number in range(asks):
        ask(cli, agent, monkeypatch, f"Another question {number}?", 10 + number)
    git(agent, "push", "-q", "origin", "main")
    git(human, "switch", "-q", "main")
    git(human, "pull", "-q", "--ff-only")
    if how == "squash":
        done = run_git(human, "merge", "--squash", "answer", check=False)
        assert done.returncode == 0, done.stdout + done.stderr
        git(human, "commit", "-q", "-m", "answer (squashed)")
    elif how == "rebase":
        done = run_git(human, "rebase", "main", "answer", check=False)
        assert done.returncode == 0, done.stdout + done.stderr
        git(human, "switch", "-q", "main")
        git(human, "merge", "-q", "--ff-only", "answer")
    else:
        done = run_git(human, "merge", "--no-ff", "--no-edit", "answer", check=False)
        assert done.returncode == 0, done.stdout + done.stderr
    assert "CONFLICT" not in done.stdout
    assert git(human, "status", "--porcelain") == ""
    head = git(human, "rev-parse", "HEAD").strip()
    checked = cli(["check", "--worktree"], cwd=human)
    assert checked.code == 0, checked.out + checked.err
    verified = cli(["verify", "--range", f"{start}..{head}"], cwd=human)
    assert verified.code == 0, verified.out + verified.err
    return human, decisions.parse((human / PATH).read_text(encoding="utf-8"))


@pytest.mark.parametrize("how", ["merge", "squash", "rebase"])
@pytest.mark.parametrize("answered", [["D-0001"], ["D-0003"], ["D-0002"], ["D-0001", "D-0003"]],
                         ids=["oldest", "newest", "middle", "two"])
@pytest.mark.parametrize("asks", [1, 2])
def test_an_answer_in_place_merges_over_new_asks_without_conflict(
        cli: Any, origin: Path, monkeypatch: pytest.MonkeyPatch, how: str, answered: list[str],
        asks: int) -> None:
    human, doc = merged(cli, origin, answered, asks, how=how, monkeypatch=monkeypatch)
    fresh = [f"D-{4 + n:04d}" for n in range(asks)]
    assert {d.id for d in doc.settled} == set(answered)
    assert {d.id for d in doc.awaiting} == {"D-0001", "D-0002", "D-0003", *fresh} - set(answered)
    for decision_id in answered:
        item = doc.find(decision_id)
        assert item is not None and item.get("Answer") == f"go with {decision_id}"
        assert item.answered is not None and item.answered[2] == HUMAN[1]
    listed = cli(["pending", "--json"], cwd=human)
    assert not {d["id"] for d in json.loads(listed.out)} & set(answered)


@pytest.mark.parametrize("how", ["merge", "squash"])
def test_gitmem_decision_answer_writes_the_same_mergeable_change(
        cli: Any, origin: Path, monkeypatch: pytest.MonkeyPatch, how: str) -> None:
    _, doc = merged(cli, origin, ["D-0003"], 2, how=how, monkeypatch=monkeypatch, by_command=True)
    assert [d.id for d in doc.settled] == ["D-0003"]
    assert [d.id for d in doc.pending][:2] == ["D-0005", "D-0004"]      # new asks on top


def test_moving_the_decision_to_resolved_still_checks(cli: Any, origin: Path) -> None:
    """The old flow (rules 1-3) stays valid: the decision moved under Resolved with its answer."""
    human = clone(origin, "human")
    doc = decisions.parse((human / PATH).read_text(encoding="utf-8"))
    stamp = Timestamp.from_datetime(datetime.now(UTC).replace(second=0, microsecond=0))
    moved = decisions.move_to_resolved(doc, "D-0002", answer="no", answered=stamp, name=HUMAN[0], email=HUMAN[1])
    (human / PATH).write_text(decisions.render(moved), encoding="utf-8")
    git(human, "add", PATH)
    assert cli(["check"], cwd=human).code == 0
    git(human, "commit", "-q", "-m", "answer D-0002 the old way")
    assert re.search(r"## Resolved\n\n### D-0002 ", (human / PATH).read_text(encoding="utf-8"))
