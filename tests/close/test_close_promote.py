"""Promotion gates and supersession: exactly two later, distinct, logged confirmations; caps never truncate."""
from __future__ import annotations

import pytest

from gitmem.close import day as days
from gitmem.close import gates
from gitmem.close.backing import backing_for, uncommitted
from gitmem.memory import lessons, rules
from tests.support.helpers import GitRepo
from tests.support.world import World, at, d, last_entry

RULE = "Run the whole test suite before every commit."


@pytest.fixture
def world(memrepo: GitRepo) -> World:
    return World(memrepo)


def proven(world: World) -> list[str]:
    return [r.render() for r in rules.parse(world.read("RULES.md")).proven]


def status(world: World, lesson_id: str) -> str:
    found = lessons.parse(world.read("LESSONS.md")).find(lesson_id)
    assert found is not None
    return found.status


def test_promotion_happens_at_two_confirmations_not_one(world: World) -> None:
    world.cycle(at(10, 9))
    lesson = world.lesson(at(10, 9, 30), "Tests first", rule=RULE)          # cycle 1
    world.cycle(at(10, 10))
    world.confirm(at(10, 10, 30), lesson)                                   # cycle 2
    one = world.close(d(10), at(10, 23))
    assert one.promoted == [] and proven(world) == [] and status(world, lesson) == "open"
    assert "Promotions" not in dict((f.key, f.value) for f in last_entry(world.read("LOG.md")).fields)
    world.cycle(at(11, 9))
    world.confirm(at(11, 9, 30), lesson)                                    # cycle 3
    before = world.git.head()
    two = world.close(d(11), at(11, 23))
    assert proven(world) == [f"- R-01 · {RULE} (from L-0001; cycles 2, 3)"]
    assert status(world, lesson) == "promoted R-01"
    assert two.promoted == [{"rule": "R-01", "lesson": "L-0001", "text": RULE, "cycles": [2, 3], "retired": []}]
    assert last_entry(world.read("LOG.md")).get("Promotions") == f"R-01 · {RULE} (from L-0001)"
    assert "promoted R-01 from L-0001" in world.git.repo.head.peel().message
    world.assert_valid(before)
    # Promoted once: the next close does not promote it again.
    world.cycle(at(12, 9))
    assert world.close(d(12), at(12, 23)).promoted == []


def write_lessons(world: World, body: str) -> None:
    """A LESSONS file as a human might commit it by hand (hooks skipped), to exercise the gates themselves."""
    world.git.commit_files({"LESSONS.md": "# LESSONS\n\n" + body}, "lessons by hand")


def lesson_with(happened: int, *confirmed: int) -> str:
    lines = ["## L-0001 · Tests first", f"- Happened: 2026-11-10 (cycle {happened}) — it broke",
             "- Why: no tests", "- Change: run them", f"- Rule: {RULE}"]
    lines += [f"- Confirmed: 2026-11-10 (cycle {c}) — held" for c in confirmed]
    return "\n".join([*lines, "- Status: open", ""])


@pytest.mark.parametrize("happened, confirmed, why", [
    (1, (2, 2), "cycle 2 confirms it more than once"),
    (3, (2, 4), "cycle 2 is not later than the lesson's cycle 3"),
    (3, (3, 4), "cycle 3 is not later than the lesson's cycle 3"),
    (1, (2, 3, 3), "cycle 3 confirms it more than once"),      # two good lines do not excuse a bad one
])
def test_no_promotion_from_repeated_or_earlier_cycles(world: World, happened: int, confirmed: tuple[int, ...],
                                                      why: str) -> None:
    for hour in (8, 9, 10, 11):
        world.cycle(at(10, hour))
    write_lessons(world, lesson_with(happened, *confirmed))
    # The gate itself says no (not a later write refusing the file), and the close says why.
    backs = backing_for(world.git.ws(), world.read("LOG.md"))
    found = gates.eligible(lessons.parse(world.read("LESSONS.md")), backs, 2)
    blocked = found.blocked
    assert found.candidates == [] and blocked == [f"L-0001 · Tests first: not eligible, {why}"]
    result = world.close(d(10), at(10, 23))
    assert result.promoted == [] and result.not_promoted == blocked
    assert proven(world) == [] and status(world, "L-0001") == "open"
    assert result.status == "closed"
    assert blocked[0] in (last_entry(world.read("LOG.md")).get("Promotions") or "")


