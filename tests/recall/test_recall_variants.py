"""Word variants and `--all`: "setup" finds "Set up", and a weaker match hidden by a clear winner can be shown."""
from __future__ import annotations

import json

import pytest

from gitmem.errors import ExitCode
from gitmem.recall import search
from gitmem.recall.query import analyze
from gitmem.workspace import Workspace
from tests.support.helpers import GitRepo
from tests.support.recall_support import History


@pytest.fixture
def compounds(memrepo: GitRepo) -> History:
    history = History(memrepo)
    for _ in range(5):
        history.cycle()
    history.cycle(task="Set up the staging server", result="the box answers on port 8080")
    history.cycle(task="wrote the signup page", result="visitors can log-in with a magic link")
    history.cycle(task="write the rollback runbook", result="the runbook covers the database setup")
    return history


@pytest.mark.parametrize(("query", "cycle"), [("setup staging", "cycle 6"), ("login", "cycle 7"),
                                              ("sign up page", "cycle 7"), ("set up database", "cycle 8"),
                                              ("rollback runbooks", "cycle 8")])
def test_simple_word_variants_match(compounds: History, query: str, cycle: str) -> None:
    hits = search(Workspace.at(compounds.root, compounds.config), query, mode="bm25", kinds=["log"])
    assert hits and hits[0].id == cycle, (query, hits)


def test_a_split_word_is_searched_as_a_phrase_and_counts_as_the_word(compounds: History) -> None:
    from gitmem.recall.index import Index

    index = Index(Workspace.at(compounds.root, compounds.config))
    try:
        conn = index.refresh()
        query = analyze(conn, "setup staging")
        assert query.variants["setup"] == (("set", "up"),)
        assert query.expr("setup") == '("setup" OR "set up")'        # memory holds both forms
        assert [hit.id for hit in search(Workspace.at(compounds.root, compounds.config), "setup", mode="bm25",
                                         kinds=["log"], min_score=0.0, gap=1.0)] == ["cycle 8", "cycle 6"]
        assert analyze(conn, "login").expr("login") == '"log in"'      # only the split form
        assert query.coverage(conn, "we set up the staging box") == pytest.approx(1.0)
        assert query.coverage(conn, "we set the staging box up") < 1.0   # not adjacent: not the word
        assert analyze(conn, "kubernetes").variants == {}               # no halves in memory: no variant
    finally:
        index.close()


def test_all_shows_the_entry_a_clear_winner_hides(memrepo: GitRepo, cli) -> None:
    history = History(memrepo)
    for _ in range(4):
        history.cycle()
    history.cycle(result="the agent " + history.filler(40), message="agent")
    history.cycle(message="wrote the agent walkthrough")
    for mode in ("bm25", "hybrid"):
        cut = json.loads(cli(["recall", "agent", "--json", "--known", "--mode", mode], cwd=memrepo.path).out)["hits"]
        everything = json.loads(cli(["recall", "agent", "--json", "--known", "--all", "--mode", mode],
                                    cwd=memrepo.path).out)
        assert ("log", "cycle 5") not in {(h["kind"], h["id"]) for h in cut}, mode   # the gap cut hides it
        assert ("log", "cycle 5") in {(h["kind"], h["id"]) for h in everything["hits"]}, mode
        assert len(everything["hits"]) > len(cut)
        # The best evidence has no clear-winner cut: a second entry about it is evidence too.
        evidence = json.loads(cli(["recall", "agent", "--json", "--mode", mode], cwd=memrepo.path).out)["hits"]
        assert ("log", "cycle 5") in {(h["kind"], h["id"]) for h in evidence}, mode
    both = cli(["recall", "agent", "--all", "--min-score", "0.5"], cwd=memrepo.path)
    assert both.code == ExitCode.USAGE and "--all or --min-score" in both.err
