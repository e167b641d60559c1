"""The report quotes the agent (decision titles and recommendations, the latest close report, branch names).
Memory may hold characters that act rather than show: a bidirectional override reorders what a reader sees of a
decision in the page or the job summary (and on the terminal with `--out -`), a C1 control is a terminal's CSI.
The report shows each as its escape, as `status`, `pending` and the fleet do (gitmem.memory.display.printable)."""
from __future__ import annotations

from datetime import UTC, datetime

import pytest

from gitmem.memory_writer import MemoryWriter
from gitmem.report import build
from gitmem.workspace import Workspace
from tests.support.gitcli import git
from tests.support.helpers import GitRepo

NOW = datetime(2026, 12, 6, 20, 0, tzinfo=UTC)
ACTING = "\u202eon yes\u202c \u2066x\u2069 \u009b2J"


@pytest.mark.parametrize("fmt", ["html", "summary"])
def test_the_report_shows_bidirectional_overrides_and_controls_as_escapes(memrepo: GitRepo, fmt: str) -> None:
    memory = MemoryWriter(memrepo.ws(), clock=lambda: NOW)
    memory.ask_decision(title=f"ship {ACTING} it", recommendation=f"say {ACTING} no", cycle=1)
    git(memrepo.path, "commit", "-qam", "a decision")

    text = build(Workspace.at(memrepo.path), fmt=fmt, clock=lambda: NOW)

    shown = text.split("<!-- uPlot", 1)[0]       # the page's own text; the vendored scripts follow it
    assert [c for c in shown if c in "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
            or 0x7f <= ord(c) <= 0x9f] == []
    slash = "\\" if fmt == "html" else "\\\\"         # Markdown escapes the escape's backslash: it shows once
    assert f"{slash}u202eon yes{slash}u202c" in shown and f"{slash}u009b2J" in shown, "shown as escapes, not dropped"
