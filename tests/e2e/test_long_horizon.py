"""A month of an agent (tests/support/month.py), with every point of the memory-over-time issue a named assertion.

The month runs once per module (about a minute): 240 cycles with --push through the real runner, 28 close
runs, a human in a second clone. Each test below reads what the month recorded and the repository it left.
"""
from __future__ import annotations

import json
import re
from collections.abc import Iterator

import pytest

from gitmem import gitio
from gitmem.checks.check_and_verify import check_worktree, verify_range
from gitmem.close import run_close
from gitmem.close.backing import Backing
from gitmem.memory import decisions, lessons, log, now, rules, volumes
from gitmem.workspace import Workspace
from tests.support.helpers import HUMAN, isolate_git_env, make_repo
from tests.support.month import DAYS, LATE_CLOSES, MISSED_CLOSES, REPEATED_CLOSES, SLOTS, CycleSeen, Month, at, on

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def month(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Month]:
    with pytest.MonkeyPatch.context() as patch:
        isolate_git_env(patch)
        tmp = tmp_path_factory.mktemp("month")
        yield Month(tmp, make_repo(tmp / "runner"), patch).run()


def ws(month: Month) -> Workspace:
    return Workspace.at(month.repo.path)


def final_lessons(month: Month) -> lessons.LessonsDoc:
    return lessons.parse(month.repo.read("LESSONS.md"))


def close_entries(month: Month) -> list[log.LogEntry]:
    return [e for e in log.parse(month.repo.read("LOG.md")).entries if e.cycle is None]


def entry_for(month: Month, day: int) -> log.LogEntry:
    return next(e for e in close_entries(month) if e.get("Day") == on(day).isoformat())


def provenance_cycles(rule: rules.Rule) -> list[int]:
    found = re.search(r"cycles ([\d, ]+)", rule.provenance)
    return [int(n) for n in found.group(1).split(",")] if found else []


def test_the_month_ran_every_cycle_and_every_close(month: Month) -> None:
    assert len(month.cycles) == DAYS * 8
    assert [day for day, _ in month.closes] == [d for d in range(1, DAYS + 1) if d not in MISSED_CLOSES]
    assert all(result.status == "closed" and result.push and result.push.status == "pushed"
               for _, result in month.closes), [r.push for _, r in month.closes]
    # A cycle number is a position: the human's session entries and amendments took numbers too, and a cycle
    # that landed after a session took the next one.
    humans = len(month.sessions) + len(month.amendments)
    numbers = [e.cycle for e in log.live(log.parse(month.repo.read("LOG.md")).entries) if e.cycle is not None]
    assert numbers == list(range(1, DAYS * 8 + humans + 1))
    landed = [c.report.cycle if c.report is not None else c.cycle for c in month.cycles]
    assert landed == sorted(landed) and len(set(landed)) == len(landed)
    assert set(landed) | set(month.sessions) | set(month.amendments) == set(numbers)


# -- P1 -----------------------------------------------------------------------------------------------------------

def test_p1_every_lesson_and_confirmation_records_the_cycle_that_wrote_it(month: Month) -> None:
    doc = final_lessons(month)
    for lesson_id, written in month.wrote.items():
        item = doc.find(lesson_id)
        assert item is not None and item.happened is not None
        assert [("happened", item.happened.cycle)] == [w for w in written if w[0] == "happened"]
        mine = [event.cycle for line, event in item.confirmations if event is not None
                and "noted late" not in line.value]
        assert mine == [cycle for kind, cycle in written if kind == "confirmed"], lesson_id


def test_p1_a_lesson_written_after_the_log_entry_is_confirmed_in_the_next_cycle(month: Month) -> None:
    read_errors = month.wrote[month.ids["Read the error first"]]
    assert read_errors[:2] == [("happened", 17), ("confirmed", 18)]      # written after cycle 17's LOG entry


def test_p1_promoted_rules_cite_exactly_the_cycles_that_confirmed_them(month: Month) -> None:
    promoted = [item for _, result in month.closes for item in result.promoted]
    assert [p["rule"] for p in promoted] == ["R-01", "R-02", "R-03", "R-04"]
    doc = rules.parse(month.repo.read("RULES.md"))
    for item in promoted:
        confirmed = [cycle for kind, cycle in month.wrote[item["lesson"]] if kind == "confirmed"]
        assert item["cycles"] == confirmed[:2], item
        live = doc.find(item["rule"])
        assert live is not None and (live.section == rules.RETIRED or provenance_cycles(live) == confirmed[:2])


