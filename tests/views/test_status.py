"""`gitmem status`: the dashboard's data from a real repository, and its text with and without colour."""
from __future__ import annotations

import json

import pytest

from gitmem.cli.status import render_dashboard
from gitmem.cycle.budget import estimate
from gitmem.views.status import collect_status
from gitmem.workspace import Workspace
from tests.support.helpers import GitRepo
from tests.support.world import World, at, d

RULE = "Run the tests before every commit."


@pytest.fixture
def world(memrepo: GitRepo) -> World:
    world = World(memrepo)
    world.ask(at(6, 9), "Which database?")
    world.cycle(at(10, 9), "built", task="add the parser")                       # 1
    lesson = world.lesson(at(10, 9, 30), "Tests first", rule=RULE)
    waiting = world.lesson(at(10, 9, 40), "Small commits")
    world.cycle(at(10, 21), "no-build")                                          # 2
    world.confirm(at(10, 21, 10), lesson)
    world.confirm(at(10, 21, 20), waiting)
    world.cycle(at(10, 22), "no-build")                                          # 3
    world.confirm(at(10, 22, 10), lesson)
    world.cycle(at(11, 8), "no-build", task="look for work")                     # 4, the next day
    return world


def test_status_collects_the_day_the_streak_decisions_lessons_rules_and_budget(world: World) -> None:
    world.clock.moment = at(11, 12)
    data = collect_status(Workspace.at(world.git.path, world.config), clock=world.clock).to_json()
    assert data["now"] == "2026-11-11 12:00 UTC"
    assert data["last_cycle"] == {"cycle": 4, "when": "2026-11-11 08:00 UTC", "outcome": "no-build",
                                  "task": "look for work", "warnings": []}
    assert data["cycles_today"] == 1
    assert data["outcomes_today"] == {"built": 0, "published": 0, "no-build": 1}
    assert data["streak"] == {"length": 3, "first": 2, "last": 4, "problem": True}     # across midnight
    assert data["pending"] == [{"id": "D-0001", "title": "Which database?", "age_days": 5, "age": "5d", "stale": True,
                                "answer_incomplete": False}]
    assert data["eligible"] == [{"id": "L-0001", "title": "Tests first", "cycles": [2, 3], "has_rule": True,
                                 "note": ""}]
    assert data["awaiting"] == [{"id": "L-0002", "title": "Small commits", "needed": 2, "confirmations": 1}]
    assert data["rules"]["proven"] == 0 and data["rules"]["proven_max"] == 30
    assert data["rules"]["lines"] == len(world.read("RULES.md").splitlines())
    assert data["rules"]["lines_max"] == 200
    budget = data["budget"]
    assert budget["limit"] == 60000 and budget["soft"] == 42000 and budget["hard"] == 51900
    assert 0 < budget["tokens"] < budget["soft"]
    assert data["last_close"] is None


def test_status_after_a_close_shows_the_promotion_and_the_close(world: World) -> None:
    world.close(d(11), at(11, 23))
    data = collect_status(Workspace.at(world.git.path, world.config), clock=world.clock).to_json()
    assert data["rules"]["proven"] == 1
    assert data["eligible"] == []
    assert data["last_close"] == "2026-11-11"


def test_render_is_plain_in_a_pipe_and_coloured_on_a_terminal(world: World) -> None:
    world.clock.moment = at(11, 12)
    data = collect_status(Workspace.at(world.git.path, world.config), clock=world.clock).to_json()
    plain = render_dashboard(data, colour=False)
    assert "\x1b[" not in plain
    lines = plain.splitlines()
    assert lines[0] == "gitmem status · 2026-11-11 12:00 UTC"
    assert lines[1] == "last cycle   4 · 2026-11-11 08:00 UTC · no-build · look for work"
    assert lines[2] == "today        1 cycle(s) (1 no-build)"
    assert lines[3] == "Rule 0       3 no-build in a row (cycles 2–4) — PROBLEM: ship something"
    assert "  D-0001 · Which database? (5d)" in lines
    assert "  L-0001 · Tests first (cycles 2, 3)" in lines
    assert "  L-0002 · Small commits (1/2)" in lines
    assert len(lines) <= 24                                                      # one screen
    coloured = render_dashboard(data, colour=True)
    assert "\x1b[31m" in coloured and coloured != plain


def test_cli_status_text_and_json(world: World, cli) -> None:  # type: ignore[no-untyped-def]
    text = cli(["status"], cwd=world.git.path)
    assert text.code == 0 and "\x1b[" not in text.out
    assert text.out.startswith("gitmem status · ")
    assert "decisions    1 pending" in text.out
    data = json.loads(cli(["status", "--json"], cwd=world.git.path).out)
    assert data["last_cycle"]["cycle"] == 4 and data["rules"]["proven_max"] == 30


