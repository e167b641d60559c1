"""Past the best few, the words as the question writes them: the evidence call's tail is reordered by how well each
entry matches the question's own word forms.

The index matches stems (porter: "painting" finds "paints", "books" finds "book"), which finds an entry whatever
form it says a word in, and the relevance that orders the hits counts a word held in any form. A form said as the
question says it is the more precise evidence: "What books has Tim read?" is answered by the entries that say
"books" and "read", more than by those that say "booked" and "reading". Search engines keep both for this reason
(a stemmed field and an exact one). Here the first KEPT entries stay as relevance orders them, and the entries
after them are ordered by the reciprocal-rank fusion (rank.rrf, each order weighing alike) of their relevance
order and an Okapi BM25 over the exact forms of the question's words, counted in the candidates themselves
(their number, lengths and how many of them hold each form): no second index, and a cost bounded by the candidates.

The entries after the first KEPT keep their relevances, handed out in the fused order (each just under the one
before it), so that every later sort by relevance keeps this order: a tail hit's score is the relevance of its
place. It runs before an entry borrows from the one before it (recall.neighbours), so a reply still comes in
ranked by what it borrows, after the entry it borrows from.

Only for the evidence call: the check ("is this known at all?", search's `known_only`) keeps only entries that
hold the question, judged on stems, and reorders nothing. Entries that hold the question still come first
(search._query sorts them ahead after this).
"""
from __future__ import annotations

import math
import sqlite3
from collections import Counter

from gitmem.recall.query import WORD_RE, Query, fold_for_search, idf
from gitmem.recall.rank import rrf

KEPT = 5               # the first entries relevance chooses, never reordered
K1 = 1.2               # FTS5's own BM25 constants
B = 0.75


def reorder(conn: sqlite3.Connection, query: Query, items: list[tuple[int, float]]) -> list[tuple[int, float]]:
    """`items` (doc id, relevance, best first): the first KEPT as they are, the others in the fused order of their
    relevance and their exact-form BM25 (`exact_scores`), each given a relevance just under the one before it, so
    that a sort by relevance keeps this order."""
    if len(items) <= KEPT or not query.words:
        return items
    exact = exact_scores(conn, query, [doc_id for doc_id, _ in items])
    rest = items[KEPT:]
    by_exact = {doc_id: place for place, doc_id in enumerate(
        sorted((doc_id for doc_id, _ in rest if exact.get(doc_id, 0.0) > 0), key=lambda doc_id: -exact[doc_id]),
        start=1)}
    fused = {doc_id: rrf(place) + (rrf(by_exact[doc_id]) if doc_id in by_exact else 0.0)
             for place, (doc_id, _) in enumerate(rest, start=1)}
    order = sorted(fused, key=lambda doc_id: -fused[doc_id])          # stable: relevance order breaks ties
    values = sorted((value for _, value in rest), reverse=True)
    ranked = items[:KEPT]
    for doc_id, value in zip(order, values, strict=True):
        ranked.append((doc_id, min(value, math.nextafter(ranked[-1][1], -math.inf))))
    return ranked


def exact_scores(conn: sqlite3.Connection, query: Query, ids: list[int]) -> dict[int, float]:
    """Okapi BM25 (K1, B) of each entry for the question's words as written (folded, not stemmed), with the
    entries `ids` as the collection: how many hold each form, and their average length."""
    marks = ",".join("?" * len(ids))
    bags = {doc_id: Counter(WORD_RE.findall(fold_for_search(f"{title} {body}"))) for doc_id, title, body in
            conn.execute(f"SELECT rowid, title, body FROM fts WHERE rowid IN ({marks})", ids)}
    if not bags:
        return {}
    lengths = {doc_id: sum(bag.values()) for doc_id, bag in bags.items()}
    average = sum(lengths.values()) / len(lengths) or 1.0
    total = len(bags)
    scores: dict[int, float] = dict.fromkeys(bags, 0.0)
    for word in query.words:
        holders = [doc_id for doc_id, bag in bags.items() if bag.get(word)]
        if not holders:
            continue
        weight = idf(total, len(holders))
        for doc_id in holders:
            count = bags[doc_id][word]
            scores[doc_id] += weight * count * (K1 + 1) / (count + K1 * (1 - B + B * lengths[doc_id] / average))
    return scores