def test_p1_confirming_twice_in_one_cycle_is_refused_with_the_reason(month: Month) -> None:
    again = [c for c in month.calls if c.argv[:2] == ["lesson", "confirm"] and "and again" in c.argv]
    assert len(again) == 1 and again[0].code != 0
    assert "cycle 6" in again[0].err and "gitmem:" in again[0].err


# -- P2 -----------------------------------------------------------------------------------------------------------

def test_p2_the_confirmation_made_at_23_46_never_counts_and_the_close_says_so(month: Month) -> None:
    small = final_lessons(month).find(month.ids["Small pull requests"])
    assert small is not None and month.late_confirmation is not None
    late = [(line, event) for line, event in small.confirmations if "noted late" in line.value]
    assert len(late) == 1 and late[0][1] is not None
    late_cycle = late[0][1].cycle
    verdict = Backing(ws(month))(small, late[0][0])
    assert not verdict.ok and verdict.commit == month.late_confirmation
    day4 = entry_for(month, 4).get("Problems") or ""
    assert (f"the confirmation of cycle {late_cycle}: the commit that added it ({month.late_confirmation[:10]}) "
            f"did not log cycle {late_cycle} (it does not count)") in day4
    assert all(small.id != r.lesson for r in rules.parse(month.repo.read("RULES.md")).all)   # RULES stayed full


def test_p2_every_confirmation_the_agent_wrote_in_a_cycle_is_backed(month: Month) -> None:
    backing = Backing(ws(month))
    doc = final_lessons(month)
    for lesson_id in month.wrote:
        item = doc.find(lesson_id)
        assert item is not None
        verdicts = [backing(item, line).ok for line, _ in item.confirmations if "noted late" not in line.value]
        assert verdicts and all(verdicts), lesson_id


def test_p2_the_close_never_confirms(month: Month) -> None:
    doc = final_lessons(month)
    written = sum(kind == "confirmed" for entries in month.wrote.values() for kind, _ in entries)
    assert sum(len(item.confirmations) for item in doc.lessons) == written + 1        # + the late one


# -- P3 -----------------------------------------------------------------------------------------------------------

def test_p3_every_answer_is_newly_resolved_in_exactly_one_landed_cycle(month: Month) -> None:
    assert set(month.answers) == {"D-0001", "D-0003", "D-0004", "D-0005", "D-0006", "D-0007"}
    for decision_id, when in month.answers.items():
        landed = [c for c in month.cycles if decision_id in c.shown and c.landed]
        assert len(landed) == 1, (decision_id, [c.cycle for c in landed])
        first_after = next(c for c in month.cycles if at(c.day, SLOTS[c.slot], 17) >= when and c.landed)
        assert landed[0].cycle == first_after.cycle, decision_id


def test_p3_the_answer_pushed_while_a_cycle_ran_reached_the_next_cycle(month: Month) -> None:
    during = next(c for c in month.cycles if (c.day, c.slot) == (9, 2))
    after = next(c for c in month.cycles if (c.day, c.slot) == (9, 3))
    assert during.shown == [] and after.shown == ["D-0001"]


def test_p3_the_answer_committed_in_the_minute_its_cycle_started_was_shown_once(month: Month) -> None:
    assert [c.cycle for c in month.cycles if "D-0003" in c.shown] == [
        next(c.cycle for c in month.cycles if (c.day, c.slot) == (11, 3))]


def test_p3_an_answer_pr_open_while_the_agent_asked_merged_and_was_shown_once(month: Month) -> None:
    """D-0004 answered in place on a branch on day 15; the agent asked D-0005 and D-0006 on main meanwhile; the
    pull request merged with git's own merge (no driver, no conflict) and the next cycle acted on it."""
    merged = next(c for c in month.cycles if (c.day, c.slot) == (16, 1))
    assert [c.cycle for c in month.cycles if "D-0004" in c.shown] == [merged.cycle]
    final = decisions.parse(month.repo.read("DECISIONS.md"))
    item = final.find("D-0004")
    assert item is not None and item.is_answered and item.get("Answer") == "yes, rename it"


def test_p3_a_salvaged_cycle_did_not_use_up_its_answer(month: Month) -> None:
    crashed = next(c for c in month.cycles if (c.day, c.slot) == (17, 3))
    assert not crashed.landed and crashed.shown == ["D-0006"]
    assert next(c for c in month.cycles if (c.day, c.slot) == (17, 4)).shown == ["D-0006"]


