"""Hostile agents, caches: what `.git/gitmem/` holds is speed, never evidence.

The agent can write `.git/gitmem/` (it is the same checkout), so a verdict found there counts only once history
agrees. Here a lesson has one real confirmation and one that no cycle backs; `confirmations.json` is planted to
say the second is backed, in every shape a planted entry can take. The close does not promote the lesson and
reports the confirmation as unbacked, as it does with no cache at all.
"""
from __future__ import annotations

import json

import pytest

from gitmem.close.backing import _key
from gitmem.memory import lessons
from gitmem.workspace.statedir import CONFIRMATIONS_CACHE
from tests.support.helpers import GitRepo
from tests.support.world import World, at, d

RULE = "Run the whole test suite before every commit."
CLAIM = "2026-11-10 (cycle 3) — claimed"


@pytest.fixture
def world(memrepo: GitRepo) -> World:
    return World(memrepo)


def _unbacked_history(world: World) -> tuple[str, dict[str, str]]:
    """L-0001 (cycle 1), confirmed for real in cycle 2, and a line claiming cycle 3, which never logged, in a
    commit of its own. Returns the lesson id and the commits a planted entry may name."""
    world.cycle(at(10, 8))                                                  # cycle 1
    lesson = world.lesson(at(10, 8, 30), "Tests first", rule=RULE)
    world.cycle(at(10, 9))                                                  # cycle 2
    world.confirm(at(10, 9, 30), lesson)
    real = world.git.head()
    world.git.commit_files({"LESSONS.md": world.read("LESSONS.md").replace(
        "- Status: open", f"- Confirmed: {CLAIM}\n- Status: open")}, "claim")
    claim = world.git.head()
    world.clock.moment = at(10, 10)
    world.memory.add_log_entry(task="t", outcome="built", result="r", cycle=4)
    world.commit("cycle 4", "LOG.md")
    return lesson, {"claim": claim, "real": real, "head": world.git.head(), "missing": "f" * 40,
                    "revision": "HEAD", "short": claim[:10]}


PLANTS = [("claim", True), ("real", False), ("head", True), ("head", False), ("missing", False),
          ("revision", False), ("short", False)]


@pytest.mark.parametrize("as_object", [True, False])         # as caches were written before, and are now
@pytest.mark.parametrize(("names", "valid_at_head"), PLANTS)
def test_a_planted_verdict_never_promotes_a_lesson_history_does_not_back(world: World, names: str,
                                                                         valid_at_head: bool, as_object: bool) -> None:
    lesson, commits = _unbacked_history(world)
    doc = lessons.parse(world.read("LESSONS.md")).find(lesson)
    assert doc is not None
    verdicts = {_key(lesson, item.value): {"commit": commits[names], "ok": True, "why": ""} if as_object
                else commits[names] for item, _ in doc.confirmations}
    cache = world.git.path / ".git" / "gitmem" / CONFIRMATIONS_CACHE
    cache.parent.mkdir(parents=True, exist_ok=True)
    cache.write_text(json.dumps({"valid_at": commits["head"] if valid_at_head else None, "verdicts": verdicts}))

    result = world.close(d(10), at(10, 23))

    assert result.promoted == []
    found = lessons.parse(world.read("LESSONS.md")).find(lesson)
    assert found is not None and found.status == "open"
    assert result.not_promoted == ["L-0001 · Tests first: not eligible, 1 of 2 confirmations count"]
    assert any("the confirmation of cycle 3" in problem and "does not count" in problem
               for problem in result.problems), result.problems


def test_the_cache_it_writes_holds_where_lines_were_added_not_verdicts(world: World) -> None:
    lesson, commits = _unbacked_history(world)
    world.close(d(10), at(10, 23))
    data = json.loads((world.git.path / ".git" / "gitmem" / CONFIRMATIONS_CACHE).read_text())
    assert all(isinstance(entry, str) for entry in data["verdicts"].values())      # a commit id, nothing else
    assert commits["claim"] in set(data["verdicts"].values())