def test_a_confirmation_citing_a_cycle_that_never_logged_does_not_count(world: World) -> None:
    world.cycle(at(10, 8))                                                  # cycle 1
    lesson = world.lesson(at(10, 8, 30), "Tests first", rule=RULE)
    world.cycle(at(10, 9))                                                  # cycle 2
    world.confirm(at(10, 9, 30), lesson)
    # A confirmation claiming cycle 3, which never logged: the LOG goes from 2 to 4.
    world.git.commit_files({"LESSONS.md": world.read("LESSONS.md").replace(
        "- Status: open", "- Confirmed: 2026-11-10 (cycle 3) — claimed\n- Status: open")}, "claim")
    claim = world.git.head()[:10]
    world.clock.moment = at(10, 10)
    world.memory.add_log_entry(task="t", outcome="built", result="r", cycle=4)
    world.commit("cycle 4", "LOG.md")
    result = world.close(d(10), at(10, 23))
    assert result.promoted == [] and status(world, lesson) == "open"
    assert result.not_promoted == ["L-0001 · Tests first: not eligible, 1 of 2 confirmations count"]
    unbacked = (f"L-0001 · Tests first: the confirmation of cycle 3: the commit that added it ({claim}) did not "
                "log cycle 3 (it does not count)")
    assert unbacked in result.problems
    # A later real cycle's confirmation counts; the claimed line still does not, and is not in the provenance.
    world.cycle(at(11, 9))                                                  # cycle 5
    world.confirm(at(11, 9, 30), lesson)
    result = world.close(d(11), at(11, 23))
    assert proven(world) == [f"- R-01 · {RULE} (from L-0001; cycles 2, 5)"]


def test_a_lesson_without_a_rule_line_is_listed_not_promoted(world: World) -> None:
    world.cycle(at(10, 8))
    lesson = world.lesson(at(10, 8, 30), "Vague lesson")
    for hour in (9, 10):
        world.cycle(at(10, hour))
        world.confirm(at(10, hour, 30), lesson)
    result = world.close(d(10), at(10, 23))
    assert result.promoted == [] and proven(world) == []
    assert result.not_promoted == ["L-0001 · Vague lesson: eligible, needs a rule line"]
    assert "L-0001 · Vague lesson: eligible, needs a rule line" in (last_entry(world.read("LOG.md")).get("Promotions")
                                                                   or "")


def human_rules(world: World, *lines: str) -> None:
    text = world.read("RULES.md").replace("## Retired", "\n".join(lines) + "\n\n## Retired")
    world.git.commit_files({"RULES.md": text}, "rules by the human")


def test_supersession_moves_the_old_rule_to_retired(world: World) -> None:
    human_rules(world, "- R-01 · Deploy on Fridays. (human)", "- R-02 · Keep commits small. (human)")
    world.cycle(at(10, 8))
    lesson = world.lesson(at(10, 8, 30), "Friday deploys broke weekends", rule="Never deploy on Fridays.",
                          supersedes="R-01")
    for hour in (9, 10):
        world.cycle(at(10, hour))
        world.confirm(at(10, hour, 30), lesson)
    before = world.git.head()
    result = world.close(d(10), at(11, 0, 30))
    doc = rules.parse(world.read("RULES.md"))
    assert [r.render() for r in doc.proven] == ["- R-02 · Keep commits small. (human)",
                                                "- R-03 · Never deploy on Fridays. (from L-0001; cycles 2, 3)"]
    assert [r.render() for r in doc.retired] == ["- R-01 · Deploy on Fridays. (superseded by R-03 on 2026-11-11)"]
    assert result.promoted[0]["retired"] == ["R-01"]
    assert "retired R-01 (superseded)" in (last_entry(world.read("LOG.md")).get("Promotions") or "")
    world.assert_valid(before)


