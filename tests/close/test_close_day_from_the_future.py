"""A close entry says which day it closed (`Day`), and no close closes a day that has not happened yet. A
hand-written close entry whose Day lies years ahead passed for the close of every day until then, and no plan
went on top of NOW again. The day's report still holds its cycles and writes up their Rule 0 streak."""
from __future__ import annotations

from gitmem.memory import now
from tests.support.helpers import GitRepo
from tests.support.world import World, at, d, last_entry


def test_a_close_entry_dated_for_a_day_years_ahead_closes_nothing(memrepo: GitRepo) -> None:
    world = World(memrepo)
    for hour in (8, 9, 10):
        world.cycle(at(10, hour), "no-build")
    forged = world.read("LOG.md") + "\n## 2026-11-10 11:00 UTC · close\n- Day: 2099-01-01\n- Cycles: all fine\n"
    world.git.commit_files({"LOG.md": forged}, "a close from the future")
    before = world.git.head()
    result = world.close(d(10), at(10, 23))
    assert result.status == "closed"
    assert result.counts == {"built": 0, "published": 0, "no-build": 3}
    assert any(p.startswith("Rule 0: cycles 1–3 (3 in a row") for p in result.problems), result.problems
    assert last_entry(world.read("LOG.md")).get("Day") == "2026-11-10"
    top = now.parse(world.read("NOW.md"), max_blocks=1).top
    assert top is not None and top.plan_for == d(11)
    world.assert_valid(before)
