"""`gitmem report --format summary` goes to the job summary (the Action's daily close appends it) and to pull
requests: often public, and GitHub renders its Markdown and HTML. The pending decisions' titles and
recommendations and the latest close report there quote the agent, so they show as written and act on nothing, as
the cycle's and the close's own accounts do (gitmem.publish.pullrequest.for_pr): no image fetched from a
tracker, no link, no user notified, no issue linked, no table broken."""
from __future__ import annotations

from datetime import UTC, datetime, timedelta

from gitmem.close import run_close
from gitmem.memory_writer import MemoryWriter
from gitmem.report import build
from gitmem.workspace import Workspace
from tests.support.gitcli import git
from tests.support.helpers import GitRepo

HOSTILE = "![t](https://tracker.example/p.png) [go](https://evil.example) @octocat fixes #12 **loud** a|b"
NOW = datetime(2026, 12, 6, 20, 0, tzinfo=UTC)


def test_the_summary_shows_the_agents_text_inert(memrepo: GitRepo) -> None:
    memory = MemoryWriter(memrepo.ws(), clock=lambda: NOW)
    memory.add_log_entry(task="t", outcome="no-build", result=f"nothing: {HOSTILE}", cycle=1)
    memory.ask_decision(title=f"pick {HOSTILE}", recommendation=f"yes {HOSTILE}", cycle=1)
    git(memrepo.path, "commit", "-qam", "cycle 1")
    run_close(memrepo.ws(), day=NOW.date(), use_llm=False, clock=lambda: NOW + timedelta(minutes=1))

    text = build(Workspace.at(memrepo.path), fmt="summary", clock=lambda: NOW + timedelta(minutes=2))

    tables = text[text.index("| decision |"):]
    for active in ("![t](", "[go](", "@octocat", "#12", "**loud**"):
        assert active not in tables, active
    row = next(line for line in tables.splitlines() if line.startswith("| D-0001 |"))
    assert row.count(" | ") == 3, "one row of four cells: the agent's `|` is not a column"
    assert "tracker.example/p.png" in row and "@\u200bocto" in row, "shown, as written"
    assert "**Problems**: cycle 1 built nothing: nothing: \\!\\[t\\]" in tables


def test_the_latest_close_reports_lists_keep_one_item_apart_from_the_next(memrepo: GitRepo) -> None:
    memory = MemoryWriter(memrepo.ws(), clock=lambda: NOW)
    for cycle in (1, 2):
        memory.add_log_entry(task=f"t{cycle}", outcome="no-build", result=f"nothing {cycle}", cycle=cycle)
        git(memrepo.path, "commit", "-qam", f"cycle {cycle}")
    run_close(memrepo.ws(), day=NOW.date(), use_llm=False, clock=lambda: NOW + timedelta(minutes=1))

    text = build(Workspace.at(memrepo.path), fmt="summary", clock=lambda: NOW + timedelta(minutes=2))

    assert "- **Problems**: cycle 1 built nothing: nothing 1; cycle 2 built nothing: nothing 2\n" in text