# -- P4 -----------------------------------------------------------------------------------------------------------

def test_p4_the_answer_committed_in_the_runners_checkout_was_kept_reported_and_not_taken(month: Month) -> None:
    cycle = next(c for c in month.cycles if (c.day, c.slot) == (15, 2))
    assert cycle.report is not None and cycle.report.local_branch == f"gitmem/local/cycle-{cycle.cycle}"
    branch = cycle.report.local_branch
    kept = gitio.resolve_revision(gitio.open_repo(month.origin), branch)
    commit = month.repo.repo.get(kept)
    assert (commit.author.name, commit.author.email) == HUMAN
    assert "D-0005" in [d.id for d in decisions.parse(
        gitio.file_at(month.repo.handle, kept, "DECISIONS.md").decode()).settled]
    # Not on main as the human's answer: that cycle's commit still has D-0005 pending...
    landed = cycle.report.commit
    assert landed is not None
    at_cycle = decisions.parse(gitio.file_at(month.repo.handle, landed, "DECISIONS.md").decode())
    assert "D-0005" in [d.id for d in at_cycle.awaiting]
    # ...the runner and the close said where it is, and the answer arrived later through the remote.
    assert f"kept on branch {branch}" in (entry_for(month, 15).get("Problems") or "")
    final = decisions.parse(month.repo.read("DECISIONS.md")).find("D-0005")
    assert final is not None and final.id in [d.id for d in decisions.parse(month.repo.read("DECISIONS.md")).settled]


# -- P5 -----------------------------------------------------------------------------------------------------------

def expected_streaks(month: Month) -> list[tuple[int, int]]:
    runs, current = [], []
    for entry in log.parse(month.repo.read("LOG.md")).entries:
        if entry.cycle is None:
            continue
        if entry.outcome == "no-build" and entry.get(log.SALVAGED) is None:
            current.append(entry.cycle)
            continue
        if len(current) >= 3:
            runs.append((current[0], current[-1]))
        current = [] if entry.get(log.SALVAGED) is None else current
    return runs


def test_p5_every_streak_of_three_or_more_is_written_up_once_with_cause_fix_and_lesson(month: Month) -> None:
    streaks = expected_streaks(month)
    assert streaks == [(36, 38), (55, 58), (91, 93), (158, 168)]
    written = [line for e in close_entries(month) for line in (e.get("Problems") or "").splitlines()
               if line.startswith("Rule 0:")]
    for first, last in streaks:
        final = [line for line in written if line.startswith(f"Rule 0: cycles {first}–{last} ")]
        assert len(final) == 1 and "Cause: " in final[0] and "Fix: " in final[0], (first, last)
        titled = [i for i in final_lessons(month).lessons if i.title == f"Rule 0: no-build streak from cycle {first}"]
        assert len(titled) == 1 and titled[0].get("Rule"), first
    assert len(written) == len(streaks) + 1                    # + the long streak's first write-up on day 20
    assert "the streak continues" in next(line for line in written if line.startswith("Rule 0: cycles 158–168"))


def test_p5_the_streak_across_midnight_and_the_one_on_a_missed_day_are_reported(month: Month) -> None:
    assert "Rule 0: cycles 55–58 (4 in a row" in (entry_for(month, 8).get("Problems") or "")
    assert "Rule 0: cycles 91–93 (3 in a row" in (entry_for(month, 12).get("Problems") or "")


# -- P6 -----------------------------------------------------------------------------------------------------------

def test_p6_every_day_is_closed_once_in_order_each_as_of_its_end(month: Month) -> None:
    assert [e.get("Day") for e in close_entries(month)] == [on(d).isoformat() for d in range(1, DAYS + 1)]
    day12 = entry_for(month, 12)
    assert day12.get("Waiting") == "D-0002 · Which licence? (8d)"             # as of 24:00 on the 12th
    assert "see the close of a later day" in (day12.get("Plan") or "")
    caught = dict(month.closes)[14]
    assert caught.days == ["2026-11-12", "2026-11-13", "2026-11-14"]


