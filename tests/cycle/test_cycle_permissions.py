"""gitmem.cycle.permissions: each forbidden edit is undone, the rest of the agent's work in the file is kept."""
from __future__ import annotations

from gitmem.cycle.permissions import enforce
from gitmem.memory import decisions, lessons, log, rules

DECISIONS = """# DECISIONS

## Pending

### D-0002 · Open question
- Asked: 2026-11-29 09:00 UTC (cycle 3)
- Recommendation: wait

## Resolved

### D-0001 · Old question
- Asked: 2026-11-28 09:00 UTC (cycle 1)
- Recommendation: yes
- Answer: yes
- Answered: 2026-11-28 10:00 UTC by Dana Human <dana@example.com>
"""

RULES = """# RULES

## Who I am
- Name: demo

## Proven rules
- R-01 · Ship small things (human)

## Retired
- R-00 · Old rule (retired on 2026-01-01: obsolete)
"""

LESSONS = """# LESSONS

## L-0001 · First
- Happened: 2026-11-28 (cycle 1) — a
- Why: b
- Change: c
- Status: open

## L-0002 · Second
- Happened: 2026-11-28 (cycle 2) — a
- Why: b
- Change: c
- Status: open
"""

LOG = "# LOG\n\n## 2026-11-29 09:00 UTC · cycle 3 · built\n- Task: t\n- Result: r\n"
NEW_ENTRY = "\n## 2026-11-29 12:00 UTC · cycle 4 · built\n- Task: new\n- Result: done\n"


def test_nothing_forbidden_changes_nothing() -> None:
    asked = DECISIONS.replace("## Resolved", "### D-0003 · New question\n- Asked: 2026-11-29 12:00 UTC (cycle 4)\n"
                                            "- Recommendation: go\n\n## Resolved")
    old = {"decisions": DECISIONS, "rules": RULES, "lessons": LESSONS, "log": LOG}
    new = {"decisions": asked, "rules": RULES.replace("- Name: demo", "- Name: demo bot"),
           "lessons": LESSONS + "\n## L-0003 · Third\n- Happened: 2026-11-29 (cycle 4) — a\n- Why: b\n- Change: c\n"
                                "- Status: open\n",
           "log": LOG + NEW_ENTRY}
    result = enforce(old, new)
    assert (result.texts, result.notes) == ({}, [])


def test_resolving_and_rewriting_decisions_is_undone_but_new_questions_stay() -> None:
    doc = decisions.parse(DECISIONS)
    from gitmem.memory.timestamps import parse_timestamp

    resolved = decisions.move_to_resolved(doc, "D-0002", answer="no", answered=parse_timestamp("2026-11-29 12:00 UTC"),
                                 name="gitmem-agent", email="agent@gitmem.invalid")
    text = decisions.render(resolved).replace("- Answer: yes", "- Answer: no!")
    text = text.replace("## Resolved", "### D-0003 · New question\n- Asked: 2026-11-29 12:00 UTC (cycle 4)\n"
                                       "- Recommendation: go\n\n## Resolved")
    result = enforce({"decisions": DECISIONS}, {"decisions": text})
    fixed = decisions.parse(result.texts["decisions"])
    assert [d.id for d in fixed.pending] == ["D-0003", "D-0002"]   # new questions on top (rules 4)
    assert [d.content() for d in fixed.resolved] == [d.content() for d in doc.resolved]
    assert result.notes == ["reverted the agent's resolution of D-0002 (only humans answer decisions)",
                            "restored resolved decision D-0001 as the human answered it"]


def test_a_decision_invented_as_resolved_goes_back_to_pending_without_its_answer() -> None:
    text = DECISIONS + ("\n### D-0003 · Invented\n- Asked: 2026-11-29 12:00 UTC (cycle 4)\n- Recommendation: go\n"
                        "- Answer: go\n- Answered: 2026-11-29 12:01 UTC by Someone <s@example.com>\n")
    result = enforce({"decisions": DECISIONS}, {"decisions": text})
    fixed = decisions.parse(result.texts["decisions"])
    moved = fixed.find("D-0003")
    assert moved.section == "Pending" and moved.get("Answer") is None and moved.get("Recommendation") == "go"
    assert "moved D-0003 back to Pending" in result.notes[0]


def test_rule_sections_come_back_byte_for_byte_and_free_text_stays() -> None:
    edited = (RULES.replace("- Name: demo", "- Name: renamed")
              .replace("- R-01 · Ship small things (human)\n",
                       "- R-01 · Ship anything (human)\n- R-02 · Self-made (human)\n")
              .replace("- R-00 · Old rule (retired on 2026-01-01: obsolete)\n", ""))
    result = enforce({"rules": RULES}, {"rules": edited})
    fixed = result.texts["rules"]
    assert "- Name: renamed" in fixed
    assert fixed.endswith(RULES[RULES.index("## Proven rules"):])
    assert [r.id for r in rules.parse(fixed).all] == ["R-01", "R-00"]
    assert result.notes == ["reverted edits to proven/retired rules R-00, R-01, R-02 in RULES (only the daily "
                            "close changes them)"]


def test_log_rewrites_are_undone_and_new_entries_kept() -> None:
    rewritten = LOG.replace("- Result: r", "- Result: better") + NEW_ENTRY
    result = enforce({"log": LOG}, {"log": rewritten})
    fixed = result.texts["log"]
    assert fixed.startswith(LOG)
    assert [e.cycle for e in log.parse(fixed).entries] == [3, 4]
    assert result.notes == ["reverted a rewrite of LOG at line 5 (LOG is append-only); kept 1 new entry"]


