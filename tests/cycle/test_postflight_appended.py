"""The runner's postflight reads the agent's LOG entries as every judge of LOG reads an append
(`gitmem.memory.log.appended_entries`, from GM301's verdict), instead of parsing the text after the old bytes on
its own. The two disagreed on a LOG that ends inside a code fence (written before fences were checked): the
append may close the fence first, which GM301 allows; postflight's own parse read the agent's entry as code."""
from __future__ import annotations

from datetime import UTC, datetime

from gitmem.cycle import postflight
from gitmem.memory import log
from gitmem.memory.timestamps import Timestamp
from tests.support.helpers import GitRepo


def _entry(cycle: int, task: str, extra: str = "") -> str:
    when = Timestamp.from_datetime(datetime.now(UTC).replace(second=0, microsecond=0))
    entry = log.make_entry(when, cycle=cycle, outcome="built", fields={"Task": task, "Result": "done"})
    return entry.render().rstrip("\n") + "\n" + extra


def test_an_entry_appended_after_a_fence_left_open_is_the_agents(memrepo: GitRepo) -> None:
    """Failed before: the entry after the closing fence was taken for code, and the runner wrote a no-build
    entry in its place ("the agent ended without writing a LOG entry")."""
    memrepo.append("LOG.md", "\n" + _entry(1, "an old entry", "- Evidence:\n```\nstill open\n"))
    memrepo.stage("LOG.md")
    memrepo.commit("an old LOG, its last fence never closed")
    ws = memrepo.ws()
    old = postflight.memory_files(ws)
    memrepo.append("LOG.md", "```\n\n" + _entry(2, "the agent's own task"))
    settled = postflight.settle(ws, old, cycle=2, clock=None, notes=[], usage={}, why_no_log="it said nothing",
                                started="0" * 40)
    assert (settled.task, settled.outcome) == ("the agent's own task", "built")
    entries = log.parse(memrepo.read("LOG.md")).entries
    assert entries[-1].get("Task") == "the agent's own task" and entries[-1].cycle == 2
