"""`decisions.not_settled_before`: which decisions a close need not read whole to know they waited on no day it
writes up. Left out only when the full reading (`answered_at`) agrees; anything the Answered line's day cannot
tell is kept for that reading."""
from __future__ import annotations

from datetime import UTC, datetime

from gitmem.memory import decisions

MOMENT = datetime(2026, 11, 14, 0, 30, tzinfo=UTC)      # the end of a day a close writes up
NOW = datetime(2026, 11, 14, 0, 31, tzinfo=UTC)         # when the close reads DECISIONS


def _doc(pending: list[tuple[str, str]], resolved: list[tuple[str, str]]) -> decisions.DecisionsDoc:
    """DECISIONS with these (id, Answered line) decisions, asked on 1 October."""
    def block(decision_id: str, answered: str) -> str:
        lines = [f"### {decision_id} · question {decision_id}", "- Asked: 2026-10-01 09:00 UTC", "- Answer: yes"]
        return "\n".join([*lines, answered]) if answered else "\n".join(lines)

    text = "\n\n".join(["# DECISIONS", "## Pending", *(block(*item) for item in pending),
                        "## Resolved", *(block(*item) for item in resolved)]) + "\n"
    doc = decisions.parse(text)
    assert not doc.problems, doc.problems
    return doc


def _kept(doc: decisions.DecisionsDoc) -> list[str]:
    return [item.id for item in decisions.not_settled_before(doc.all, MOMENT)]


def _waited_after(item: decisions.Decision) -> bool:
    """The full reading: whether `item` may wait at `MOMENT` or later (`close.writeup.Week.waiting`)."""
    done = decisions.answered_at(item, NOW)
    return not item.is_answered or (done is not None and done > MOMENT)


def test_only_decisions_resolved_two_days_before_in_ascii_digits_are_left_out() -> None:
    doc = _doc(pending=[("D-0001", "- Answered: 2026-10-02 09:00 UTC by Dana <dana@example.com>")],
               resolved=[("D-0002", "- Answered: 2026-10-02 09:00 UTC by Dana <dana@example.com>"),
                         ("D-0003", "- Answered: 2026-11-12 23:59 -23:59 by Dana <dana@example.com>"),
                         ("D-0004", "- Answered: 2026-11-13 23:59 -23:59 by Dana <dana@example.com>"),
                         ("D-0005", "- Answered: ٢٠٢٦-10-02 09:00 UTC by Dana <dana@example.com>"),
                         ("D-0006", "- Answered: 2026-10-02 09:00 Mars time by Dana"),
                         ("D-0007", "* Answered: 2026-10-02 09:00 +05:00 by Dana <dana@example.com>"),
                         ("D-0008", "")])
    kept = _kept(doc)
    # Under Pending an answer stands only when its lines read; other digits and a day too near are read whole.
    assert kept == ["D-0001", "D-0004", "D-0005", "D-0008"]
    # What is left out waited on no day from MOMENT on, by the full reading too (D-0006's time does not read).
    assert [item.id for item in doc.all if item.id not in kept and _waited_after(item)] == []
    # The day too near is one that matters: a zone a day behind UTC puts that answer after MOMENT.
    assert _waited_after(doc.find("D-0004"))  # type: ignore[arg-type]


def test_a_line_that_only_starts_like_the_answered_field_leaves_the_decision_to_the_full_reading() -> None:
    text = ("# DECISIONS\n\n## Pending\n\n## Resolved\n\n### D-0001 · q\n- Asked: 2026-10-01 09:00 UTC\n"
            "- Answered:2026-10-02 09:00 UTC\n- Answer: yes\n- Answered: 2026-11-13 23:30 -23:00 by D <d@e.org>\n")
    doc = decisions.parse(text)
    assert _kept(doc) == ["D-0001"]
    assert _waited_after(doc.resolved[0])