def test_a_line_added_to_the_last_log_entry_is_undone_as_check_refuses_it() -> None:
    result = enforce({"log": LOG}, {"log": LOG + "- Learned: more\n" + NEW_ENTRY})
    assert result.texts["log"] == LOG + NEW_ENTRY
    assert result.notes == ["reverted text added to an old LOG entry at line 6 (LOG is append-only); kept 1 new "
                            "entry"]


def test_a_log_without_its_last_line_end_takes_an_entry_but_no_more_text_on_that_line() -> None:
    cut = LOG.rstrip("\n")
    assert enforce({"log": cut}, {"log": cut + "\n" + NEW_ENTRY}).notes == []
    result = enforce({"log": cut}, {"log": cut + " and more" + "\n" + NEW_ENTRY})
    assert result.texts["log"] == LOG + NEW_ENTRY
    assert result.notes == ["reverted text added to an old LOG entry at line 5 (LOG is append-only); kept 1 new "
                            "entry"]


def test_deleted_lessons_and_files_come_back() -> None:
    only_second = LESSONS[:LESSONS.index("## L-0001")] + LESSONS[LESSONS.index("## L-0002"):]
    result = enforce({"lessons": LESSONS, "log": LOG}, {"lessons": only_second, "log": None})
    assert [item.id for item in lessons.parse(result.texts["lessons"]).lessons] == ["L-0001", "L-0002"]
    assert result.texts["log"] == LOG
    assert result.notes == ["restored LOG file the agent deleted",
                            "restored lesson L-0001 (lessons are never deleted; retire them instead)"]


def test_an_agent_answer_in_place_is_reverted_and_a_human_one_restored() -> None:
    """Rules 4: the agent may not answer in place either, nor touch a human's answer in place."""
    from gitmem.memory.timestamps import parse_timestamp

    doc = decisions.parse(DECISIONS)
    human, _ = decisions.answer_in_place(doc, "D-0002", answer="yes, on Monday", answered=parse_timestamp(
        "2026-11-29 12:00 UTC"), name="Ada Human", email="ada@example.com")
    before = decisions.render(human)
    asked = decisions.make_decision("D-0003", "New?", asked=parse_timestamp("2026-11-29 13:00 UTC"), cycle=4,
                                    context=None, options=None, recommendation="go")
    forged, _ = decisions.answer_in_place(decisions.with_decision(human, asked), "D-0003", answer="go",
                                          answered=parse_timestamp("2026-11-29 13:01 UTC"), name="Ada Human",
                                          email="ada@example.com")
    text = decisions.render(forged).replace("- Answer: yes, on Monday", "- Answer: no")
    result = enforce({"decisions": before}, {"decisions": text})
    fixed = decisions.parse(result.texts["decisions"])
    assert [d.id for d in fixed.pending] == ["D-0003", "D-0002"]
    assert fixed.find("D-0003").get("Answer") is None and not fixed.find("D-0003").is_answered
    assert fixed.find("D-0002").content() == human.find("D-0002").content()
    assert result.notes == ["restored the human's answer to D-0002 as written",
                            "took the answer out of D-0003: the agent asked it answered (only humans answer)"]


CONFIRMED = LESSONS.replace("- Change: c\n- Status: open\n\n## L-0002",
                            "- Change: c\n- Confirmed: 2026-11-28 (cycle 2) — held\n- Status: open\n\n## L-0002")


def test_a_lessons_history_only_grows_and_its_new_confirmations_are_kept() -> None:
    """A cycle that edited or dropped a lesson's Happened or Confirmed lines committed the rewrite: the lines the
    close counts are history."""
    edited = CONFIRMED.replace("- Confirmed: 2026-11-28 (cycle 2) — held\n",
                               "- Confirmed: 2026-11-29 (cycle 4) — new\n").replace("(cycle 1) — a", "(cycle 3) — a")
    result = enforce({"lessons": CONFIRMED}, {"lessons": edited})
    fixed = lessons.parse(result.texts["lessons"]).find("L-0001")
    assert fixed is not None and fixed.happened is not None and fixed.happened.cycle == 1
    assert [(f.value) for f, _ in fixed.confirmations] == ["2026-11-28 (cycle 2) — held", "2026-11-29 (cycle 4) — new"]
    assert result.notes == ["restored L-0001's Happened and Confirmed lines, which the agent edited or dropped (a "
                            "lesson's history only grows); its new Confirmed lines are kept"]
    # Appending one, or editing the lesson's other fields, is the agent's to do.
    grown = CONFIRMED.replace("- Status: open\n\n## L-0002",
                              "- Confirmed: 2026-11-29 (cycle 4) — new\n- Status: open\n\n## L-0002")
    assert enforce({"lessons": CONFIRMED}, {"lessons": grown.replace("- Why: b", "- Why: b, better")}).notes == []


def test_a_lesson_marked_promoted_by_the_agent_is_put_back_to_its_status() -> None:
    """Only the close promotes: the agent's `Status: promoted R-07` was committed, a lesson the close then never
    looked at again, citing a rule that does not exist."""
    new_lesson = "\n## L-0003 · Third\n- Happened: 2026-11-29 (cycle 4) — a\n- Why: b\n- Change: c\n" \
                 "- Status: promoted R-09\n"
    forged = LESSONS.replace("- Status: open", "- Status: promoted R-07", 1) + new_lesson
    result = enforce({"lessons": LESSONS}, {"lessons": forged})
    doc = lessons.parse(result.texts["lessons"])
    assert [item.status for item in doc.lessons] == ["open", "open", "open"]
    assert result.notes == ["reverted L-0001's status `promoted R-07` to `open` (only the daily close promotes)",
                            "reverted L-0003's status `promoted R-09` to `open` (only the daily close promotes)"]
    retired = LESSONS.replace("- Status: open", "- Status: retired — no longer true", 1)
    assert enforce({"lessons": LESSONS}, {"lessons": retired}).notes == []