def test_rules_cap_is_respected_and_flagged_with_proposed_retirements(world: World) -> None:
    world.git.commit_files({"gitmem.yaml": world.read("gitmem.yaml").replace("proven_rules_max: 30",
                                                                             "proven_rules_max: 2")}, "cap 2")
    human_rules(world, "- R-01 · First rule. (human)", "- R-02 · Second rule. (human)")
    world.cycle(at(10, 8))
    lesson = world.lesson(at(10, 8, 30), "One more", rule=RULE)
    replacing = world.lesson(at(10, 8, 40), "Better second", rule="A better second rule.", supersedes="R-02")
    for hour in (9, 10):
        world.cycle(at(10, hour))
        world.confirm(at(10, hour, 30), lesson)
        world.confirm(at(10, hour, 35), replacing)
    rules_before = world.read("RULES.md")
    before = world.git.head()
    result = world.close(d(10), at(10, 23))
    doc = rules.parse(world.read("RULES.md"))
    assert len(doc.proven) == 2                                     # never beyond the cap
    assert [r.id for r in doc.proven] == ["R-01", "R-03"]           # a supersession still fits
    assert status(world, lesson) == "open" and rules_before != world.read("RULES.md")
    assert "L-0001 · One more: eligible, but RULES is full (2/2 proven rules); not promoted" in result.not_promoted
    assert any(p.startswith("RULES is full (2 proven rules)") for p in result.problems)
    promoted = last_entry(world.read("LOG.md")).get("Promotions") or ""
    assert "to make room, retire or supersede: R-01 · First rule. (human)" in promoted
    world.assert_valid(before)


def test_at_most_max_promotions_per_close(world: World) -> None:
    ids = world.eligible_lessons(4)
    result = world.close(d(10), at(10, 23))
    assert [p["rule"] for p in result.promoted] == ["R-01", "R-02", "R-03"]
    assert result.not_promoted == ["L-0004 · Lesson 3: eligible, waiting (at most 3 promotions per close)"]
    assert status(world, ids[3]) == "open"


def test_live_recheck_skips_changed_or_vanished_lessons() -> None:
    text = "# LESSONS\n\n" + lesson_with(1, 2, 3)
    log_text = "# LOG\n\n" + "\n\n".join(f"## 2026-11-10 0{c}:00 UTC · cycle {c} · built\n- Task: t\n- Result: r"
                                          for c in (1, 2, 3)) + "\n"
    backs = uncommitted(log_text)
    found = gates.eligible(lessons.parse(text), backs, 2)
    candidates = found.candidates
    assert [c.cycles for c in candidates] == [(2, 3)] and found.blocked == []
    assert gates.recheck(candidates[0], lessons.parse(text), backs, 2) is None
    edited = lessons.parse(text.replace("(cycle 3) — held", "(cycle 3) — held, edited"))
    assert gates.recheck(candidates[0], edited, backs, 2) == "changed since the close read it"
    assert gates.recheck(candidates[0], lessons.parse("# LESSONS\n"), backs, 2) == "vanished from LESSONS"
    shorter = uncommitted(log_text.split("\n\n## 2026-11-10 03:00")[0])
    assert gates.recheck(candidates[0], lessons.parse(text), shorter, 2) == "1 of 2 confirmations count"


def test_close_reports_and_now_plans_never_count_as_cycles() -> None:
    """Only `cycle N` LOG headings count; a close entry that mentions cycles, or a NOW plan, confirms nothing."""
    log_text = ("# LOG\n\n## 2026-11-10 09:00 UTC · cycle 1 · built\n- Task: t\n- Result: r\n\n"
                "## 2026-11-10 23:00 UTC · close\n- Day: 2026-11-10\n- Done: cycle 2 · built · x\n"
                "  ## 2026-11-10 10:00 UTC · cycle 3 · built\n")
    assert days.cycle_numbers(log_text) == {1}


def test_cycle_numbers_cost_is_one_linear_pass() -> None:
    """10,000 entries (about 1 MB): the set of logged cycles comes from one regex pass, not a parse."""
    import time

    log_text = "# LOG\n\n" + "\n\n".join(
        f"## 2026-11-10 09:00 UTC · cycle {c} · built\n- Task: a task of some length\n- Result: a result line"
        for c in range(1, 10_001)) + "\n"
    started = time.perf_counter()
    found = days.cycle_numbers(log_text)
    elapsed = time.perf_counter() - started
    assert found == set(range(1, 10_001))
    assert elapsed < 0.5, elapsed


