"""The daily cap counts what the runner recorded: its own `tokens:` line, which it writes at the end of every
cycle's Evidence. An interactive session's entry (`- Session: interactive`, written outside a runner cycle by
a human or the human's own agent, through the CLI or MCP) has no runner line: a `tokens:` line in it is the
writer's own text. Counted, one session entry saying `tokens: total 5000000` stopped every scheduled cycle
for the rest of the day (exit 3, GM750) and made the fleet call the agent over budget and skip it. A runner
cycle cannot pass for a session: postflight drops the marker from what its agent wrote."""
from __future__ import annotations

from datetime import UTC, datetime

from gitmem.cycle import allowance
from gitmem.cycle.runner import Settings, run_cycle
from gitmem.errors import ExitCode
from gitmem.memory_writer import MemoryWriter
from tests.support.cycle_support import WritingBackend, built
from tests.support.helpers import GitRepo


def test_a_sessions_own_tokens_line_neither_spends_the_cap_nor_stops_the_cycles(memrepo: GitRepo) -> None:
    text = memrepo.read("gitmem.yaml")
    memrepo.commit_files({"gitmem.yaml": text.replace("\ncycle:\n", "\ncycle:\n  tokens_per_day: 4000\n", 1)},
                         "a daily cap")
    MemoryWriter(memrepo.ws()).add_log_entry(task="talk with the human", outcome="built", result="answered",
                                             evidence="tokens: total 5000000", interactive=True)
    memrepo.commit_files({"LOG.md": memrepo.read("LOG.md")}, "a session")
    assert "- Session: interactive" in memrepo.read("LOG.md")
    assert allowance.spent_today(memrepo.ws(), datetime.now(UTC)).tokens == 0
    assert run_cycle(memrepo.ws(), WritingBackend(built("write hello.txt")), settings=Settings()).exit_code == \
        ExitCode.OK
    assert allowance.spent_today(memrepo.ws(), datetime.now(UTC)).tokens == 2400     # the runner's line counts
