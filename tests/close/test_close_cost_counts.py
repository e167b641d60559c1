"""What a close costs is counted, not timed (issue 31): the work that grows with history is done once per
process, however many days a close catches up and however many of its steps ask."""
from __future__ import annotations

from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from gitmem.close import run_close
from gitmem.memory_writer import WriteRefused
from gitmem.workspace import Workspace
from tests.support.world import World

UTC = ZoneInfo("UTC")


def _week_of_cycles(world: World) -> None:
    for day in range(9, 14):
        world.cycle(datetime(2026, 11, day, 9, 0, tzinfo=UTC))
    world.commit("five days of cycles")


def _counting(monkeypatch: pytest.MonkeyPatch, module: Any, name: str) -> list[Any]:
    calls: list[Any] = []
    real = getattr(module, name)

    def counted(*args: Any, **kwargs: Any) -> Any:
        calls.append(args)
        return real(*args, **kwargs)

    monkeypatch.setattr(module, name, counted)
    return calls


def test_a_close_catching_up_days_judges_log_as_it_stands_once(world: World, monkeypatch: pytest.MonkeyPatch) -> None:
    """Before each day's entry the close makes sure LOG is valid as it stands; after the first judgement LOG
    changed only by the close's own validated appends, so it is not judged whole again (75 MB a day at 100x)."""
    from gitmem.checks import standing

    _week_of_cycles(world)
    judged = _counting(monkeypatch, standing, "log_standing")
    world.clock.moment = datetime(2026, 11, 14, 0, 31, tzinfo=UTC)
    world.reload()
    result = run_close(Workspace.at(world.git.path, world.config), clock=world.clock)
    assert len(result.days) == 5
    assert len(judged) == 1


def test_a_log_changed_by_anyone_else_is_judged_again(world: World) -> None:
    """The judgement holds for the LOG this writer left: a heading written by hand in between is found."""
    _week_of_cycles(world)
    world.clock.moment = datetime(2026, 11, 14, 0, 31, tzinfo=UTC)
    world.reload()
    memory = world.memory
    memory.add_close_entry({"Cycles": "one"})
    log_path = world.git.path / world.path("log")
    log_path.write_bytes(log_path.read_bytes() + b"\n## not a heading of any entry\n\n- Task: x\n")
    with pytest.raises(WriteRefused, match="holds invalid entries"):
        memory.add_close_entry({"Cycles": "two"})
