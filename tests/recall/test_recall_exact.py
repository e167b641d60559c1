"""Past the best few, the words as the question writes them (gitmem/recall/exact.py): the evidence call's tail is
ordered by relevance and by the question's exact word forms together; the best few and the check are not."""
from __future__ import annotations

import pytest

from gitmem.recall import exact, search
from gitmem.recall.search import Hits
from gitmem.workspace import Workspace
from tests.support.helpers import GitRepo
from tests.support.recall_support import History

QUESTION = "which paintings did Lena sell at the harbour fair?"


@pytest.fixture
def written(memrepo: GitRepo) -> tuple[History, list[int], list[int], int]:
    history = History(memrepo)
    best = [history.cycle(task="harbour fair", result=f"Lena set up stall {number} at the harbour fair.")
            for number in range(1, 6)]
    # Each says a form of "paint" and of "sell" (stems the question's words share), none of them the question's own.
    others = [history.cycle(task="boat", result="Painted the fence, and selling the old boat at last."),
              history.cycle(task="garage", result="Selling the bikes; painted the garage door."),
              history.cycle(task="shed", result="The shed got painted; selling the mower to a neighbour.")]
    evidence = history.cycle(task="studio", result="Framed the two paintings to sell, wrapped them in brown paper and "
                             "packed them in the van with the easel, the folding table and the price cards.")
    for task in ("deploy script", "search index", "billing page", "mailing list"):
        history.cycle(task=task, result=f"Built the {task} again and checked it.")
    return history, best, others, evidence


def ids(hits: Hits) -> list[str]:
    return [hit.id for hit in hits]


def test_past_the_best_few_the_entry_saying_the_questions_own_words_comes_first(
        written: tuple[History, list[int], list[int], int]) -> None:
    history, best, others, evidence = written
    ws = Workspace.at(history.root, history.config)
    found = ids(search(ws, QUESTION, kinds=["log"], limit=10))
    assert set(found[:exact.KEPT]) == {f"cycle {number}" for number in best}
    # By relevance it is the last of the four (it says the same stems, at more length); by the question's own
    # forms ("paintings", "sell") it is the first.
    assert found[exact.KEPT] == f"cycle {evidence}"
    assert set(found[exact.KEPT + 1:exact.KEPT + 4]) == {f"cycle {number}" for number in others}


def test_the_best_few_and_the_check_are_not_reordered(written: tuple[History, list[int], list[int], int],
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    history, best, _, evidence = written
    ws = Workspace.at(history.root, history.config)
    reordered = ids(search(ws, QUESTION, kinds=["log"], limit=10))
    checked = ids(search(ws, QUESTION, kinds=["log"], known_only=True))
    kept = exact.KEPT
    monkeypatch.setattr(exact, "KEPT", 10 ** 6)          # nothing past the best few: the relevance order
    by_relevance = ids(search(ws, QUESTION, kinds=["log"], limit=10))
    assert reordered[:kept] == by_relevance[:kept] == [f"cycle {number}" for number in reversed(best)]
    assert by_relevance.index(f"cycle {evidence}") > reordered.index(f"cycle {evidence}")
    assert ids(search(ws, QUESTION, kinds=["log"], known_only=True)) == checked
    assert f"cycle {evidence}" not in checked


def test_exact_scores_count_the_forms_as_written_among_the_candidates(
        written: tuple[History, list[int], list[int], int]) -> None:
    from gitmem.recall.index import Index
    from gitmem.recall.query import analyze

    history, _, _, _ = written
    index = Index(Workspace.at(history.root, history.config))
    try:
        conn = index.refresh()
        rows = dict(conn.execute("SELECT ident, id FROM docs WHERE kind = 'log'").fetchall())
        query = analyze(conn, "paintings for sale")
        scores = exact.exact_scores(conn, query, list(rows.values()))
        holding = {ident for ident, doc_id in rows.items() if scores[doc_id] > 0}
        assert holding == {"cycle 9"}          # "paintings" as written; "painted" and "sale" ("sell") do not count
    finally:
        index.close()
