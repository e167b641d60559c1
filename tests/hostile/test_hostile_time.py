"""Hostile agents, class 3c: time and history. Entries the runner keeps carry the clock's time for that cycle
(a hand-written 2099 entry never lands, and clock-dated entries stay writable after it), and lessons or
confirmations that history does not back never count, however the agent dates them."""
from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from gitmem.checks.check_and_verify import check_worktree, verify_range
from gitmem.close import run_close
from gitmem.errors import ExitCode
from gitmem.memory import lessons, log, now, rules
from tests.support.helpers import GitRepo
from tests.support.hostile import FixedClock, cycle, evidence
from tests.support.world import World, at, d

FUTURE = [
    "2099-01-01 00:00 UTC",          # far future
    "2026-12-01 09:01 UTC",          # one minute ahead of the clock
    "2026-12-01 10:00 +01:00",       # the same minute in another zone is fine; this is the clock's own time
    "2020-01-01 00:00 UTC",          # before the previous entry
]


def _hand_written(stamp: str):
    def act(root: Path, memory, request) -> None:
        with (root / "LOG.md").open("a", encoding="utf-8") as handle:
            handle.write(f"\n## {stamp} · cycle {request.cycle} · built\n- Task: forged time\n- Result: done\n")
        text = (root / "NOW.md").read_text(encoding="utf-8")
        title, _, rest = text.partition("\n")
        (root / "NOW.md").write_text(f"{title}\n\n## {stamp} · cycle {request.cycle}\n- Did: x\n- Human: nothing\n"
                                     f"- Next: y\n{rest}", encoding="utf-8")
    return act


@pytest.mark.parametrize("stamp", FUTURE)
def test_hand_written_entries_get_the_clocks_time(memrepo: GitRepo, stamp: str) -> None:
    clock = FixedClock(datetime(2026, 12, 1, 9, 0, tzinfo=UTC))
    report = cycle(memrepo, _hand_written(stamp), clock=clock, finish=False)
    assert report.exit_code == ExitCode.OK, report.error
    entry = log.parse(memrepo.read("LOG.md")).entries[-1]
    block = now.parse(memrepo.read("NOW.md")).top
    assert entry.when.moment == clock.moment and block is not None and block.when.moment == clock.moment
    if stamp != "2026-12-01 10:00 +01:00":
        assert "restored the LOG entry's time to the clock's 2026-12-01 09:00 UTC" in evidence(memrepo)
    # The next cycle, an hour later, writes clock-dated entries as usual.
    clock.moment += timedelta(hours=1)
    second = cycle(memrepo, lambda root, memory, request: None, clock=clock)
    assert second.exit_code == ExitCode.OK and second.cycle == 2
    assert [e.when.moment for e in log.parse(memrepo.read("LOG.md")).entries] == \
           [clock.moment - timedelta(hours=1), clock.moment]
    assert [v for v in check_worktree(memrepo.ws()) if v.is_error] == []


def test_an_entry_written_by_the_tools_during_the_cycle_keeps_its_time(memrepo: GitRepo) -> None:
    clock = FixedClock(datetime(2026, 12, 1, 9, 0, tzinfo=UTC))

    def act(root: Path, memory, request) -> None:
        clock.moment += timedelta(minutes=7)          # the agent worked for a while

    cycle(memrepo, act, clock=clock)
    assert log.parse(memrepo.read("LOG.md")).entries[-1].when.moment == clock.moment
    assert "restored the LOG entry's time" not in evidence(memrepo)


RULE = "Run the whole test suite before every commit."


def test_a_backdated_lesson_with_forged_confirmations_is_not_promoted(memrepo: GitRepo) -> None:
    world = World(memrepo)
    for hour in (8, 9, 10):
        world.cycle(at(10, hour))                                       # cycles 1, 2, 3
    forged = ("\n## L-0001 · Tests first\n- Happened: 2026-11-10 (cycle 1) — it broke\n- Why: no tests\n"
              "- Change: run them\n" f"- Rule: {RULE}\n- Confirmed: 2026-11-10 (cycle 2) — held\n"
              "- Confirmed: 2026-11-10 (cycle 3) — held again\n- Status: open\n")

    def act(root: Path, memory, request) -> None:
        with (root / "LESSONS.md").open("a", encoding="utf-8") as handle:
            handle.write(forged)

    report = cycle(memrepo, act, clock=FixedClock(at(10, 11)))                # cycle 4 writes it all at once
    assert report.exit_code == ExitCode.OK, report.error
    # The runner keeps the lesson as cycle 4's and drops the confirmations a lesson cannot have in its own cycle,
    # so the forged lines never land; the close's history-backed count (tests/memory) is the second line.
    found = lessons.parse(memrepo.read("LESSONS.md")).find("L-0001")
    assert found is not None and found.happened is not None and found.happened.cycle == 1    # an earlier mistake
    assert found.confirmations == []
    assert "removed a Confirmed line of L-0001 (it said cycle 2)" in evidence(memrepo)
    assert "removed a Confirmed line of L-0001 (it said cycle 3)" in evidence(memrepo)
    world.reload()
    result = run_close(memrepo.ws(), day=d(10), clock=FixedClock(at(10, 23)))
    assert result.promoted == []
    assert [r.render() for r in rules.parse(memrepo.read("RULES.md")).proven] == []
    assert verify_range(memrepo.ws(), None, "HEAD").violations == []