def test_offline_estimate_counts_what_a_cycle_reads(world: World) -> None:
    tokens = estimate(Workspace.at(world.git.path, world.config))
    rules_chars = len(world.read("RULES.md"))
    assert tokens > rules_chars / 3.5
    assert tokens < sum(len(world.read(rel)) for rel in ("RULES.md", "NOW.md", "DECISIONS.md", "LOG.md",
                                                        "ROADMAP.md")) / 3.5


def test_status_reads_log_back_from_its_end_through_the_workspace(world: World,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """The day, the streak and the last cycle come from LOG read back from its end (Workspace.log_source), as
    the cycle reads it: never the whole file as text, and the dashboard is the same."""
    world.clock.moment = at(11, 12)
    ws = Workspace.at(world.git.path, world.config)
    before = collect_status(ws, clock=world.clock).to_json()
    real = Workspace.read

    def no_whole_log(self: Workspace, role: str) -> str:
        assert role != "log", "status read the whole LOG"
        return real(self, role)

    monkeypatch.setattr(Workspace, "read", no_whole_log)
    assert collect_status(ws, clock=world.clock).to_json() == before


def test_status_lists_the_branches_waiting_on_the_human_with_what_to_do(tmp_path, memrepo: GitRepo, cli) -> None:
    """Salvage, proposal, kept-local and side branches, from real cycles against an origin that refuses pushes
    as GitHub's protection does; a branch the upstream already contains waits on nothing."""
    from gitmem.cycle.runner import Settings, run_cycle
    from tests.support.cycle_support import WritingBackend, built, origin_and_clone
    from tests.support.gitcli import git, protect_branches

    origin = origin_and_clone(tmp_path, memrepo)
    protect_branches(origin, "main")

    def crash(memory, request) -> None:
        (request.root / "half.txt").write_text("half\n")
        raise RuntimeError("the model went away")

    assert run_cycle(memrepo.ws(), WritingBackend(crash), settings=Settings(push=True)).exit_code == 4
    protect_branches(origin, "*")          # now nothing reaches the remote: cycle 2's branches stay here
    second = run_cycle(memrepo.ws(), WritingBackend(built(extra={".github/workflows/x.yml": "on: push\n"})),
                       settings=Settings(push=True))
    assert second.exit_code == 6 and second.proposal_branch == "gitmem/proposal/cycle-2"
    git(memrepo.path, "branch", "gitmem/local/cycle-9", "origin/main")   # landed: not listed
    git(memrepo.path, "branch", "gitmem/memory", "HEAD")     # pull-request mode's branch waits in its PR

    data = json.loads(cli(["status", "--json"], cwd=memrepo.path).out)
    kept = {b["name"]: b for b in data["branches"]}
    assert list(kept) == ["gitmem/salvage/cycle-1", "gitmem/proposal/cycle-2", "gitmem/cycle-1", "gitmem/cycle-2"]
    assert [b["kind"] for b in kept.values()] == ["salvage", "proposal", "side", "side"]
    assert kept["gitmem/salvage/cycle-1"]["remotes"] == ["origin"] and kept["gitmem/cycle-1"]["remotes"] == ["origin"]
    assert kept["gitmem/cycle-2"]["only_on_this_machine"] and kept["gitmem/proposal/cycle-2"]["only_on_this_machine"]
    assert (kept["gitmem/cycle-1"]["commits"], kept["gitmem/cycle-2"]["commits"]) == (1, 2)
    assert "git cherry-pick" in kept["gitmem/salvage/cycle-1"]["todo"]
    assert "answer the Pending decision" in kept["gitmem/proposal/cycle-2"]["todo"]

    text = cli(["status"], cwd=memrepo.path).out
    assert "branches     4 waiting on you, 2 only on this machine (`gitmem status --json` says how)" in text
    assert ("  gitmem/cycle-2 · side · 2 commit(s) · ONLY ON THIS MACHINE: push it — merge it through a pull "
            "request") in text
    assert "  gitmem/salvage/cycle-1 · salvage · 1 commit(s) · on origin — review it, cherry-pick" in text
    assert "gitmem/local/cycle-9" not in text and "gitmem/memory" not in text


def test_the_last_close_is_the_newest_day_closed_wherever_it_stands_in_log(world: World) -> None:
    """The last close was read from today's entries and the one before them, and then by position: a close
    followed by a late cycle showed none the next morning, and a close of an older day run afterwards showed
    that older day as the last close."""
    world.close(d(11), at(11, 23))
    world.cycle(at(11, 23, 30), "built", task="a late fix")                       # 5, after the close
    world.clock.moment = at(12, 9)

    def last_close() -> str | None:
        return collect_status(Workspace.at(world.git.path, world.config), clock=world.clock).to_json()["last_close"]

    assert last_close() == "2026-11-11"
    result = world.close(d(10), at(12, 10))                                       # an older day, closed later
    assert result.status in ("closed", "closed again"), result
    assert world.read("LOG.md").rstrip().rsplit("\n## ", 1)[-1].count("2026-11-10") >= 1
    assert last_close() == "2026-11-11"
