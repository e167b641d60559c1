"""Context from the entry before (gitmem.recall.neighbours): a reply is found by the question it answers."""
from __future__ import annotations

from datetime import timedelta

import pytest

from gitmem.recall import neighbours, search
from gitmem.workspace import Workspace
from tests.support.helpers import GitRepo
from tests.support.recall_support import History

QUESTION = "how long has the team kept the turtles?"


@pytest.fixture
def talk(memrepo: GitRepo) -> History:
    """Filler cycles a day apart, then a day's three entries: the question, its reply, then another topic; and
    on the next day, a reply to nothing written that day."""
    history = History(memrepo)
    for _ in range(6):
        history.cycle()
    history.step = timedelta(minutes=5)
    history.cycle(task="asked about the turtles", result="how long have the turtles been kept here?")
    history.cycle(task="answered", result="three years now, since the first tank was bought")
    history.cycle(task="moved on", result="the garden fence was painted green")
    history.step = timedelta(days=1)
    history.cycle(task="answered", result="two weeks, since the aquarium was cleaned")
    return history


def _ids(history: History, **options: object) -> list[str]:
    hits = search(Workspace.at(history.root, history.config), QUESTION, mode="bm25", kinds=["log"], limit=10,
                  **options)  # type: ignore[arg-type]
    return [hit.id for hit in hits]


def test_the_entry_after_a_match_on_the_same_day_is_evidence_ranked_after_the_match(talk: History) -> None:
    found = _ids(talk)
    # Cycle 8 says none of the question's words: it is found because cycle 7, the same day's entry before it,
    # holds them, and it ranks after cycle 7, whose relevance it borrows half of.
    assert found[:2] == ["cycle 7", "cycle 8"]
    # Lending reaches only the entry just after, on the same day: not the one after that (cycle 9), nor the
    # next day's first entry (cycle 10).
    assert "cycle 9" not in found and "cycle 10" not in found


def test_the_known_check_judges_each_entry_by_what_it_says_itself(talk: History) -> None:
    assert _ids(talk, known_only=True) == ["cycle 7"]


def test_lending_off_finds_only_entries_sharing_the_questions_words(talk: History,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(neighbours, "LENT", 0.0)
    assert "cycle 8" not in _ids(talk)


def test_the_filter_holds_for_a_borrowing_entry(talk: History) -> None:
    hits = search(Workspace.at(talk.root, talk.config), QUESTION, mode="bm25", kinds=["log"], limit=10)
    asked = next(hit for hit in hits if hit.id == "cycle 7")
    # Up to the minute the question was written: the reply, five minutes later, is outside.
    found = _ids(talk, until=asked.date.removesuffix(" UTC").replace(" ", "T") + ":00+00:00")
    assert "cycle 7" in found and "cycle 8" not in found


def test_a_long_entry_borrows_a_share_shrunk_by_its_length(memrepo: GitRepo) -> None:
    from gitmem.recall.index import Index
    from gitmem.recall.rank import Filter

    history = History(memrepo)
    history.step = timedelta(minutes=5)
    history.cycle(task="asked about the turtles", result="how long have the turtles been kept here?")
    history.cycle(task="answered", result="three years now")
    history.cycle(task="asked about the turtles again", result="how long have the turtles been kept here?")
    history.cycle(task="answered at length", result=history.filler(400))
    index = Index(Workspace.at(history.root, history.config))
    try:
        conn = index.refresh()
        ids = {ident: doc_id for doc_id, ident in conn.execute("SELECT id, ident FROM docs WHERE kind = 'log'")}
        lent = dict(neighbours.lend(conn, [(ids["cycle 1"], 1.0), (ids["cycle 3"], 1.0)], Filter()))
        size = sum(map(len, conn.execute("SELECT title, body FROM fts WHERE rowid = ?", (ids["cycle 4"],)).fetchone()))
    finally:
        index.close()
    assert lent[ids["cycle 2"]] == pytest.approx(neighbours.LENT)              # short: the whole share
    assert size > 4 * neighbours.SHORT
    assert lent[ids["cycle 4"]] == pytest.approx(neighbours.LENT * neighbours.SHORT / size)