def test_a_lesson_confirmed_under_another_cycle_number_records_the_cycle_that_ran(memrepo: GitRepo) -> None:
    """The agent runs `gitmem lesson confirm` with its own GITMEM_CYCLE (or writes the line by hand): the line
    citing the next cycle was committed, and that next cycle's real confirmation was then refused (GM403)."""
    world = World(memrepo)
    world.cycle(at(10, 8))                                                     # cycle 1
    cycle(memrepo, lambda root, memory, request: memory.add_lesson(
        title="Tests first", happened="it broke", why="no tests", change="run them", rule=RULE, cycle=request.cycle),
        clock=FixedClock(at(10, 9)))                                           # cycle 2 adds L-0001

    def forge(root: Path, memory, request) -> None:
        memory.confirm_lesson("L-0001", evidence="held", cycle=request.cycle + 1)
        text = (root / "LESSONS.md").read_text(encoding="utf-8")
        (root / "LESSONS.md").write_text(text.replace(
            "- Status: open", "- Confirmed: 2099-01-01 (cycle 1) — by hand\n- Status: open", 1), encoding="utf-8")

    report = cycle(memrepo, forge, clock=FixedClock(at(10, 10)))               # cycle 3
    assert report.exit_code == ExitCode.OK, report.error
    found = lessons.parse(memrepo.read("LESSONS.md")).find("L-0001")
    assert found is not None
    assert [(e.day, e.cycle) for _, e in found.confirmations if e is not None] == [(at(10, 10).date(), 3)]
    assert "restored L-0001's Confirmed line to 2026-11-10 (cycle 3), by the runner's clock and count (it said " \
        "2026-11-10 (cycle 4))" in evidence(memrepo)
    assert "removed a Confirmed line of L-0001 (it said cycle 1): a lesson is confirmed once per cycle" \
        in evidence(memrepo)
    # The next cycle's own confirmation is taken, and the two are the backed pair the close promotes.
    report = cycle(memrepo, lambda root, memory, request: memory.confirm_lesson(
        "L-0001", evidence="held again", cycle=request.cycle), clock=FixedClock(at(10, 11)))   # cycle 4
    assert report.exit_code == ExitCode.OK, report.error
    world.reload()
    result = run_close(memrepo.ws(), day=d(10), clock=FixedClock(at(10, 23)))
    assert [r.render() for r in rules.parse(memrepo.read("RULES.md")).proven] == \
        [f"- R-01 · {RULE} (from L-0001; cycles 3, 4)"], result.problems
    assert verify_range(memrepo.ws(), None, "HEAD").violations == []


def test_a_hand_written_decision_dated_2099_gets_the_clocks_time(memrepo: GitRepo) -> None:
    from gitmem.memory import decisions

    clock = FixedClock(datetime(2026, 12, 1, 9, 0, tzinfo=UTC))

    def act(root: Path, memory, request) -> None:
        text = (root / "DECISIONS.md").read_text(encoding="utf-8").replace(
            "## Pending\n", "## Pending\n\n### D-0001 · Forever fresh?\n- Asked: 2099-01-01 00:00 UTC (cycle 1)\n"
                           "- Recommendation: never look at me\n", 1)
        (root / "DECISIONS.md").write_text(text, encoding="utf-8")

    report = cycle(memrepo, act, clock=clock)
    assert report.exit_code == ExitCode.OK, report.error
    item = decisions.parse(memrepo.read("DECISIONS.md")).find("D-0001")
    assert item is not None and item.asked is not None and item.asked.moment == clock.moment
    assert "restored the time D-0001 was asked" in evidence(memrepo)


def test_a_lesson_and_a_confirmation_dated_2099_get_the_clocks_day_and_the_past_stays(memrepo: GitRepo) -> None:
    """Every time the runner commits comes from its clock: a lesson's Happened day or a new Confirmed line dated
    after the clock's day gets the clock's day; a lesson about an earlier day's mistake keeps its day."""
    world = World(memrepo)
    world.cycle(at(10, 8))
    old = world.lesson(at(10, 8), "Read the clock")                     # L-0001, by the tools

    def act(root: Path, memory, request) -> None:
        text = (root / "LESSONS.md").read_text(encoding="utf-8")
        text = text.replace("- Why:", "- Confirmed: 2099-01-01 10:00 UTC (cycle 2) — held\n- Why:", 1)
        text += ("\n## L-0002 · Future\n- Happened: 2099-01-01 (cycle 2) — later\n- Why: w\n- Change: c\n"
                 "\n## L-0003 · Past\n- Happened: 2026-11-09 (cycle 1) — earlier\n- Why: w\n- Change: c\n")
        (root / "LESSONS.md").write_text(text, encoding="utf-8")

    report = cycle(memrepo, act, clock=FixedClock(at(10, 11)))
    assert report.exit_code == ExitCode.OK, report.error
    doc = lessons.parse(memrepo.read("LESSONS.md"))
    found = {item.id: item for item in doc.lessons}
    assert [e.day.isoformat() for _, e in found[old].confirmations if e is not None] == ["2026-11-10"]
    assert [found[i].happened.day.isoformat() for i in ("L-0002", "L-0003")] == ["2026-11-10", "2026-11-09"]
    said = evidence(memrepo)
    assert "restored L-0002's Happened line to 2026-11-10 (cycle 2), by the runner's clock and count (it said " \
        "2099-01-01 (cycle 2))" in said
    assert f"restored {old}'s Confirmed line to 2026-11-10 (cycle 2)" in said and "L-0003" not in said


