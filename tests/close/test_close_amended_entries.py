"""Readers take an amendment in the place of the entry it names (docs/format.md, Amending LOG): the close and
`status` too. A hand-typed `cycle 3 · built` without a Result, amended as no-build, was counted as built beside
its amendment: the day's counts held one cycle too many, and the built entry broke the Rule 0 streak it is part of."""
from __future__ import annotations

from gitmem.views.status import collect_status
from gitmem.workspace import Workspace
from tests.support.helpers import GitRepo
from tests.support.world import World, at, d


def test_the_close_and_status_read_an_amendment_in_place_of_the_entry_it_amends(memrepo: GitRepo) -> None:
    world = World(memrepo)
    world.cycle(at(10, 8), "no-build")
    world.cycle(at(10, 9), "no-build")
    typed = world.read("LOG.md") + "\n## 2026-11-10 10:00 UTC · cycle 3 · built\n- Task: typed by hand\n"
    world.git.commit_files({"LOG.md": typed}, "an entry without a Result, committed without the check")
    line = typed.splitlines().index("## 2026-11-10 10:00 UTC · cycle 3 · built") + 1
    world.clock.moment = at(10, 11)
    world.memory.amend_log_entry(line, outcome="no-build", result="nothing was built", task="typed by hand")
    world.commit("amend", "LOG.md")

    world.clock.moment = at(10, 12)
    shown = collect_status(Workspace.at(world.git.path, world.config), clock=world.clock).to_json()
    assert shown["outcomes_today"] == {"built": 0, "published": 0, "no-build": 3}
    assert shown["streak"]["length"] == 3 and shown["streak"]["problem"]
    before = world.git.head()
    result = world.close(d(10), at(10, 23))
    assert result.counts == {"built": 0, "published": 0, "no-build": 3}
    assert any(p.startswith("Rule 0: cycles 1–4 (3 in a row") for p in result.problems), result.problems
    world.assert_valid(before)
