"""The close entry's Problems list is cut to its share of the entry (`… and N more: the cycles' LOG entries`). What
is cut must be the per-cycle detail the LOG entries hold, never the write-ups only the close makes: the Rule 0
streak (with its cause, fix and lesson) and the decisions waiting too long. With 14 no-build cycles in a day the
streak's line was cut, so the report of a day that built nothing never said Rule 0."""
from __future__ import annotations

from tests.support.helpers import GitRepo
from tests.support.world import World, at, d, last_entry


def test_a_long_streak_is_written_up_whatever_the_number_of_no_build_cycles(memrepo: GitRepo) -> None:
    world = World(memrepo)
    for hour in range(8, 22):
        world.cycle(at(10, hour), "no-build")                                   # cycles 1 to 14
    result = world.close(d(10), at(10, 23))
    problems = last_entry(world.read("LOG.md")).get("Problems") or ""
    [lesson] = result.lessons_opened
    assert problems.startswith("Rule 0: cycles 1–14 (14 in a row")
    assert f"(lesson {lesson})" in problems.splitlines()[0]
    assert "cycle 1 built nothing" in problems                                 # the detail follows, as room allows
    assert problems.splitlines()[-1].startswith("… and ")


def test_a_stale_decision_is_named_beside_many_no_build_cycles(memrepo: GitRepo) -> None:
    world = World(memrepo)
    decision = world.ask(at(5, 9), "Which database?")
    for hour in range(8, 20):                                  # 12 no-build cycles, each followed by a built one
        world.cycle(at(10, hour), "no-build")
        world.cycle(at(10, hour, 30), "built")
    world.close(d(10), at(10, 23))
    problems = last_entry(world.read("LOG.md")).get("Problems") or ""
    assert f"{decision} · Which database? (5d) has waited longer than 3 days: please answer it" in problems
