"""A pending decision is stale when it has waited more than `close.stale_decision_days` whole days: the one rule
`gitmem status`, `pending` and every close flag it by (gitmem.memory.decisions). The report's page marks the same
decisions stale, never one that has waited 3.5 days under a limit of 3, which no other view calls stale."""
from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

import pytest

from gitmem.memory_writer import MemoryWriter
from gitmem.report import build
from gitmem.views.status import collect_status
from gitmem.workspace import Workspace
from tests.support.gitcli import git
from tests.support.helpers import GitRepo

NOW = datetime(2026, 12, 6, 20, 0, tzinfo=UTC)


@pytest.mark.parametrize(("waited", "stale"), [(timedelta(days=3, hours=12), False), (timedelta(days=4), True)])
def test_the_page_marks_a_decision_stale_by_the_rule_status_uses(memrepo: GitRepo, waited: timedelta,
                                                                  stale: bool) -> None:
    asked = NOW - waited
    MemoryWriter(memrepo.ws(), clock=lambda: asked).ask_decision(title="Ship it?", recommendation="yes", cycle=1)
    git(memrepo.path, "commit", "-qam", "a decision")
    ws = Workspace.at(memrepo.path)
    assert ws.config.close.stale_decision_days == 3

    shown = [item["stale"] for item in collect_status(ws, clock=lambda: NOW).pending]
    page = build(ws, fmt="html", clock=lambda: NOW)

    cells = re.findall(r'<td class="age( stale)?">', page.split("<!-- uPlot", 1)[0])
    assert shown == [stale]
    assert [bool(cell) for cell in cells] == [stale], "the page and status disagree on whether it is stale"