_BY_HAND = '''
cyc = os.environ["GITMEM_CYCLE"]
with open(os.path.join(root, "LOG.md"), "a") as h:
    h.write(f"\\n## {STAMP} · cycle {cyc} · built\\n- Task: forged\\n- Result: done\\n")
t = open(os.path.join(root, "NOW.md")).read()
title, _, rest = t.partition("\\n")
open(os.path.join(root, "NOW.md"), "w").write(f"{title}\\n\\n## {STAMP} · cycle {cyc}\\n- Did: x\\n- Human: nothing\\n"
                                              f"- Next: y\\n{rest}")
'''
_FAKED_ENV = '''
env = {**os.environ, "GITMEM_TIMESTAMP": STAMP, "TZ": "Pacific/Kiritimati"}
subprocess.run([GITMEM, "log", "add", "--task", "t", "--outcome", "built", "--result", "r"], check=True, cwd=root,
               env=env)
subprocess.run([GITMEM, "now", "add", "--did", "d", "--human", "nothing", "--next", "n"], check=True, cwd=root,
               env=env)
'''


@pytest.mark.parametrize("stamp", ["2099-01-01 00:00 UTC", "1999-12-31 23:59 UTC", "2099-01-01 00:00 +14:00"])
@pytest.mark.parametrize("how", ["by-hand", "faked-env"])
def test_a_command_agent_cannot_date_what_the_runner_commits(tmp_path: Path, memrepo: GitRepo, cli, stamp: str,
                                                             how: str) -> None:
    """The real runner and clock, the `command` backend: the committed LOG heading and NOW block carry the
    runner's clock, whatever the agent wrote or set in its own environment."""
    from tests.support.hostile import GITMEM, command_agent

    body = f"STAMP = {stamp!r}\nGITMEM = {str(GITMEM)!r}\n" + (_BY_HAND if how == "by-hand" else _FAKED_ENV)
    command_agent(tmp_path, memrepo, body, write_memory=False)
    before = datetime.now(UTC).replace(second=0, microsecond=0)
    result = cli(["cycle"], cwd=memrepo.path)
    after = datetime.now(UTC)
    assert result.code == ExitCode.OK, result.err
    entry = log.parse(memrepo.read("LOG.md")).entries[-1]
    block = now.parse(memrepo.read("NOW.md")).top
    assert block is not None
    for when in (entry.when.moment, block.when.moment):
        assert before <= when <= after, when
    assert stamp not in memrepo.read("NOW.md").split("<!--")[0]


@pytest.mark.parametrize("name", ["DECISIONS.md", "LESSONS.md", "RULES.md", "NOW.md", "LOG.md"])
def test_a_memory_file_left_as_bytes_that_are_not_utf8_is_put_back_whole(memrepo: GitRepo, name: str) -> None:
    """Read as empty text, DECISIONS was taken for emptied: its decisions were rebuilt without the text around
    them (the template's comment, the human's notes)."""
    memrepo.commit_files({"DECISIONS.md": memrepo.read("DECISIONS.md").replace(
        "## Pending\n", "## Pending\n\n### D-0001 · Ship it?\n- Asked: 2026-11-30 09:00 UTC (cycle 1)\n"
                        "- Recommendation: yes\n", 1)}, "a question")
    before = memrepo.read(name)

    def act(root: Path, memory, request) -> None:
        memory.add_log_entry(task="t", outcome="built", result="r", cycle=request.cycle)
        memory.add_now_block(did="d", human="nothing", next="n", cycle=request.cycle)
        path = root / name
        path.write_bytes(path.read_bytes() + "\n\u00e9t\u00e9 in Latin-1\n".encode("latin-1"))

    report = cycle(memrepo, act, finish=False)
    assert report.exit_code == ExitCode.OK, report.error
    after = memrepo.read(name)
    if name == "LOG.md":            # the agent's entry went with its bytes: the runner's own entry is on top
        assert after.startswith(before) and "Latin-1" not in after
    elif name == "NOW.md":          # the runner's block on top of the blocks the cycle found
        assert after.endswith(before.split("\n-->\n", 1)[1]) and "Latin-1" not in after
    else:
        assert after == before
    assert f"restored {name} as the cycle found it: the agent left bytes that are not UTF-8 text" in evidence(memrepo)
    assert [v for v in check_worktree(memrepo.ws()) if v.is_error] == []
