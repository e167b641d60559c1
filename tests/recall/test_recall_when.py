"""The time a question names, resolved against today (gitmem.recall.when)."""
from __future__ import annotations

from datetime import date

import pytest

from gitmem.recall.when import TimeSpan, named_span

TODAY = date(2026, 12, 6)


@pytest.mark.parametrize(("question", "span"), [
    ("what did we ship before April 10?", TimeSpan(None, date(2026, 4, 9))),            # the latest April 10 past
    ("what did we ship before December 24?", TimeSpan(None, date(2025, 12, 23))),       # not a day still to come
    ("anything in May 2023?", TimeSpan(date(2023, 5, 1), date(2023, 6, 7))),        # and the week it is told
    ("after 2024-03-05, what changed?", TimeSpan(date(2024, 3, 6), None)),
    ("since March", TimeSpan(date(2026, 3, 1), None)),
    ("until 8 May, 2023", TimeSpan(None, date(2023, 5, 8))),
    ("on the 5th of May 2023", TimeSpan(date(2023, 5, 5), date(2023, 5, 12))),
    ("what broke yesterday?", TimeSpan(date(2026, 12, 5), date(2026, 12, 5))),
    ("who called three weeks ago?", TimeSpan(date(2026, 11, 10), date(2026, 11, 20))),
])
def test_a_named_time_is_a_span_of_days(question: str, span: TimeSpan) -> None:
    assert named_span(question, TODAY) == span


@pytest.mark.parametrize("question", ["how many weeks ago did I meet my aunt?", "in the meantime", "what may break?",
                                      "before February 30", "in 2023?", ""])
def test_no_time_named_is_none(question: str) -> None:
    assert named_span(question, TODAY) is None
