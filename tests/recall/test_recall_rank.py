"""Ranking pieces on their own (cut, fusion, recency, query words), and rank fusion with a second ranker."""
from __future__ import annotations

import sqlite3
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gitmem.recall import RecallError, rank, register_ranker, search
from gitmem.recall.index import Index
from gitmem.recall.query import MAX_TERMS, Query, words
from gitmem.recall.search import run
from gitmem.workspace import Workspace
from tests.support.helpers import make_repo
from tests.support.recall_support import History


def test_cut_drops_low_scores_then_keeps_clear_winners() -> None:
    scored = [(1, 0.95, 0.95), (2, 0.90, 0.92), (3, 0.60, 0.62), (4, 0.55, 0.58), (5, 0.20, 0.5)]
    assert rank.cut(scored, min_score=0.35, gap=0.15, limit=6) == [(1, 0.95), (2, 0.90)]
    # No cliff: everything over the cutoff, up to the limit.
    assert rank.cut(scored, min_score=0.35, gap=0.5, limit=3) == [(1, 0.95), (2, 0.90), (3, 0.60)]
    assert rank.cut(scored, min_score=0.99, gap=0.15, limit=6) == []


def test_gap_is_judged_on_relevance_so_age_alone_makes_no_winner() -> None:
    # Same relevance, scores apart only through recency (w = 0.2): nothing is cut.
    scored = [(1, 0.90, 0.90), (2, 0.72, 0.90), (3, 0.71, 0.89)]
    assert [doc for doc, _ in rank.cut(scored, min_score=0.35, gap=0.15, limit=6)] == [1, 2, 3]


def test_recency_factor_is_mild_and_documented() -> None:
    day = 86400.0
    now = 1000 * day
    assert rank.recency(now, "log", now, half_life=30, weight=0.2) == pytest.approx(1.0)
    assert rank.recency(now - 30 * day, "log", now, half_life=30, weight=0.2) == pytest.approx(0.9)
    assert rank.recency(now - 3000 * day, "log", now, half_life=30, weight=0.2) == pytest.approx(0.8)
    assert rank.recency(None, "rule", now, half_life=30, weight=0.2) == pytest.approx(1.0)   # in force
    assert rank.recency(None, "decision", now, half_life=30, weight=0.2) == pytest.approx(0.9)
    assert rank.recency(now - 90 * day, "log", now, half_life=30, weight=0.0) == 1.0


def test_fuse_single_list_orders_by_boosted_score() -> None:
    fused = rank.fuse({"bm25": [(1, 1.0), (2, 0.95)]}, {"bm25": 1.0}, {1: 0.8, 2: 1.0})
    assert [(doc, round(score, 3)) for doc, score, _ in fused] == [(2, 0.95), (1, 0.8)]


def test_fuse_two_lists_by_weighted_reciprocal_rank() -> None:
    lists = {"a": [(1, 1.0), (2, 0.9), (3, 0.8)], "b": [(3, 1.0), (2, 0.5)]}
    equal = rank.fuse(lists, {"a": 1.0, "b": 1.0}, {})
    # RRF: doc 3 = 1/63 + 1/61, doc 2 = 1/62 + 1/62, doc 1 = 1/61.
    assert [doc for doc, _, _ in equal] == [3, 2, 1]
    # A hit scores as its strongest evidence, whichever ranker found it.
    assert dict((doc, score) for doc, score, _ in equal)[2] == pytest.approx(0.9)
    # a x5: doc 2 = 6/62 = .0968, doc 3 = 5/63 + 1/61 = .0958, doc 1 = 5/61 = .0820.
    leaning_a = rank.fuse(lists, {"a": 5.0, "b": 1.0}, {})
    assert [doc for doc, _, _ in leaning_a] == [2, 3, 1]
    only_a = rank.fuse(lists, {"a": 1.0, "b": 0.0}, {})
    assert [doc for doc, _, _ in only_a] == [1, 2, 3]


def test_query_words_are_plain_and_bounded() -> None:
    assert words('what did we decide about "NEAR(deploy*" staging_db') == ("near", "deploy", "staging", "db")
    assert words("the of and") == ("the", "of", "and")          # nothing but stop words: keep them
    assert words("Café MÜLLER") == ("cafe", "muller")
    assert len(words(" ".join(f"w{i}" for i in range(500)))) == MAX_TERMS
    assert words("") == () and words('"*^():') == ()


def newest_first(conn: sqlite3.Connection, query: Query, flt: rank.Filter, limit: int) -> list[tuple[int, float]]:
    """A tiny deterministic ranker: the newest entries in scope, whatever the words; relevance 1.0, 0.9, ..."""
    where, params = flt.where()
    rows = conn.execute(f"SELECT d.id FROM docs d WHERE {where} AND d.ts IS NOT NULL ORDER BY d.ts DESC, d.id DESC"
                        " LIMIT ?", [*params, min(limit, 5)]).fetchall()
    return [(doc_id, 1.0 - 0.1 * position) for position, (doc_id,) in enumerate(rows)]


