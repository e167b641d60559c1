"""What an answer written under `## Pending` means (rules 4), held by every reader: it is an answer.

A human who adds `- Answer:` and `- Answered:` to a Pending decision (the block not moved) has answered it:
`pending`, `status` and the fleet no longer list it, the cycle's context and a session's show it as newly
resolved, the close no longer counts it as waiting, and `check` holds it final. Half an answer is never
silently ignored: `check` refuses it (GM212) and `pending` and `status` say what is missing.
"""
from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from gitmem.cycle.budget import NEWLY_RESOLVED, build_request
from gitmem.memory import decisions
from gitmem.memory_writer import MemoryWriter, WriteRefused
from gitmem.sessions.context import session_context
from gitmem.workspace import Workspace
from tests.support.helpers import AGENT, HUMAN, GitRepo

ASKED = datetime(2026, 11, 30, 8, 0, tzinfo=UTC)
ANSWER = f"- Answer: ship it on Monday\n- Answered: 2026-11-30 10:00 UTC by {HUMAN[0]} <{HUMAN[1]}>\n"


def asked_three(repo: GitRepo) -> None:
    """D-0001..D-0003 asked by `gitmem decision ask`; then D-0002 answered in place by hand, as a human would
    type it in the web editor."""
    memory = MemoryWriter(Workspace.at(repo.path), clock=lambda: ASKED)
    for title in ("Ship on Fridays?", "Weekly report?", "Rename the tool?"):
        memory.ask_decision(title=title, recommendation="yes", cycle=1)
    lines = repo.read("DECISIONS.md").split("\n")
    # The file is newest first: D-0003, D-0002, D-0001. The answer to D-0002 goes at the end of its block.
    start = lines.index("### D-0002 · Weekly report?")
    end = next(i for i in range(start + 1, len(lines)) if lines[i].startswith("### "))
    last = max(i for i in range(start, end) if lines[i].strip())
    lines[last + 1:last + 1] = ANSWER.rstrip("\n").split("\n")
    repo.write("DECISIONS.md", "\n".join(lines))


def test_an_answer_under_pending_is_an_answer_for_every_reader(memrepo: GitRepo, cli: Any) -> None:
    asked_three(memrepo)
    doc = decisions.parse(memrepo.read("DECISIONS.md"))
    assert [d.id for d in doc.awaiting] == ["D-0003", "D-0001"]
    assert [d.id for d in doc.settled] == ["D-0002"]
    listed = json.loads(cli(["pending", "--json"], cwd=memrepo.path).out)
    assert [d["id"] for d in listed] == ["D-0001", "D-0003"]
    status = json.loads(cli(["status", "--json"], cwd=memrepo.path).out)
    assert [d["id"] for d in status["pending"]] == ["D-0001", "D-0003"]
    # The cycle's context: D-0002 is no longer Pending; it is newly resolved, with its answer.
    part = build_request(Workspace.at(memrepo.path)).parts[2]
    waiting, fresh = part.text.split(f": {NEWLY_RESOLVED}")
    assert "D-0002" not in waiting and "D-0003 · Rename the tool?" in waiting
    assert "### D-0002 · Weekly report?" in fresh and "- Answer: ship it on Monday" in fresh
    session = session_context(Workspace.at(memrepo.path))
    assert "- D-0002 · Weekly report? — answer: ship it on Monday" in session
    # Recall files it as resolved.
    from gitmem.recall.corpus import decision_docs

    titles = {d.ident: d.title for d in decision_docs(memrepo.read("DECISIONS.md"), "DECISIONS.md")}
    assert titles["D-0002"].endswith(" resolved") and titles["D-0001"].endswith(" pending")
    # The close: a day after the answer, D-0002 no longer waits; the morning it was asked, it did.
    later = decisions.waiting(doc, ASKED + timedelta(days=1), as_of=True)
    assert "D-0002" not in {w.id for w in later}
    morning = decisions.waiting(doc, ASKED + timedelta(hours=1), as_of=True, now=ASKED + timedelta(days=1))
    assert "D-0002" in {w.id for w in morning}


def test_half_an_answer_is_refused_and_shown(memrepo: GitRepo, cli: Any) -> None:
    memory = MemoryWriter(Workspace.at(memrepo.path), clock=lambda: ASKED)
    memory.ask_decision(title="Ship on Fridays?", recommendation="yes", cycle=1)
    text = memrepo.read("DECISIONS.md")     # the Answered line forgotten
    memrepo.write("DECISIONS.md", text.replace("- Recommendation: yes\n", "- Recommendation: yes\n- Answer: no\n"))
    checked = cli(["check", "--worktree"], cwd=memrepo.path)
    heading = memrepo.read("DECISIONS.md").split("\n").index("### D-0001 · Ship on Fridays?") + 1
    assert checked.code == 1
    assert f"DECISIONS.md:{heading}: GM212 D-0001 holds an answer that is not complete: it lacks Answered" \
        in checked.out
    shown = cli(["pending"], cwd=memrepo.path).out
    assert "D-0001 · Ship on Fridays?" in shown and "half an answer" in shown and "GM212" in shown
    assert json.loads(cli(["pending", "--json"], cwd=memrepo.path).out)[0]["answer_incomplete"] is True
    assert "half an answer" in cli(["status"], cwd=memrepo.path).out
    with pytest.raises(WriteRefused, match="half an answer"):
        memory.answer_decision("D-0001", answer="yes", name=HUMAN[0], email=HUMAN[1])


def test_decision_answer_inside_a_cycle_is_refused(memrepo: GitRepo, cli: Any,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    MemoryWriter(Workspace.at(memrepo.path), clock=lambda: ASKED).ask_decision(
        title="Ship on Fridays?", recommendation="yes", cycle=1)
    before = memrepo.read("DECISIONS.md")
    monkeypatch.setenv("GITMEM_CYCLE", "7")
    done = cli(["decision", "answer", "D-0001", "--answer", "yes"], cwd=memrepo.path)
    assert done.code == 1
    assert "GITMEM_CYCLE is set" in done.err and "only the human answers" in done.err
    assert memrepo.read("DECISIONS.md") == before
    help_text = cli(["decision", "answer", "--help"], cwd=memrepo.path).out
    assert "Exit codes:" in help_text and "GITMEM_CYCLE" in help_text


@pytest.mark.parametrize(("rules", "flagged"), [(3, False), (4, True)], ids=["rules3-history", "rules4"])
def test_verify_holds_an_agent_answer_in_place_from_rules_4_on(memrepo: GitRepo, rules: int, flagged: bool) -> None:
    """History written under rules 3, where `- Answer:` inside a Pending decision was text, still verifies."""
    from gitmem import codes
    from gitmem.checks.check_and_verify import verify_range
    from tests.support.builders import decisions_md, pending, resolved

    yaml = memrepo.read("gitmem.yaml").replace(f"rules_version: {codes.RULES_VERSION}", f"rules_version: {rules}")
    memrepo.commit_files({"gitmem.yaml": yaml, "DECISIONS.md": decisions_md(pending(1))}, "base")
    base = memrepo.head()
    memrepo.commit_files({"DECISIONS.md": decisions_md(resolved(1))}, "the agent answers in place", author=AGENT)
    found = [(v.code, v.message.split(" (commit")[0]) for v in verify_range(memrepo.ws(), base, "HEAD").violations]
    expected = [("GM207", "D-0001 was answered in place by the agent identity <agent@gitmem.invalid>")]
    assert found == (expected if flagged else [])
