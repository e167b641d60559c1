"""`gitmem status` says of each eligible lesson what the next close will do with it: the one judgement of room,
supersession and rule lines is the close's own plan (`gates.plan_promotions`), not a second guess beside it."""
from __future__ import annotations

from gitmem.cli.status import render_dashboard
from gitmem.views.status import collect_status
from gitmem.workspace import Workspace
from tests.support.helpers import GitRepo
from tests.support.world import World, at, d

HUMAN_RULE = "- R-01 · Always ask before publishing. (human)\n"


def _status(world: World) -> dict[str, object]:
    return collect_status(Workspace.at(world.git.path, world.config), clock=world.clock).to_json()


def _full_rules(world: World, rule_max: int) -> None:
    """RULES at its cap of `rule_max` proven rules, each a human's."""
    world.git.write("gitmem.yaml", world.read("gitmem.yaml").replace("proven_rules_max: 30",
                                                                     f"proven_rules_max: {rule_max}"))
    text = world.read("RULES.md")
    world.git.write("RULES.md", text.replace("\n## Retired", "\n" + HUMAN_RULE + "\n## Retired", 1))
    world.commit("a human rule fills RULES", "gitmem.yaml", "RULES.md")
    world.reload()


def test_a_lesson_that_supersedes_a_rule_of_a_full_rules_is_eligible_now(memrepo: GitRepo) -> None:
    """RULES full at 1/1: the lesson retires R-01 as it is promoted, so it needs no room. The close promotes it;
    status said "eligible but RULES is full"."""
    world = World(memrepo)
    _full_rules(world, 1)
    world.cycle(at(10, 8))
    lesson = world.lesson(at(10, 8, 10), "Asked too often", rule="Publish patch releases without asking.",
                          supersedes="R-01")
    for hour in (9, 10):
        world.cycle(at(10, hour))
        world.confirm(at(10, hour, 10), lesson)
    world.clock.moment = at(10, 12)
    data = _status(world)
    assert [item["id"] for item in data["eligible"]] == [lesson]           # type: ignore[attr-defined]
    assert data["waiting_for_room"] == []
    assert "eligible but RULES is full" not in render_dashboard(data, colour=False)
    result = world.close(d(10), at(10, 23))
    assert [p["lesson"] for p in result.promoted] == [lesson]                 # what status said, the close did


def test_room_for_one_more_rule_makes_one_lesson_eligible_and_the_rest_wait(memrepo: GitRepo) -> None:
    """RULES at 1 of 2: the close promotes one of two eligible lessons and says RULES is full for the other."""
    world = World(memrepo)
    _full_rules(world, 2)
    first, second = world.eligible_lessons(2)
    world.clock.moment = at(10, 12)
    data = _status(world)
    assert [item["id"] for item in data["eligible"]] == [first]                # type: ignore[attr-defined]
    assert [item["id"] for item in data["waiting_for_room"]] == [second]       # type: ignore[attr-defined]
    result = world.close(d(10), at(10, 23))
    assert [p["lesson"] for p in result.promoted] == [first]


def test_a_rule_line_too_long_to_promote_is_named_as_the_reason(memrepo: GitRepo) -> None:
    """The close never promotes a rule over 120 characters; status called that lesson eligible, without a note."""
    world = World(memrepo)
    world.cycle(at(10, 8))
    lesson = world.lesson(at(10, 8, 10), "Wordy", rule="Always " + "really " * 20 + "test.")
    for hour in (9, 10):
        world.cycle(at(10, hour))
        world.confirm(at(10, hour, 10), lesson)
    world.clock.moment = at(10, 12)
    data = _status(world)
    [item] = data["eligible"]                                                  # type: ignore[misc]
    assert item["id"] == lesson and "characters (at most 120)" in item["note"]
    assert f"{lesson} · Wordy (cycles 2, 3) — its rule line is" in render_dashboard(data, colour=False)
    result = world.close(d(10), at(10, 23))
    assert result.promoted == []
