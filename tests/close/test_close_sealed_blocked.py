"""The cycles blocked on a decision asked before LOG.md's first entry are in the sealed volumes (rules 6): a close
reads the volumes back to its ask only when one of them holds a `- Blocked:` field, and what it keeps of each
volume read (outside the repository, by blob id) spares the next closes reading them again (13 volumes, 3.6 MB at
100x, for a month-old question)."""
from __future__ import annotations

from datetime import datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from gitmem.memory import log
from gitmem.workspace import log_history
from tests.support.helpers import counting
from tests.support.sealing import seal
from tests.support.world import World

UTC = ZoneInfo("UTC")


@pytest.fixture
def sealed(world: World, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> World:
    """D-0001 asked on 1 October; the cycles of 2 and 3 October blocked on it (volume 1), those of 4 and 5 October
    not (volume 2), and those of 6 and 7 October in LOG.md."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))       # nothing kept from another run
    world.clock.moment = datetime(2026, 10, 1, 8, 0, tzinfo=UTC)
    asked = world.memory.ask_decision(title="a question", recommendation="wait")
    world.commit("asked")
    for day in range(2, 8):
        world.clock.moment = datetime(2026, 10, day, 8, 0, tzinfo=UTC)
        world.memory.add_log_entry(task=f"task {day}", outcome="no-build", result="waited",
                                   blocked=asked.id if day < 4 else None)
        world.commit(f"day {day}", world.path("log"))
    assert seal(world.git, per_volume=2, seal_at=4) == ["history/LOG-0001.md", "history/LOG-0002.md", "LOG.md"]
    world.reload()
    return world


def _history(world: World) -> log_history.LogHistory:
    return log_history.of(world.memory.workspace)


def test_volumes_holding_no_blocked_field_give_nothing_and_are_read_once(sealed: World,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    since_volume_2 = datetime(2026, 10, 4, 9, 0, tzinfo=UTC)        # volume 2 opens before it: volume 2 alone
    first = _history(sealed)
    assert log.BLOCKED not in first.sealed_since(since_volume_2)
    assert first.sealed_since(since_volume_2, holding=log.BLOCKED) == ""
    read = counting(monkeypatch, log_history.LogHistory, "volume_bytes")
    assert _history(sealed).sealed_since(since_volume_2, holding=log.BLOCKED) == ""
    assert read == []                       # a later reader takes what the first kept of volume 2


def test_volumes_holding_a_blocked_field_are_read_whole_as_before(sealed: World) -> None:
    from gitmem.close import writeup
    from gitmem.memory import decisions

    since_the_ask = datetime(2026, 10, 1, 8, 0, tzinfo=UTC)
    whole = _history(sealed).sealed_since(since_the_ask)
    assert whole.count(f"{log.BLOCKED}: D-0001") == 2
    assert _history(sealed).sealed_since(since_the_ask, holding=log.BLOCKED) == whole
    assert _history(sealed).sealed_since(since_the_ask, holding=log.BLOCKED) == whole     # from what was kept

    # and a close's write-up finds the cycles blocked in volume 1, as a first close and as a later one
    moment = datetime(2026, 10, 8, 0, 30, tzinfo=UTC)
    doc = decisions.parse(sealed.read(sealed.path("decisions")))
    for _ in range(2):
        week = writeup.Week(moment)
        waiting = week.waiting(doc, moment)
        assert [item.id for item in waiting] == ["D-0001"]
        found = writeup.blocked_tasks(_history(sealed), waiting, moment, week=week)
        assert found == {"D-0001": ["task 2", "task 3"]}, found


def test_the_volumes_a_commit_holds_are_listed_once(sealed: World, monkeypatch: pytest.MonkeyPatch) -> None:
    """A close asks for HEAD's history at each of its steps (nine times, 269 volumes at 100x): a commit never
    changes, so its volumes are listed once; a new HEAD has its own listing."""
    from gitmem import gitio

    repo = sealed.memory.workspace.repo
    listed = counting(monkeypatch, gitio, "commit_snapshot")
    first = log_history.tracked(repo, "LOG.md")
    assert [volume.path for volume in first] == ["history/LOG-0001.md", "history/LOG-0002.md"]
    assert log_history.tracked(repo, "LOG.md") == first == _history(sealed).volumes
    assert len(listed) == 1, listed
    for day in range(8, 10):
        sealed.clock.moment = datetime(2026, 10, day, 8, 0, tzinfo=UTC)
        sealed.memory.add_log_entry(task=f"task {day}", outcome="no-build", result="waited")
        sealed.commit(f"day {day}", sealed.path("log"))
    assert seal(sealed.git, per_volume=2, seal_at=4) == ["history/LOG-0003.md", "LOG.md"]
    assert [volume.number for volume in log_history.tracked(repo, "LOG.md")] == [1, 2, 3]
    assert len(listed) == 2, listed


@pytest.mark.parametrize("mangled", ["2026-10-03", "2026-10-03T08:00:00"])
def test_a_mangled_fact_of_a_volume_is_no_fact(sealed: World, mangled: str) -> None:
    """What is kept of a volume is a cache: a date without its zone (which cannot be compared with an instant)
    crashed the close, and is now read as no fact, the volume read again."""
    from gitmem.workspace import proofs

    since_the_ask = datetime(2026, 10, 1, 8, 0, tzinfo=UTC)
    whole = _history(sealed).sealed_since(since_the_ask)
    assert _history(sealed).sealed_since(since_the_ask, holding=log.BLOCKED) == whole      # the facts kept
    root = sealed.memory.workspace.root
    kept = proofs.read_proofs(root, log_history.FACTS_KIND, max_bytes=log_history.FACTS_MAX_BYTES)
    assert len(kept["volumes"]) == 2
    for fact in kept["volumes"].values():
        fact[0] = mangled
    proofs.keep_proofs(root, log_history.FACTS_KIND, kept)
    assert _history(sealed).sealed_since(since_the_ask, holding=log.BLOCKED) == whole
