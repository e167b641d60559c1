"""What `gitmem close` prints quotes the agent: the day's tasks, the no-build results, the decisions waiting.
Memory may hold characters a terminal acts on rather than shows (a C1 CSI, a line separator, a bidirectional
override: none is a control byte the format refuses), so the close shows them as escapes, as `status` and
`pending` do (gitmem.memory.display.printable), in its text and in its JSON."""
from __future__ import annotations

import json
from datetime import UTC, datetime, time, timedelta

import pytest

from gitmem.errors import ExitCode
from gitmem.memory_writer import MemoryWriter
from tests.support.gitcli import git
from tests.support.helpers import GitRepo

ACTING = "\u009b2J\u2028\u202eevil\u2066"


def _acts(text: str) -> list[str]:
    return [c for c in text if 0x7f <= ord(c) <= 0x9f or c in "\u2028\u2029\u202e\u2066"]


@pytest.mark.parametrize("as_json", [False, True])
def test_the_closes_output_shows_the_agents_text_without_terminal_controls(memrepo: GitRepo, cli,
                                                                           as_json: bool) -> None:
    # Yesterday's cycle, closed by its day: without --date, a close run soon after midnight closes the day before
    # (a schedule GitHub runs late), which this test's cycle, written now, is not in.
    day = datetime.now(UTC).date() - timedelta(days=1)
    memory = MemoryWriter(memrepo.ws(), clock=lambda: datetime.combine(day, time(9), UTC))
    memory.add_log_entry(task=f"task {ACTING} one", outcome="no-build", result=f"nothing {ACTING} two", cycle=1)
    memory.ask_decision(title=f"pick {ACTING} three", recommendation="yes", cycle=1)
    git(memrepo.path, "commit", "-qam", "a cycle whose text acts on a terminal")

    done = cli(["close", "--no-llm", "--date", day.isoformat(), *(["--json"] if as_json else [])],
               cwd=memrepo.path)

    assert done.code == ExitCode.OK, done.out + done.err
    assert _acts(done.out + done.err) == []
    shown = json.dumps(json.loads(done.out)) if as_json else done.out
    # (The line separator was a space once written: memory text is one line.)
    assert "task \\u009b2J \\u202eevil\\u2066 one" in shown.replace("\\\\", "\\"), "shown, not dropped"
    assert "pick \\u009b2J" in shown.replace("\\\\", "\\")
    assert "\u202e" in memrepo.read("LOG.md"), "the close entry keeps what the agent wrote, as it wrote it"
