"""The plan block the close puts on top of NOW lists the decisions waiting on the human; NOW's block is held to
its share of the context (GM104), so with a small budget and many decisions the list is cut (the count first, then
as many as fit, marked `…`) rather than failing the whole close."""
from __future__ import annotations

from gitmem.memory import now
from tests.support.helpers import GitRepo
from tests.support.world import World, at, d


def test_many_waiting_decisions_under_a_small_budget_still_close(memrepo: GitRepo) -> None:
    memrepo.commit_files({"gitmem.yaml": memrepo.read("gitmem.yaml").replace("max_context_tokens: 60000",
                                                                             "max_context_tokens: 4000")}, "budget")
    world = World(memrepo)
    world.cycle(at(10, 8))
    asked = [world.ask(at(10, 9), f"question {i}", "r") for i in range(20)]
    world.cycle(at(10, 10))
    before = world.git.head()
    result = world.close(d(10), at(10, 23))
    assert result.status == "closed"
    top = now.parse(world.read("NOW.md"), max_blocks=1).top
    assert top is not None and top.plan_for == d(11)
    human = top.get("Human") or ""
    assert human.startswith(f"20 decision(s) waiting: {asked[0]} (") and human.endswith("…"), human
    world.assert_valid(before)
