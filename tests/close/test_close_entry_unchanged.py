"""The close's entries, word for word: what the close writes on a repository with promotions, lessons that
wait, a forged confirmation and a stale decision, over a close, a catch-up and a later close. The expectations
were written down from the close before its history-proportional costs were cut (issue 31), so a cheaper close
that writes anything else fails here."""
from __future__ import annotations

import re

import pytest

from tests.support.helpers import GitRepo
from tests.support.world import World, at, d

RULE = "Run the whole test suite before every commit."


@pytest.fixture
def world(memrepo: GitRepo) -> World:
    return World(memrepo)


def _commits_named(text: str) -> str:
    """Commit ids depend on the commit times of the run, and so do the standing keys of the lines naming them:
    the entries are compared with those named."""
    return re.sub(r"unbacked#[0-9a-f]{8}", "unbacked#<key>", re.sub(r"\b[0-9a-f]{10}\b", "<commit>", text))


def _entries_after(world: World, before: str) -> str:
    return _commits_named(world.read("LOG.md")[len(before):])


def _history(world: World) -> tuple[str, str, str]:
    """Three closes' LOG text: the 10th (a promotion, a lesson one confirmation short, a forged confirmation,
    a stale decision), the 12th catching up the 11th, and the 13th (what still stands is not repeated)."""
    world.cycle(at(4, 9))                                                       # cycle 1
    world.ask(at(4, 9, 30), "Which database?", recommendation="sqlite")       # stale by the 10th
    world.cycle(at(10, 8))                                                      # cycle 2
    promoted = world.lesson(at(10, 8, 10), "Tests first", rule=RULE)
    short = world.lesson(at(10, 8, 20), "Small commits", rule="Commit small changes.")
    forged = world.lesson(at(10, 8, 30), "Read the docs", rule="Read the docs first.")
    for hour in (9, 10):                                                        # cycles 3 and 4
        world.cycle(at(10, hour))
        world.confirm(at(10, hour, 10), promoted)
    world.confirm(at(10, 10, 20), short)
    # Two confirmations of `forged` written outside any cycle, citing cycles that did log: they never count.
    world.git.commit_files({"LESSONS.md": world.read("LESSONS.md").replace(
        "- Rule: Read the docs first.\n",
        "- Rule: Read the docs first.\n- Confirmed: 2026-11-10 (cycle 3) — claimed\n"
        "- Confirmed: 2026-11-10 (cycle 4) — claimed\n", 1)}, "claims by hand")
    assert (promoted, short, forged) == ("L-0001", "L-0002", "L-0003")
    before = world.read("LOG.md")
    world.close(d(10), at(10, 23))
    first = _entries_after(world, before)
    world.cycle(at(11, 9), "no-build")                                          # cycle 5
    world.cycle(at(12, 9))                                                      # cycle 6
    before = world.read("LOG.md")
    world.close(None, at(12, 23))  # type: ignore[arg-type]
    second = _entries_after(world, before)
    world.cycle(at(13, 9))                                                      # cycle 7
    before = world.read("LOG.md")
    world.close(d(13), at(13, 23))
    return first, second, _entries_after(world, before)


def test_the_close_entries_are_word_for_word_those_of_the_close_before_the_cuts(world: World) -> None:
    first, second, third = _history(world)
    assert (first, second, third) == (FIRST, SECOND, THIRD)


PLAN = ("- Plan: Ship a first useful thing and log it — why: it is the top open item of the current ROADMAP section "
        "`First week (current)`; tick it off when it is finished (`gitmem roadmap done`)\n")

FIRST = (
    "\n"
    "## 2026-11-10 23:00 UTC · close\n"
    "- Day: 2026-11-10\n"
    "- Cycles: 3 cycles (3 built, 0 published, 0 no-build)\n"
    "- Done: cycle 2 · built · task at 10 08:00 — shipped it\n"
    "  cycle 3 · built · task at 10 09:00 — shipped it\n"
    "  cycle 4 · built · task at 10 10:00 — shipped it\n"
    "- Waiting: D-0001 · Which database? (6d)\n"
    "- Problems: D-0001 · Which database? (6d) has waited longer than 3 days: please answer it\n"
    "  L-0003 · Read the docs: the confirmation of cycle 3: the commit that added it (<commit>) did not log "
    "cycle 3 (it does not count)\n"
    "  L-0003 · Read the docs: the confirmation of cycle 4: the commit that added it (<commit>) did not log "
    "cycle 4 (it does not count)\n"
    "- Promotions: R-01 · Run the whole test suite before every commit. (from L-0001)\n"
    "  L-0003 · Read the docs: not eligible, 0 of 2 confirmations count\n"
    + PLAN +
    "- Standing: lesson#44cff574 2026-11-10; unbacked#<key> 2026-11-10; unbacked#<key> 2026-11-10\n"
)

SECOND = (
    "\n"
    "## 2026-11-12 23:00 UTC · close\n"
    "- Day: 2026-11-11\n"
    "- Cycles: 1 cycle (0 built, 0 published, 1 no-build)\n"
    "- Done: cycle 5 · no-build · task at 11 09:00\n"
    "- Waiting: D-0001 · Which database? (7d)\n"
    "- Problems: D-0001 · Which database? (7d) has waited longer than 3 days: please answer it\n"
    "  cycle 5 built nothing: blocked at 11 09:00\n"
    "- Plan: see the close of a later day (this day was closed late, as of 2026-11-12 00:00)\n"
    "\n"
    "## 2026-11-12 23:00 UTC · close\n"
    "- Day: 2026-11-12\n"
    "- Cycles: 1 cycle (1 built, 0 published, 0 no-build)\n"
    "- Done: cycle 6 · built · task at 12 09:00 — shipped it\n"
    "- Waiting: D-0001 · Which database? (8d)\n"
    "- Problems: D-0001 · Which database? (8d) has waited longer than 3 days: please answer it\n"
    + PLAN +
    "- Standing: lesson#44cff574 2026-11-10; unbacked#<key> 2026-11-10; unbacked#<key> 2026-11-10\n"
)

THIRD = (
    "\n"
    "## 2026-11-13 23:00 UTC · close\n"
    "- Day: 2026-11-13\n"
    "- Cycles: 1 cycle (1 built, 0 published, 0 no-build)\n"
    "- Done: cycle 7 · built · task at 13 09:00 — shipped it\n"
    "- Waiting: D-0001 · Which database? (9d)\n"
    "- Problems: D-0001 · Which database? (9d) has waited longer than 3 days: please answer it\n"
    + PLAN +
    "- Standing: lesson#44cff574 2026-11-10; unbacked#<key> 2026-11-10; unbacked#<key> 2026-11-10\n"
)
