"""`gitmem roadmap done` (and the `roadmap_done` tool): the agent's one way to tick a ROADMAP item, and the close's
plan, which plans the top open item until it is ticked and says how."""
from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from gitmem.agents.tools import MEMORY_COMMANDS_TEXT, MEMORY_TOOLS_TEXT, Toolbox
from gitmem.errors import ExitCode
from gitmem.memory import now, roadmap
from gitmem.workspace import Workspace
from tests.support.cycle_support import file_at
from tests.support.helpers import GitRepo
from tests.support.hostile import GITMEM, command_agent
from tests.support.world import World, at, d

SHIP = "Ship a first useful thing and log it"
ASK = "Ask the human the first open question in DECISIONS.md"


def test_roadmap_done_ticks_the_one_item_named_and_nothing_else(memrepo: GitRepo, cli) -> None:  # type: ignore[no-untyped-def]
    before = memrepo.read("ROADMAP.md")
    done = cli(["roadmap", "done", "ship a FIRST useful"], cwd=memrepo.path)
    assert done.code == ExitCode.OK, done.err
    assert done.out == f"ROADMAP.md: ticked: {SHIP}\n"
    assert memrepo.read("ROADMAP.md") == before.replace(f"- [ ] {SHIP}", f"- [x] {SHIP}")
    assert cli(["check", "--worktree"], cwd=memrepo.path).code == ExitCode.OK


def test_roadmap_done_refuses_a_name_that_is_not_exactly_one_open_item(memrepo: GitRepo, cli) -> None:  # type: ignore[no-untyped-def]
    before = memrepo.read("ROADMAP.md")
    several = cli(["roadmap", "done", "first"], cwd=memrepo.path)
    assert several.code == ExitCode.VIOLATIONS
    assert "'first' matches 2 open items of the current ROADMAP section `First week (current)`" in several.err
    unknown = cli(["roadmap", "done", "deploy to production"], cwd=memrepo.path)
    assert unknown.code == ExitCode.VIOLATIONS and "matches no open item" in unknown.err and SHIP in unknown.err
    assert memrepo.read("ROADMAP.md") == before


def test_the_tool_ticks_as_the_command_does_and_the_prompt_teaches_both(memrepo: GitRepo) -> None:
    box = Toolbox(Workspace.at(memrepo.path), cycle=1, clock=lambda: datetime(2026, 11, 10, 9, tzinfo=UTC))
    assert box.call("roadmap_done", {"item": SHIP}).text == f"ROADMAP.md: ticked {SHIP}"
    assert roadmap.open_items(memrepo.read("ROADMAP.md"))[-1] == ASK and SHIP not in roadmap.open_items(
        memrepo.read("ROADMAP.md"))
    again = box.call("roadmap_done", {"item": SHIP})
    assert again.is_error and "matches no open item" in again.text
    assert "roadmap_done" in MEMORY_TOOLS_TEXT and 'gitmem roadmap done "item"' in MEMORY_COMMANDS_TEXT


def test_the_plan_names_the_cycle_that_worked_on_its_item_and_moves_on_once_ticked(world: World) -> None:
    world.cycle(at(10, 9), "built", task=SHIP)
    first = world.close(d(10), at(10, 23))
    assert first.plan == (f"{SHIP} — why: it is the top open item of the current ROADMAP section `First week "
                          "(current)`; cycle 1 logged work on it: once it is finished, tick it off "
                          "(`gitmem roadmap done`) and the plan moves on")
    world.clock.moment = at(11, 9)
    world.memory.tick_roadmap(SHIP)
    world.cycle(at(11, 9, 5), "built", task="write the README")
    world.commit("tick", "ROADMAP.md")
    second = world.close(d(11), at(11, 23))
    assert second.plan.startswith(f"{ASK} — why: it is the top open item")
    assert second.plan.endswith("; tick it off when it is finished (`gitmem roadmap done`)")
    top = now.parse(world.read("NOW.md"), max_blocks=1).top
    assert top is not None and top.body[2].startswith(f"- Next: {ASK}")


def test_a_cycle_agent_ticks_its_item_with_the_command_and_the_cycle_commits_it(tmp_path: Path, memrepo: GitRepo,
                                                                              cli) -> None:  # type: ignore[no-untyped-def]
    command_agent(tmp_path, memrepo, f"subprocess.run([{str(GITMEM)!r}, 'roadmap', 'done', {SHIP!r}], "
                                     "check=True, cwd=root)\n")
    ran = cli(["cycle", "--json"], cwd=memrepo.path)
    assert ran.code == ExitCode.OK, ran.err
    committed = file_at(memrepo.repo, "HEAD", "ROADMAP.md")
    assert committed is not None and f"- [x] {SHIP}" in committed
    today = datetime.now(UTC).date().isoformat()
    closed = cli(["close", "--date", today, "--no-llm", "--json"], cwd=memrepo.path)
    assert closed.code == ExitCode.OK, closed.err
    assert f'"plan": "{ASK} — why:' in closed.out