def test_p6_a_close_run_11_hours_late_or_twice_closes_its_own_day_and_each_cycle_is_in_one_report(
        month: Month) -> None:
    (late_day, _), = LATE_CLOSES.items()
    late = dict(month.closes)[late_day]
    assert late.days == [on(late_day).isoformat()]             # not the morning it ran in
    assert late.message.startswith(f"closed {on(late_day).isoformat()}: {len(SLOTS)} cycles ")
    after = dict(month.closes)[late_day + 1]
    assert after.report["Cycles"].startswith(f"{len(SLOTS)} cycles ")     # the morning's cycles are the next day's
    (twice, _), = REPEATED_CLOSES.items()
    assert [(day, result.status) for day, result in month.repeated] == [(twice, "already-closed")]
    counted = [int(match.group(1)) for e in close_entries(month)
               if (match := re.match(r"(\d+) cycles? ", e.get("Cycles") or ""))]
    assert sum(counted) == len(month.cycles) + len(month.sessions) + len(month.amendments)


def test_p6_only_the_latest_plan_goes_on_top_of_now(month: Month) -> None:
    blocks = now.parse(month.repo.read("NOW.md")).blocks
    plans = [b.heading().rsplit(" · ", 1)[-1] for b in blocks if b.cycle is None]
    expected = [f"plan for {on(d + 1).isoformat()}" for d in range(DAYS, 0, -1) if d not in MISSED_CLOSES]
    # NOW keeps its newest blocks (rules 6): the plans it holds are the newest ones, each once, in order.
    assert len(blocks) == volumes.NOW_BLOCKS_KEPT and len(plans) > 1
    assert plans == expected[:len(plans)]


def test_p6_a_second_close_changes_nothing(month: Month) -> None:
    head = month.repo.head()
    month.clock.moment = at(DAYS, 23, 50)
    again = run_close(ws(month), clock=month.clock)
    assert again.status == "already-closed" and month.repo.head() == head


# -- P7 -----------------------------------------------------------------------------------------------------------

def test_p7_the_plan_skips_the_item_a_pending_decision_blocks_and_follows_a_running_streak(month: Month) -> None:
    judged = []
    for day, result in month.closes:
        first = result.plan.split(" — why:")[0]
        if 2 <= day <= 8:
            assert first == "Search command", (day, result.plan)
            judged.append(day)
        if day in (20, 21):
            assert "D-0007" in first and "cycles 158–" in result.plan, result.plan
            judged.append(day)
    assert judged == [2, 3, 4, 5, 6, 7, 8, 20, 21], "every day the plan is judged on was closed"


def test_p7_rule0_hints_name_only_the_decision_the_agent_named(month: Month) -> None:
    named = others = 0
    for e in close_entries(month):
        for line in (e.get("Problems") or "").splitlines():
            if line.startswith("Rule 0: cycles 158"):
                assert "answer D-0007" in line and "D-0002" not in line and "D-0004" not in line
                named += 1
            elif line.startswith("Rule 0:"):
                assert not re.search(r"Fix: .*D-\d{4}", line), line
                others += 1
    assert named >= 1 and others >= 1, "both kinds of Rule 0 problem were written up and judged"


def test_p7_standing_conditions_are_written_up_when_they_start_then_weekly_stale_decisions_always(
        month: Month) -> None:
    seen: dict[str, list[int]] = {}
    for e in close_entries(month):
        day = int((e.get("Day") or "0000-00-00")[-2:])
        for line in (e.get("Problems") or "").splitlines():
            for kind in ("RULES is full", "D-0002 · Which licence?", "(it does not count)"):
                if kind in line:
                    seen.setdefault(kind, []).append(day)
    assert seen["RULES is full"] == [8, 15, 22, 29]
    # A stale decision is no standing condition: it is a problem at every close while it waits (issue 23).
    closed = [int((e.get("Day") or "0000-00-00")[-2:]) for e in close_entries(month)]
    assert seen["D-0002 · Which licence?"] == [day for day in closed if day >= 8] and len(closed) >= 25
    assert seen["(it does not count)"] == [4, 11, 18, 25]
    waiting = [int((e.get("Day") or "")[-2:]) for e in close_entries(month)
               if "Changelog first: eligible, but RULES is full" in (e.get("Promotions") or "")]
    assert waiting == [11, 18, 25]


def test_p7_proposals_never_name_a_retired_rule_and_give_a_reason(month: Month) -> None:
    proposals = after_retirement = 0
    for e in close_entries(month):
        promotions = e.get("Promotions") or ""
        for line in promotions.splitlines():
            if line.startswith("to make room"):
                assert "the oldest learned rule still in force" in line
                proposals += 1
                if (e.get("Day") or "") >= "2026-11-19":
                    assert "R-01" not in line, line
                    after_retirement += 1
    assert proposals >= 1 and after_retirement >= 1, "a proposal was made after R-01 was retired, and judged"