def test_close_permissions_allow_adding_and_retiring_rules_only() -> None:
    from gitmem.close.commit_guard import lesson_changes, rule_changes

    before = "# RULES\n\n## Proven rules\n- R-01 · Old rule. (human)\n- R-02 · Kept rule. (human)\n\n## Retired\n"
    promoted = ("# RULES\n\n## Proven rules\n- R-02 · Kept rule. (human)\n"
                "- R-03 · New rule. (from L-0001; cycles 2, 3)\n\n## Retired\n"
                "- R-01 · Old rule. (superseded by R-03 on 2026-11-10)\n")
    assert rule_changes("RULES.md", before, promoted) == []
    edited = before.replace("Kept rule.", "Kept rule, reworded.")
    assert rule_changes("RULES.md", before, edited) == ["RULES.md:5: close permission: R-02 was changed or removed"]
    human = before.replace("## Retired", "- R-03 · Sneaked in. (human)\n\n## Retired")
    assert rule_changes("RULES.md", before, human) == [
        "RULES.md:7: close permission: R-03 is new but not a learned proven rule"]
    lesson = ("# LESSONS\n\n## L-0001 · t\n- Happened: 2026-11-10 (cycle 1) — x\n- Why: y\n- Change: z\n"
              "- Status: open\n")
    assert lesson_changes("LESSONS.md", lesson, lesson.replace("open", "promoted R-03")) == []
    assert lesson_changes("LESSONS.md", lesson, lesson.replace("- Why: y", "- Why: rewritten")) == [
        "LESSONS.md:3: close permission: L-0001 was edited beyond its Status"]


def test_rules_filled_by_this_very_close_still_get_a_proposed_retirement(world: World) -> None:
    """The cap is reached by this close's own promotions: the lesson left waiting is told which rule to retire
    (the oldest learned rule in force once the close is done), never pointed at a proposal that is not there."""
    world.git.commit_files({"gitmem.yaml": world.read("gitmem.yaml").replace("proven_rules_max: 30",
                                                                             "proven_rules_max: 2")}, "cap 2")
    ids = world.eligible_lessons(3)
    before = world.git.head()
    result = world.close(d(10), at(10, 23))
    assert [p["rule"] for p in result.promoted] == ["R-01", "R-02"]
    assert f"{ids[2]} · Lesson 2: eligible, but RULES is full (2/2 proven rules); not promoted" in result.not_promoted
    assert any(p.startswith("RULES is full (2 proven rules)") for p in result.problems)
    promoted = last_entry(world.read("LOG.md")).get("Promotions") or ""
    assert f"to make room, retire or supersede: R-01 · Rule number 0. (from {ids[0]}; cycles" in promoted, promoted
    assert "the oldest learned rule still in force" in promoted
    world.assert_valid(before)


def test_a_lesson_superseding_a_rule_this_close_promotes_waits_for_the_next_close(world: World) -> None:
    """L-0002 names R-01, the rule L-0001 becomes in this very close. Retiring a rule the moment it is added fails
    the close's own permission check (R-01 new but not a proven rule), and every later close planned the same:
    the close was stuck. L-0002 waits; the next close, with R-01 in force, promotes it and retires R-01."""
    world.cycle(at(10, 8))
    first = world.lesson(at(10, 8, 10), "First", rule="Rule one.")
    second = world.lesson(at(10, 8, 20), "Second", rule="Rule two.", supersedes="R-01")
    for hour in (9, 10):
        world.cycle(at(10, hour))
        world.confirm(at(10, hour, 10), first)
        world.confirm(at(10, hour, 20), second)
    before = world.git.head()
    closed = world.close(d(10), at(10, 23))
    assert [p["rule"] for p in closed.promoted] == ["R-01"] and status(world, second) == "open"
    assert any(second in note and "R-01" in note and "next close" in note for note in closed.not_promoted)
    assert proven(world) == ["- R-01 · Rule one. (from L-0001; cycles 2, 3)"]
    world.assert_valid(before)
    world.cycle(at(11, 9))
    again = world.close(d(11), at(11, 23))
    assert again.promoted == [{"rule": "R-02", "lesson": second, "text": "Rule two.", "cycles": [2, 3],
                               "retired": ["R-01"]}]
    assert [r.render() for r in rules.parse(world.read("RULES.md")).retired] == [
        "- R-01 · Rule one. (superseded by R-02 on 2026-11-11)"]
    world.assert_valid(before)
