"""A cycle's late note reads the schedule from the runner's last cycle. An interactive session's entry since
(a human, or the human's own agent, at any hour) is no run of the schedule: counted as the last cycle, a
session at 12:30 after a day of dropped runs left the 14:40 cycle saying nothing of the four runs that never
came, and one earlier in the morning cut their count to the runs after it."""
from __future__ import annotations

from datetime import datetime, timedelta

from gitmem.cycle.runner import late_note
from gitmem.memory_writer import MemoryWriter
from tests.support.helpers import GitRepo

EVERY_3_HOURS = ("on:\n  schedule:\n    - cron: \"17 */3 * * *\"   # cycles\n"
                 "    - cron: \"47 23 * * *\"   # the close\n  workflow_dispatch:\n")


def test_a_session_since_the_last_cycle_does_not_hide_the_runs_that_never_came(memrepo: GitRepo) -> None:
    now = datetime.now(memrepo.ws().config.tzinfo())
    MemoryWriter(memrepo.ws(), clock=lambda: now - timedelta(hours=14)).add_log_entry(
        task="before", outcome="built", result="done", cycle=1)
    memrepo.commit_files({"LOG.md": memrepo.read("LOG.md"), ".github/workflows/gitmem.yml": EVERY_3_HOURS}, "cycle 1")
    MemoryWriter(memrepo.ws(), clock=lambda: now - timedelta(minutes=10)).add_log_entry(
        task="a word with the human", outcome="built", result="done", interactive=True)
    memrepo.commit_files({"LOG.md": memrepo.read("LOG.md")}, "a session")
    note = late_note(memrepo.ws(), now)
    assert note is not None and note.startswith("started late"), note
    assert "scheduled run(s) passed without a cycle" in note      # 14 h on a 3 h schedule: 3 or 4 runs
