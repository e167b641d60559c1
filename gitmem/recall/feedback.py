"""Query expansion from the best evidence (pseudo-relevance feedback, as RM3 does it), for the evidence call.

A question about several things at once ("how many model kits have I worked on or bought?") names what they
have in common, not each of them: one session says "model kit", another "my Tiger I diorama, weathered with AK
Interactive". The entries that answer the question best say what the others say too. So the words those
entries share most, weighed by how rare they are in memory, are asked as a second query, and an entry's
relevance becomes its relevance to the question plus a WEIGHT share of its relevance to those words.
The words are read where each entry talks about the question (its best passage, AROUND sentences wider; local
context analysis), not from the whole entry: a long session is mostly about other things, and every entry's
title says what kind of entry it is ("cycle 12: …"), which would be the words they share most.

It runs only for a question that gathers (`gathers`: a count or a total, an order of events, the time between
two of them, both of two), and only when no candidate holds it (rank.holds_query). A question about one
thing wants the entry that says it, and the words of other entries only blur that; when the question's own
words find an entry that holds most of it, they decide (a single fact's question, a keyword query, the latest
word on a subject before the one it superseded). No entry comes in by the shared words alone, and the check
("is this known at all?", search's `known_only`) never expands, so a question about something never written
gets no hit by a word it did not say.
"""
from __future__ import annotations

import re
import sqlite3
from collections import Counter, defaultdict
from collections.abc import Callable

from gitmem.recall.query import MAX_TERMS, STOPWORDS, WORD_RE, Query, analyze, fold_for_search, rarity
from gitmem.recall.rank import STRENGTH, Filter, Ranker, best_passage

ENTRIES = 3            # the best entries the expansion is read from
WORDS = 10             # words added to the question
WEIGHT = 0.3           # the expansion's share of relevance
SHORTEST = 3           # shorter words are glue or abbreviations, not what entries share
AROUND = 1             # sentences read on each side of an entry's best passage
# What a question about several things says, whatever it is about: it counts or adds them up ("how many", "in
# total"), orders them ("in what order", "first to last"), spans the time between two ("between ... and"), or
# asks about both.
_GATHERS = re.compile(r"\b(?:how\s+(?:many|much|often)|in\s+total|total|altogether|in\s+(?:what|which)\s+order|"
                      r"first\s+to\s+last|between\b.+\band|both)\b", re.I | re.S)


def gathers(text: str) -> bool:
    """Whether a question asks about several things at once (_GATHERS), so that its evidence is in several
    entries that say what they share more than what the question says."""
    return _GATHERS.search(text) is not None


def expand(conn: sqlite3.Connection, query: Query, ranker: Ranker, flt: Filter, limit: int,
           first: list[tuple[int, float]], holds: Callable[[int], bool]) -> list[tuple[int, float]]:
    """`first` (the ranker's list for `query`, best first), for a question that `gathers` when none of it holds
    the query, reordered by relevance to the query and, WEIGHT for one, to the words its best entries share
    (`shared_words`). No entry comes in by those words alone: every hit shares a word with the question."""
    if not gathers(query.text) or any(holds(doc_id) for doc_id, _ in first):
        return first          # one thing asked, or the question's own words found what holds it: they decide
    added = shared_words(conn, query, first[:ENTRIES])
    if not added:
        return first
    expansion = analyze(conn, " ".join(added))
    second = dict(ranker(conn, expansion, flt, limit))
    relevance = dict(first)
    unscored = [doc_id for doc_id in relevance if doc_id not in second]
    if unscored:
        marks = ",".join("?" * len(unscored))
        for doc_id, title, body in conn.execute(f"SELECT rowid, title, body FROM fts WHERE rowid IN ({marks})",
                                                unscored):
            second[doc_id] = expansion.coverage(conn, f"{title} {body}") * (1.0 - STRENGTH)
    found = {doc_id: (value + WEIGHT * second.get(doc_id, 0.0)) / (1.0 + WEIGHT) for doc_id, value in relevance.items()}
    return sorted(found.items(), key=lambda item: -item[1])


def shared_words(conn: sqlite3.Connection, query: Query, best: list[tuple[int, float]]) -> list[str]:
    """Up to WORDS words the `best` entries' best passages share (each in at least two of them, when there are
    two), not the query's own: the most frequent there, weighed by each entry's relevance, then by their idf in
    memory."""
    if not best:
        return []
    relevance = dict(best)
    marks = ",".join("?" * len(best))
    own = set(query.words) | set(query.stems.values())
    tally: defaultdict[str, float] = defaultdict(float)
    holders: Counter[str] = Counter()
    for doc_id, body in conn.execute(f"SELECT rowid, body FROM fts WHERE rowid IN ({marks})", list(relevance)):
        tokens = [token for token in WORD_RE.findall(fold_for_search(best_passage(conn, query, body, around=AROUND)))
                  if len(token) >= SHORTEST and not token.isdigit() and token not in STOPWORDS and token not in own]
        for token, count in Counter(tokens).items():
            tally[token] += relevance[doc_id] * count / len(tokens)
            holders[token] += 1
    shared = min(2, len(best))
    pool = [token for token in sorted(tally, key=lambda token: -tally[token]) if holders[token] >= shared]
    pool = pool[:MAX_TERMS]
    if not pool:
        return []
    weights = rarity(conn, pool)
    return sorted(weights, key=lambda word: -tally[word] * weights[word])[:WORDS]