def test_p7_the_same_age_everywhere(month: Month, cli) -> None:
    month.clock.moment = at(DAYS, 23, 30)
    pending = json.loads(cli(["pending", "--json"], cwd=month.repo.path).out)
    status = json.loads(cli(["status", "--json"], cwd=month.repo.path).out)
    waiting = entry_for(month, DAYS).get("Waiting") or ""
    for item in pending:
        assert f"{item['id']} · {item['title']} ({item['age']})" in waiting
    assert [i["age"] for i in status["pending"]] == [i["age"] for i in pending]


# -- the figures, and what must hold over the whole month ------------------------------------------------------

def test_the_context_stays_bounded(month: Month) -> None:
    first = [c.tokens for c in month.cycles if c.day == 1]
    last = [c.tokens for c in month.cycles if c.day == DAYS]
    promoted = sum(len(result.promoted) for _, result in month.closes)
    print(f"\ncontext tokens: day 1 max {max(first)}, day {DAYS} max {max(last)}; "
          f"promotions {promoted}; Rule 0 streaks {len(expected_streaks(month))}")
    assert max(c.tokens for c in month.cycles) < 2 * max(first) + 1000
    assert promoted == 4


def test_verify_passes_over_the_whole_history_and_the_tree_is_clean(month: Month) -> None:
    workspace = ws(month)
    root = [c for c in month.repo.repo.walk(month.repo.repo.head.target)][-1]
    checked = verify_range(workspace, str(root.id), "HEAD")
    assert [v for v in checked.violations if v.is_error] == []
    # The one warning: the cycle after the laptop 3 h fast is dated before that session's entry (GM310).
    assert [(v.code, v.line) for v in checked.violations if not v.is_error] == [
        ("GM310", next(e.line for e in log.parse(month.repo.read("LOG.md")).entries
                       if e.cycle == (month.fast_session or 0) + 1))]
    assert [v for v in check_worktree(workspace) if v.is_error] == []
    assert gitio.dirty_files(workspace.repo) == []


# -- P8: real time and two writers ----------------------------------------------------------------------------

def _seen(month: Month, day: int, slot: int) -> CycleSeen:
    return next(c for c in month.cycles if (c.day, c.slot) == (day, slot))


def test_p8_a_laptop_clock_3h_fast_never_stops_a_scheduled_cycle(month: Month) -> None:
    entries = {e.cycle: e for e in log.parse(month.repo.read("LOG.md")).entries if e.cycle is not None}
    assert month.fast_session is not None
    fast = entries[month.fast_session]
    after = _seen(month, 23, 2)
    assert after.landed and after.report is not None and after.report.push_status == "pushed", after.report
    mine = entries[after.report.cycle]
    assert mine.when.moment < fast.when.moment                    # the runner dated its entry by its own clock
    assert mine.when.moment >= at(23, 6, 17)
    assert all(c.landed for c in month.cycles if c.day == 23)


def test_p8_a_session_pushed_while_a_cycle_ran_took_the_number_and_the_cycle_the_next(month: Month) -> None:
    raced = month.raced
    assert raced is not None and raced.landed and raced.report is not None
    assert raced.report.cycle == raced.cycle + 1 and raced.cycle in month.sessions
    entries = {e.cycle: e for e in log.parse(month.repo.read("LOG.md")).entries if e.cycle is not None}
    assert entries[raced.cycle].get("Task") == "Answer a user's question, in a session"
    assert entries[raced.report.cycle].get("Task") == "Docs site"
    top = now.parse(month.repo.read("NOW.md")).blocks
    assert all(b.cycle != raced.cycle for b in top)                # the cycle's NOW block took its new number too


def test_p8_a_malformed_entry_on_main_stops_the_cycle_until_it_is_amended(month: Month) -> None:
    assert month.refused is not None and month.refused.exit_code == 3
    assert f"LOG.md:{month.malformed_line}" in str(month.refused) + "".join(
        str(v) for v in month.refused.violations)
    assert "gitmem log amend" in str(month.refused) + "".join(v.hint for v in month.refused.violations)
    assert all(c.landed for c in month.cycles if c.day == DAYS)
    amended = log.parse(month.repo.read("LOG.md")).entries
    assert any(e.amends == month.malformed_line for e in amended)
