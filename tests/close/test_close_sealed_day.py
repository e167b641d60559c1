"""`gitmem close --date` of a day whose entries were sealed into LOG's volumes (rules 6, issue 31): the close reads
the volumes that reach back to the day, amendments and all, and writes the report it writes on the unsealed LOG."""
from __future__ import annotations

from pathlib import Path

from gitmem.close import CloseResult
from tests.support.helpers import make_repo
from tests.support.sealing import seal
from tests.support.world import World, at, d


def _week(world: World) -> None:
    """Four cycles a day on the 2nd to the 7th, none closed; on the 2nd a hand-typed entry, amended as no-build."""
    for day in range(2, 8):
        for hour in (9, 12, 15, 18):
            world.cycle(at(day, hour), "no-build" if day == 2 and hour < 15 else "built")
        if day == 2:
            typed = world.read("LOG.md") + "\n## 2026-11-02 19:00 UTC · cycle 5 · built\n- Task: typed by hand\n"
            world.git.commit_files({"LOG.md": typed}, "an entry without a Result, committed without the check")
            line = typed.splitlines().index("## 2026-11-02 19:00 UTC · cycle 5 · built") + 1
            world.clock.moment = at(2, 20)
            world.memory.amend_log_entry(line, outcome="no-build", result="nothing was built", task="typed by hand")
            world.commit("amend", "LOG.md")


def _close_of_the_second(tmp_path: Path, name: str, *, sealed: bool) -> tuple[CloseResult, World]:
    world = World(make_repo(tmp_path / name))
    _week(world)
    if sealed:
        assert seal(world.git, per_volume=8, seal_at=12)[:-1] == ["history/LOG-0001.md", "history/LOG-0002.md"]
        assert "2026-11-02" not in world.read("LOG.md")
    return world.close(d(2), at(8, 10)), world


def test_an_old_day_in_a_volume_is_closed_as_on_the_unsealed_log(tmp_path: Path, git_env: None) -> None:
    unsealed, _ = _close_of_the_second(tmp_path, "unsealed", sealed=False)
    found, world = _close_of_the_second(tmp_path, "sealed", sealed=True)
    assert unsealed.status == "closed" and unsealed.counts == {"built": 2, "published": 0, "no-build": 3}
    assert (found.status, found.counts, found.problems) == (unsealed.status, unsealed.counts, unsealed.problems)
    assert found.report == unsealed.report


def _blocked_week(tmp_path: Path, name: str, *, sealed: bool) -> CloseResult:
    """A decision asked on the 2nd. That day's cycles worked on ROADMAP's first item and said they were blocked on
    it; the cycles of the 3rd to the 7th built other things. Closed on the 7th, with the decision still pending."""
    world = World(make_repo(tmp_path / name))
    roadmap = world.read("ROADMAP.md").replace("- [ ] Fill in RULES.md: who the agent is and who its human is\n",
                                               "- [ ] Publish the first release to PyPI\n")
    world.git.commit_files({"ROADMAP.md": roadmap}, "the roadmap")
    decision = world.ask(at(2, 8), "May I publish the release to PyPI?")
    for hour in (9, 12, 15, 18):
        world.clock.moment = at(2, hour)
        entry = world.memory.add_log_entry(task="Publish the first release to PyPI", outcome="no-build",
                                           result="waits on the human", blocked=decision)
        world.memory.add_now_block(did="waited", human=f"please answer {decision}", next="carry on")
        world.commit(f"gitmem: cycle {entry.cycle}", world.path("log"), world.path("now"))
    for day in range(3, 8):
        for hour in (9, 12, 15, 18):
            world.cycle(at(day, hour), task=f"tidy the docs on the {day}th at {hour}")
    if sealed:
        assert seal(world.git, per_volume=8, seal_at=12)[:-1] == ["history/LOG-0001.md", "history/LOG-0002.md"]
        assert "2026-11-02" not in world.read("LOG.md")
    return world.close(d(7), at(7, 23))


def test_the_cycles_blocked_on_a_decision_asked_before_log_md_starts_are_found_in_the_volumes(
        tmp_path: Path, git_env: None) -> None:
    """The close's plan skips ROADMAP items that cycles said a pending decision blocks, read back to the decision's
    ask: after a seal the ask is older than LOG.md's first entry, and the volumes hold the cycles of its day."""
    unsealed = _blocked_week(tmp_path, "unsealed", sealed=False)
    found = _blocked_week(tmp_path, "sealed", sealed=True)
    assert "Publish the first release" not in str(unsealed.plan) and "Ship a first useful thing" in str(unsealed.plan)
    assert (found.plan, found.problems, found.report) == (unsealed.plan, unsealed.problems, unsealed.report)