@pytest.fixture
def fused_history(memrepo) -> History:
    history = History(memrepo)
    history.cycle(task="tune the otter harbour", result="the otter harbour is warm")
    for _ in range(3):
        history.cycle()
    history.cycle(task="review the otter harbour", result="measured nothing")
    history.cycle(task="last thing", result="wrote the release notes")
    return history


def test_a_second_ranker_is_fused_with_bm25(fused_history: History, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(rank, "RANKERS", dict(rank.RANKERS))        # registered for this test only
    register_ranker("newest_first", newest_first)
    config = replace(fused_history.config, recall=replace(fused_history.config.recall, mode="bm25"))
    plain = search(Workspace.at(fused_history.root, config), "otter harbour", kinds=["log"], min_score=0.0, gap=1.0)
    assert [hit.id for hit in plain] == ["cycle 1", "cycle 5"]
    both = replace(config, recall=replace(config.recall, rankers=(("bm25", 1.0), ("newest_first", 3.0))))
    fused = search(Workspace.at(fused_history.root, both), "otter harbour", kinds=["log"], min_score=0.0, gap=1.0)
    ids = [hit.id for hit in fused]
    # The second ranker knows nothing of otters but weighs 3x. RRF (k=60): cycle 5 is in both lists,
    # 1/62 + 3/62; cycle 6 leads the second, 3/61; cycles 4, 3, 2 follow it; BM25's best, 1/61, would come
    # last, but it holds the query and they do not: entries holding the query come first, in RRF order.
    assert ids == ["cycle 5", "cycle 1", "cycle 6", "cycle 4", "cycle 3", "cycle 2"]
    assert all(hit.kind == "log" for hit in fused)                  # the filter reaches every ranker
    newest = next(hit for hit in fused if hit.id == "cycle 6")
    assert "otter" not in newest.snippet and newest.snippet         # no word match: the entry's start
    bm25_only = replace(config, recall=replace(config.recall, rankers=(("bm25", 1.0), ("newest_first", 0.0))))
    found = search(Workspace.at(fused_history.root, bm25_only), "otter harbour", kinds=["log"], min_score=0.0, gap=1.0)
    assert [h.id for h in found] == ["cycle 1", "cycle 5"]


def test_unknown_ranker_is_a_clear_error(fused_history: History) -> None:
    config = fused_history.config
    broken = replace(config, recall=replace(config.recall, rankers=(("bm25", 1.0), ("vectors", 0.5))))
    with pytest.raises(RecallError, match="vectors"):
        search(Workspace.at(fused_history.root, broken), "otter")


@pytest.fixture(scope="module")
def warm_index(tmp_path_factory: pytest.TempPathFactory) -> Index:
    repo = make_repo(tmp_path_factory.mktemp("recall-fuzz") / "repo")
    history = History(repo)
    for _ in range(8):
        history.cycle()
    history.cycle(task="deploy the staging nginx", result="deploy worked")
    index = Index(Workspace.at(repo.path))
    yield index
    index.close()


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.text(max_size=400))
def test_any_text_is_a_query(warm_index: Index, text: str) -> None:
    hits = run(warm_index, text)
    assert all(0.0 <= hit.score <= 1.0 for hit in hits)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(['"', "NEAR", "(", ")", "*", "^", ":", "AND", "OR", "NOT", "-", "+", "deploy",
                                 "nginx", "{", "}", "'", "\\", "%", "_"]), max_size=12))
def test_fts5_syntax_fragments_never_raise(warm_index: Index, parts: list[str]) -> None:
    hits = run(warm_index, " ".join(parts))
    # Syntax is never obeyed, only words: a query whose words memory holds finds them, whatever surrounds
    # them. ("NEAR" is a word here, one memory lacks, so "NEAR deploy" is half about something unknown.)
    asked = set(words(" ".join(parts)))
    if asked and asked <= {"deploy", "nginx"}:
        assert hits


def test_index_needs_fts5_message_is_clear(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from gitmem.recall import database as store

    class NoFts:
        def execute(self, sql: str) -> None:
            raise sqlite3.OperationalError("no such module: fts5")

        def close(self) -> None:
            pass

    monkeypatch.setattr(store.sqlite3, "connect", lambda *_: NoFts())
    store.require_fts5.cache_clear()
    try:
        with pytest.raises(RecallError, match="FTS5"):
            store.require_fts5()
    finally:
        store.require_fts5.cache_clear()


def test_the_rankers_gitmem_yaml_may_name_are_the_ones_recall_has() -> None:
    """gitmem.config.RANKER_NAMES refuses any other name at load (GM926): it is the registry's names and semantic."""
    from gitmem.config import RANKER_NAMES

    assert set(RANKER_NAMES) == {*rank.RANKERS, "semantic"}
