"""The lesson the close opens for a Rule 0 streak: one per streak, never stopped by a lesson that cannot be about
that streak, and never the reason a day goes unreported."""
from __future__ import annotations

from gitmem.memory import lessons
from tests.support.helpers import GitRepo
from tests.support.world import World, at, d, last_entry

TITLE = "Rule 0: no-build streak from cycle 2"


def _streak(world: World) -> None:
    for hour in (10, 11, 12):
        world.cycle(at(10, hour), "no-build")                                  # cycles 2, 3, 4


def test_a_lesson_written_before_the_streak_began_does_not_stand_for_it(memrepo: GitRepo) -> None:
    """The agent wrote a lesson with the title the close gives this streak's lesson, in cycle 1, before the streak
    began: the close took it for the streak's lesson, opened none (so no rule can come of it) and reported the
    streak as "continues, already written up" on the day it was first written up."""
    world = World(memrepo)
    world.cycle(at(10, 9))                                                     # 1
    planted = world.lesson(at(10, 9, 10), TITLE)
    _streak(world)
    before = world.git.head()
    result = world.close(d(10), at(10, 23))
    [line] = [p for p in result.problems if p.startswith("Rule 0:")]
    assert "continues" not in line
    [opened] = result.lessons_opened
    assert opened != planted and f"(lesson {opened})" in line
    lesson = lessons.parse(world.read("LESSONS.md")).find(opened)
    assert lesson is not None and lesson.title == TITLE and lesson.get("Rule")
    world.assert_valid(before)
    world.cycle(at(11, 9), "no-build")                                         # 5: the streak continues
    again = world.close(d(11), at(11, 23))
    [line] = [p for p in again.problems if p.startswith("Rule 0:")]
    assert "continues" in line and f"(lesson {opened})" in line and again.lessons_opened == []


def test_a_lesson_the_agent_wrote_during_the_streak_stands_for_it(memrepo: GitRepo) -> None:
    """An open lesson for the same streak already exists: the close opens no second one (issue 4)."""
    world = World(memrepo)
    world.cycle(at(10, 9))
    _streak(world)
    own = world.lesson(at(10, 12, 10), TITLE)                                  # in cycle 4, the streak's third
    result = world.close(d(10), at(10, 23))
    assert result.lessons_opened == []
    assert any(f"(lesson {own})" in p for p in result.problems if p.startswith("Rule 0:"))


def test_lessons_with_format_problems_do_not_stop_the_close_of_a_streak_day(memrepo: GitRepo) -> None:
    """LESSONS committed with a malformed heading (past the hooks): the close wrote the day up, then refused to
    rewrite LESSONS for the streak's lesson, and the whole close failed: no report, day after day. Promotions
    already skip a damaged LESSONS and say so; the streak's lesson does the same."""
    world = World(memrepo)
    world.cycle(at(10, 9))
    _streak(world)
    world.git.append("LESSONS.md", "\n## L-01 broken heading\n- Happened: x\n")
    world.commit("a hand edit, past the hooks", "LESSONS.md", author=("Dana Human", "dana@example.com"))
    lessons_before = world.read("LESSONS.md")
    result = world.close(d(10), at(10, 23))
    assert result.status == "closed" and result.lessons_opened == []
    [line] = [p for p in result.problems if p.startswith("Rule 0:")]
    assert "no lesson opened: LESSONS.md has format problems; run `gitmem check`" in line
    assert world.read("LESSONS.md") == lessons_before
    assert last_entry(world.read("LOG.md")).get("Day") == "2026-11-10"
