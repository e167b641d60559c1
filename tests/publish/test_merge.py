"""gitmem.publish.merge: the memory races that are not real conflicts merge; the real ones are declined."""
from __future__ import annotations

from gitmem.config import Config
from gitmem.memory import decisions, log, now
from gitmem.publish.merge import merge_decisions, merge_log, merge_now, resolver_for

LOG = "# LOG\n\n## 2026-11-30 09:00 UTC · cycle 4 · built\n- Task: t\n- Result: r\n"
CLOSE = "\n## 2026-11-30 23:47 UTC · close\n- Report: a day\n"
CYCLE5 = "\n## 2026-11-30 23:50 UTC · cycle 5 · built\n- Task: late\n- Result: done\n"


def test_a_close_and_a_cycle_both_appending_merge_in_order() -> None:
    merged = merge_log(LOG, LOG + CLOSE, LOG + CYCLE5)
    assert merged == LOG + CLOSE + CYCLE5
    assert [(e.cycle, e.kind) for e in log.parse(merged).entries] == [(4, "cycle"), (None, "close"), (5, "cycle")]


def test_a_close_replayed_after_cycles_it_never_read_names_them_as_arrived() -> None:
    """A push replays the close after the cycles another writer pushed while it ran: they land above it, and its
    report does not hold them, so it says so (the next close reports them: gitmem.close.day)."""
    early = CYCLE5.replace("23:50", "23:40")
    merged = merge_log(LOG, LOG + early, LOG + CLOSE)
    assert merged == LOG + early + CLOSE + "- Arrived: cycle 5\n"
    assert log.arrived_cycles(log.parse(merged).entries[-1]) == {5}
    # A cycle replayed after a close, or a close after a close, changes nothing.
    assert merge_log(LOG, LOG + CLOSE, LOG + CYCLE5) == LOG + CLOSE + CYCLE5
    assert merge_log(LOG, LOG + CLOSE, LOG + CLOSE.replace("a day", "again")) == LOG + CLOSE + CLOSE.replace(
        "a day", "again")


def test_log_appends_that_would_break_order_are_declined() -> None:
    early = CYCLE5.replace("23:50", "23:40")
    # Rules 4: LOG is ordered by position; an earlier time (another writer's fast clock) merges, reported (GM310).
    assert merge_log(LOG, LOG + CLOSE, LOG + early) == LOG + CLOSE + early
    assert merge_log(LOG, LOG + CYCLE5, LOG + CYCLE5.replace("late", "racer")) is None   # two cycle 5s
    assert merge_log(LOG, LOG.replace("- Result: r", "- Result: x"), LOG + CYCLE5) is None   # a rewrite


def test_a_line_added_to_the_bases_last_entry_is_declined_on_either_side() -> None:
    # Issue 20: each side must be an append as `check` judges it. The merge used to accept any text that
    # extended the base, and then dropped our added line in silence (upstream's it kept).
    amended = LOG + "- Learned: more\n"
    assert merge_log(LOG, LOG + CLOSE, amended + CYCLE5) is None
    assert merge_log(LOG, amended + CLOSE, LOG + CYCLE5) is None


NOW = "# NOW\n\n## 2026-11-30 09:00 UTC · cycle 4\n- Did: a\n- Human: nothing\n- Next: b\n"


def _block(heading: str, did: str) -> str:
    return f"## {heading}\n- Did: {did}\n- Human: nothing\n- Next: x\n\n"


def test_new_blocks_from_both_sides_stack_newest_first() -> None:
    theirs = NOW.replace("## 2026-11-30 09:00", _block("2026-11-30 23:47 UTC · plan for 2026-12-01", "plan")
                         + "## 2026-11-30 09:00")
    mine = NOW.replace("## 2026-11-30 09:00", _block("2026-11-30 23:50 UTC · cycle 5", "cycle five")
                       + "## 2026-11-30 09:00")
    merged = now.parse(merge_now(NOW, theirs, mine))
    assert [b.fields[0].value for b in merged.blocks] == ["cycle five", "plan", "a"]
    assert not merged.problems


def test_the_same_old_block_edited_on_both_sides_is_declined() -> None:
    theirs = NOW.replace("- Next: b", "- Next: theirs")
    mine = NOW.replace("- Next: b", "- Next: mine")
    assert merge_now(NOW, theirs, mine) is None
    assert now.parse(merge_now(NOW, theirs, NOW)).blocks[0].fields[2].value == "theirs"


DECISIONS = """# DECISIONS

## Pending

### D-0001 · First
- Asked: 2026-11-30 09:00 UTC (cycle 4)
- Recommendation: yes

## Resolved
"""


def _ask(text: str, number: int, title: str) -> str:
    return text.replace("## Resolved", f"### D-{number:04d} · {title}\n- Asked: 2026-11-30 10:00 UTC (cycle 5)\n"
                                       "- Recommendation: go\n\n## Resolved")


def _answer(text: str) -> str:
    from gitmem.memory.timestamps import parse_timestamp

    doc = decisions.move_to_resolved(decisions.parse(text), "D-0001", answer="yes", name="Dana Human",
                            email="dana@example.com", answered=parse_timestamp("2026-11-30 10:05 UTC"))
    return decisions.render(doc)


def test_an_answer_and_a_new_question_both_land() -> None:
    merged = decisions.parse(merge_decisions(DECISIONS, _answer(DECISIONS), _ask(DECISIONS, 2, "Second")))
    assert [d.id for d in merged.pending] == ["D-0002"] and [d.id for d in merged.resolved] == ["D-0001"]
    assert merged.resolved[0].answered[1] == "Dana Human"


def test_an_answer_made_on_our_side_is_kept_when_upstream_asked() -> None:
    merged = decisions.parse(merge_decisions(DECISIONS, _ask(DECISIONS, 2, "Second"), _answer(DECISIONS)))
    assert [d.id for d in merged.pending] == ["D-0002"] and [d.id for d in merged.resolved] == ["D-0001"]


def test_the_same_new_id_on_both_sides_is_declined() -> None:
    assert merge_decisions(DECISIONS, _ask(DECISIONS, 2, "Theirs"), _ask(DECISIONS, 2, "Mine")) is None


def test_the_resolver_only_merges_memory_files() -> None:
    resolve = resolver_for(Config())
    base, theirs, mine = (t.encode() for t in (LOG, LOG + CLOSE, LOG + CYCLE5))
    assert resolve("LOG.md", base, theirs, mine) == (LOG + CLOSE + CYCLE5).encode()
    assert resolve("src/app.py", base, theirs, mine) is None
    assert resolve("LOG.md", None, theirs, mine) is None


def test_renumbering_an_amendment_keeps_it_an_amendment() -> None:
    from gitmem.publish.renumber import Shift, renumber_log

    bad = "\n## 2026-12-01 10:00 UTC · cycle 1 · built\n- Result: no task\n"
    amendment = "\n## 2026-12-01 10:05 UTC · amends line 2 · cycle 2 · built\n- Task: t\n- Result: no task\n"
    renumbered = renumber_log(b"# LOG\n", f"# LOG\n{bad}{amendment}".encode(), Shift(1, 3)).decode()
    headings = [line for line in renumbered.splitlines() if line.startswith("## ")]
    assert headings == ["## 2026-12-01 10:00 UTC · cycle 4 · built",
                        "## 2026-12-01 10:05 UTC · amends line 2 · cycle 5 · built"]
