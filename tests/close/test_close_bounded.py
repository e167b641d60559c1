"""The close's entry is bounded by construction: every list it writes has a cap, ends with `… and N more` and
says where the rest is, so a close never fails because history is large (issue 31)."""
from __future__ import annotations

import pytest

from gitmem.checks.sizes import size_limits
from gitmem.close.day_report import LIST_MOST, EntryShape
from gitmem.memory import log
from tests.support.helpers import GitRepo
from tests.support.world import World, at, d, last_entry

MANY = 3000


@pytest.fixture
def world(memrepo: GitRepo) -> World:
    return World(memrepo)


def many_waiting_lessons(world: World, count: int = MANY) -> None:
    """`count` open lessons, each with two Confirmed lines that history does not back (committed by hand, no
    cycle logged them): each is listed in Promotions as not eligible, and each line is an unbacked problem."""
    for hour in (8, 9, 10, 11):
        world.cycle(at(10, hour))
    body = []
    for n in range(1, count + 1):
        body += [f"## L-{n:04d} · Lesson number {n} about a thing that went wrong",
                 "- Happened: 2026-11-10 (cycle 1) — it broke", "- Why: a reason", "- Change: a change",
                 f"- Rule: Rule number {n}.", "- Confirmed: 2026-11-10 (cycle 2) — held",
                 "- Confirmed: 2026-11-10 (cycle 3) — held", "- Status: open", ""]
    world.git.commit_files({"LESSONS.md": "# LESSONS\n\n" + "\n".join(body)}, "lessons by hand")


def lines_of(entry: log.LogEntry, name: str) -> list[str]:
    return (entry.get(name) or "").split("\n")


def test_a_close_with_thousands_of_waiting_lessons_stays_under_the_entry_limit(world: World) -> None:
    many_waiting_lessons(world)
    before = world.git.head()
    result = world.close(d(10), at(10, 23))
    assert result.status == "closed" and result.commit is not None
    entry = last_entry(world.read("LOG.md"))
    limit = size_limits(world.config).log_entry
    assert len(entry.render()) <= limit
    promotions, problems = lines_of(entry, "Promotions"), lines_of(entry, "Problems")
    assert len(promotions) == LIST_MOST and len(problems) == LIST_MOST
    # All were due; the first ones are listed, the rest counted, and the reader is told where they are.
    assert promotions[-1] == f"… and {MANY - LIST_MOST + 1} more: `gitmem status --json` lists them"
    assert promotions[0].startswith("L-0001 · Lesson number 1 about a thing that went wrong: not eligible")
    assert problems[-1].startswith(f"… and {2 * MANY - LIST_MOST + 1} more: the cycles' LOG entries")
    # Standing records only what was written up: the next close lists the lessons this one left out.
    standing = entry.get("Standing") or ""
    assert standing.count("lesson#") == LIST_MOST - 1 and standing.count("unbacked#") == LIST_MOST - 1
    world.assert_valid(before)
    world.cycle(at(11, 9))
    world.close(d(11), at(11, 23))
    after = lines_of(last_entry(world.read("LOG.md")), "Promotions")
    assert after[0].startswith(f"L-{LIST_MOST:04d} · Lesson number {LIST_MOST} about")
    assert after[-1] == f"… and {MANY - 2 * (LIST_MOST - 1)} more: `gitmem status --json` lists them"


def test_a_smaller_context_budget_gets_shorter_lists() -> None:
    small, default = EntryShape.within(3000), EntryShape.within(18165)
    assert small.chars < default.chars
    long_lines = [f"line {n} " + "x" * 500 for n in range(50)]
    for shape in (small, default):
        capped = shape.cap(long_lines, "somewhere")
        # Each list holds at most its share of the entry: five lists and the short fields fit the limit.
        assert len("\n".join(capped)) <= shape.chars and len(capped) <= LIST_MOST
        assert capped[-1] == f"… and {50 - len(capped) + 1} more: somewhere"
    assert len(small.cap(long_lines, "somewhere")) < len(default.cap(long_lines, "somewhere"))
    assert small.cap(["one", "two"], "somewhere") == ["one", "two"]
    assert small.cap(["one"], "somewhere", more=3) == ["one", "… and 3 more: somewhere"]
