"""Ranking: BM25 relevance normalised to 0..1, a mild recency boost, and fusion of several rankers.

Score of a hit (all parts 0..1):
- relevance = coverage x (1 - STRENGTH + STRENGTH x bm25 / best bm25). Coverage is the idf-weighted share
  of the query's words the entry holds, half in the whole entry and half in its best passage (the title and
  PASSAGE neighbouring sentences), so the score means something on its own: a query whose rare words are
  nowhere in memory scores low everywhere, and one whose words an entry says together outranks one whose
  words a long entry gathers from sentences about other things. BM25 only orders entries that hold the same words (its
  ratio mostly reflects entry length), so it moves relevance by at most STRENGTH (0.3).
  Coverage is no condition of being found: a question rarely says its answer's words, and the best
  evidence is shown however little of the question it holds. Whether an entry holds the question at all
  (`holds_query`: at least COVERAGE_FLOOR, half, of it in one passage, its title and PASSAGE neighbouring
  sentences) is a separate verdict: it marks the hits (search.Hit.holds) and is the check "is this known
  at all?" (search.search's `known_only`), which answers "no memory of that" to questions never written.
- recency factor = 1 - w + w x 0.5 ** (age_days / half_life), with w = recall.recency_weight (default
  0.2) and half_life = recall.recency_half_life_days (default 30), for entries that hold the query. Age
  is counted back from the newest dated memory entry among the candidates that hold it (not the wall
  clock, not commit times): among the entries that answer a query, the latest word on it gets the full
  boost, however old the memory is. A proven rule is in force, so it counts as new; an undated entry
  counts as half as fresh. With w = 0.2 the boost is mild: it decides between entries of similar
  relevance, such as a fact and the later fact that superseded it, but never lifts an entry that does not
  match. A weak hit (one that does not hold the query) gets no factor: its age says nothing of whether it
  is the evidence (search._query).
- Each ranker (config recall.rankers, name -> weight: "bm25" here, "semantic" in semantic.py) returns its
  own relevance list. The lists are reranked by relevance x recency and fused by weighted reciprocal rank
  fusion, sum w / (60 + rank), times the recency factor, which sets the order. A hit's score is its best
  ranker's relevance x recency: the strongest evidence that it answers the query, whichever ranker found
  it, so that a paraphrase found by meaning alone is not halved for having no word in common. With one
  ranker the order is simply by score.
Entries that hold the query come first (search._query). Then, where the caller asks for cuts (by default
only the check), hits scoring under `min_score` go, and a dynamic gap keeps only clear winners: sorted by
relevance, the list is cut at the first drop between neighbours larger than `gap` (see `cut`).
"""
from __future__ import annotations

import re
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass

from gitmem.recall.query import Query

RRF_K = 60
CANDIDATES = 30
BUDGET = 500               # matches bm25() may score in one stage
POSTINGS = 20000           # word entries bm25() may walk to weigh the words of one stage
SECONDS_PER_DAY = 86400.0
STRENGTH = 0.3             # how far BM25's own score (relative to the best) moves relevance, against coverage
# "No memory of that" for words: an entry holds the question (`holds_query`) when it holds more of what the query
# says than it misses, i.e. over half of the query's idf weight (Query.coverage). It is the words'
# counterpart of a model's raw-cosine floor, and the check "is this known at all?" (search's `known_only`)
# keeps only such entries, so --all (which skips min_score and the gap) never lifts one that does not. An
# entry of the agent's own domain shares common words with any question about that domain ("refund",
# "annual", "plans"); only one that also holds the question's rarer, heavier words answers it.
COVERAGE_FLOOR = 0.5
# ...and hold it in one place: the entry's title and at most PASSAGE neighbouring sentences. A long entry
# (a 40-line close, a cycle's Evidence) gathers a question's words from sentences about other things; a fact
# that answers the question says them together.
PASSAGE = 2
_SENTENCE_END = re.compile(r"(?<=[.;!?])\s+|\n+")


@dataclass(frozen=True)
class Filter:
    """Which documents a search may return. `workspaces` None means every workspace."""

    workspaces: tuple[str, ...] | None = None
    kinds: tuple[str, ...] | None = None
    since: float | None = None
    until: float | None = None

    def where(self, alias: str = "d") -> tuple[str, list[str | float]]:
        clauses: list[str] = ["1"]
        params: list[str | float] = []
        if self.workspaces is not None:
            marks = ",".join("?" * len(self.workspaces))
            # Commits shared by several workspaces belong to all of them.
            clauses.append(f"({alias}.workspace IN ({marks}) OR ({alias}.kind = 'commit' AND {alias}.workspace = ''))")
            params += list(self.workspaces)
        if self.kinds:
            clauses.append(f"{alias}.kind IN ({','.join('?' * len(self.kinds))})")
            params += list(self.kinds)
        if self.since is not None:
            clauses.append(f"{alias}.ts >= ?")
            params.append(self.since)
        if self.until is not None:
            clauses.append(f"{alias}.ts <= ?")
            params.append(self.until)
        return " AND ".join(clauses), params


# A ranker returns (doc id, relevance 0..1), best first, at most `limit` of them, honouring the filter.
Ranker = Callable[[sqlite3.Connection, Query, Filter, int], list[tuple[int, float]]]


@dataclass(frozen=True)
class Stage:
    expr: str          # an FTS5 expression of quoted words
    postings: int      # entries bm25() must walk to weigh the words (it counts each word's entries)
    matches: int       # at most this many entries match


def expressions(query: Query) -> list[Stage]:
    """Where candidates come from: entries holding every word, then entries holding the rarest words.

    The OR stage takes the rarest words while their entries add up to at most BUDGET (always at least
    the rarest word). Common words still count in coverage; they just do not bring in candidates alone.
    """
    rarest = query.rarest()
    if not rarest:
        return []
    counts = [query.df[word] for word in rarest]
    every = " AND ".join(query.expr(word) for word in rarest)
    found = [Stage(every, sum(counts), counts[0])] if len(rarest) > 1 else []
    chosen: list[str] = []
    total = 0
    for word, count in zip(rarest, counts, strict=False):
        if chosen and total + count > BUDGET:
            break
        chosen.append(word)
        total += count
    found.append(Stage(" OR ".join(query.expr(word) for word in chosen), total, total))
    return found


def _stage_rows(conn: sqlite3.Connection, stage: Stage, where: str, params: list[str | float],
                limit: int) -> dict[int, float]:
    """(doc id -> strength 0..1) for one stage.

    FTS5's bm25() walks every entry of every word to weigh it, then costs 10-20 us per match, so it runs
    only when both are small (bounded latency at any history size). Otherwise the stage takes the most
    recently indexed matches, each at full strength: coverage and recency then rank them.
    """
    if stage.postings <= POSTINGS and stage.matches <= BUDGET:
        rows = conn.execute(
            f"SELECT d.id, bm25(fts, 2.0, 1.0) FROM fts JOIN docs d ON d.id = fts.rowid"
            f" WHERE fts MATCH ? AND {where} ORDER BY 2 LIMIT ?", [stage.expr, *params, limit]).fetchall()
        best = rows[0][1] if rows and rows[0][1] else -1e-9     # FTS5 bm25 is negative: lower is better
        return {doc_id: min(1.0, value / best) for doc_id, value in rows}
    rows = conn.execute(
        f"SELECT d.id FROM fts JOIN docs d ON d.id = fts.rowid WHERE fts MATCH ? AND {where}"
        f" ORDER BY fts.rowid DESC LIMIT ?", [stage.expr, *params, limit]).fetchall()
    return {doc_id: 1.0 for doc_id, in rows}


def bm25_ranker(conn: sqlite3.Connection, query: Query, flt: Filter, limit: int) -> list[tuple[int, float]]:
    where, params = flt.where()
    raw: dict[int, float] = {}
    for stage in expressions(query):
        for doc_id, strength in _stage_rows(conn, stage, where, params, limit).items():
            raw.setdefault(doc_id, strength)                    # strength within its own stage
        if len(raw) >= limit:
            break
    if not raw:
        return []
    marks = ",".join("?" * len(raw))
    texts = {doc_id: (title, body) for doc_id, title, body in conn.execute(
        f"SELECT rowid, title, body FROM fts WHERE rowid IN ({marks})", list(raw)).fetchall()}
    scored = []
    for doc_id, strength in raw.items():
        title, body = texts.get(doc_id, ("", ""))
        covered = query.coverage(conn, f"{title} {body}")
        # Half of it counts only where the entry says it together: a long entry (a session, a 40-line close)
        # gathers a question's common words from sentences about other things.
        together = min(covered, passage_coverage(conn, query, title, body))
        scored.append((doc_id, (covered + together) / 2 * (1.0 - STRENGTH + STRENGTH * strength)))
    return sorted(scored, key=lambda item: -item[1])


def holds_query(conn: sqlite3.Connection, query: Query, title: str, body: str) -> bool:
    """Whether an entry is evidence that memory knows what the query asks: it holds at least COVERAGE_FLOOR of
    the query in one passage. Not a condition of being found (the best evidence is ranked whatever its share:
    a question rarely says its answer's words), but of "known at all" (search.search's `known_only`)."""
    covered = query.coverage(conn, f"{title} {body}")
    # A passage holds no more of the query than its entry: the whole entry is the cheap first test.
    return covered >= COVERAGE_FLOOR and judged_coverage(conn, query, title, body, covered) >= COVERAGE_FLOOR


def _sentences(body: str) -> list[str]:
    return [part for part in _SENTENCE_END.split(body) if part.strip()]


def judged_coverage(conn: sqlite3.Connection, query: Query, title: str, body: str,
                    covered: float | None = None) -> float:
    """What COVERAGE_FLOOR judges of an entry: the most of the query (Query.coverage) that one passage of it
    holds, and never more than the whole entry holds (`covered`, when already known)."""
    whole = query.coverage(conn, f"{title} {body}") if covered is None else covered
    return min(passage_coverage(conn, query, title, body), whole)


def passage_coverage(conn: sqlite3.Connection, query: Query, title: str, body: str) -> float:
    """The most of the query (Query.coverage) that one passage of the entry holds (`passages`): each sentence's
    words are found once, and a passage holds what its title and its sentences hold."""
    return _best_passage_start(conn, query, title, _sentences(body))[1]


def best_passage(conn: sqlite3.Connection, query: Query, body: str, *, around: int) -> str:
    """The sentences of `body` that hold the most of the query (the passage `passage_coverage` judges, without a
    title), widened by `around` sentences on each side: where the entry says what the question asks about."""
    sentences = _sentences(body)
    start, _ = _best_passage_start(conn, query, "", sentences)
    return " ".join(sentences[max(0, start - around):start + PASSAGE + around])


def _best_passage_start(conn: sqlite3.Connection, query: Query, title: str, sentences: list[str]) -> tuple[int, float]:
    """(first sentence, share of the query) of the passage (the title and PASSAGE neighbouring sentences) that
    holds the most of the query; the earliest of equals."""
    heading = query.held(conn, title)
    held = [query.held(conn, sentence) for sentence in sentences] or [set()]
    shares = [query.share(heading.union(*held[start:start + PASSAGE]))
              for start in range(max(1, len(held) - PASSAGE + 1))]
    best = max(range(len(shares)), key=shares.__getitem__)
    return best, shares[best]


RANKERS: dict[str, Ranker] = {"bm25": bm25_ranker}


def register_ranker(name: str, ranker: Ranker) -> None:
    """Make a ranker available to config recall.rankers (a semantic ranker would register here)."""
    RANKERS[name] = ranker


def recency(ts: float | None, kind: str, reference: float | None, *, half_life: float, weight: float) -> float:
    if ts is None:
        fresh = 1.0 if kind == "rule" else 0.5
    elif reference is None or half_life <= 0:
        fresh = 1.0
    else:
        fresh = 0.5 ** (max(0.0, reference - ts) / SECONDS_PER_DAY / half_life)
    return 1.0 - weight + weight * fresh


def rrf(place: int, weight: float = 1.0) -> float:
    """Reciprocal rank fusion's share for an entry at `place` (1 = first) of a list weighing `weight`."""
    return weight / (RRF_K + place)


def fuse(lists: dict[str, list[tuple[int, float]]], weights: dict[str, float],
         boost: dict[int, float]) -> list[tuple[int, float, float]]:
    """Weighted reciprocal rank fusion of recency-boosted lists: (doc id, score, relevance) best first."""
    fused: dict[int, float] = {}
    score: dict[int, float] = {}
    relevance: dict[int, float] = {}
    lists = {name: items for name, items in lists.items() if weights.get(name, 0.0) > 0}
    for name, items in lists.items():
        weight = weights[name]
        boosted = sorted(((doc_id, rel, rel * boost.get(doc_id, 1.0)) for doc_id, rel in items), key=lambda x: -x[2])
        for rank, (doc_id, rel, value) in enumerate(boosted, start=1):
            fused[doc_id] = fused.get(doc_id, 0.0) + rrf(rank, weight)
            score[doc_id] = max(score.get(doc_id, 0.0), value)
            relevance[doc_id] = max(relevance.get(doc_id, 0.0), rel)
    # The recency factor scales the fused value too: between entries the rankers rate alike (one first by
    # words, the other by meaning), the latest word on the subject comes first.
    fused = {doc_id: value * boost.get(doc_id, 1.0) for doc_id, value in fused.items()}
    order = (lambda d: (-score[d], d)) if len(lists) == 1 else (lambda d: (-fused[d], -score[d], d))
    return [(doc_id, score[doc_id], relevance[doc_id]) for doc_id in sorted(score, key=order)]


def cut(scored: list[tuple[int, float, float]], *, min_score: float, gap: float, limit: int) -> list[tuple[int, float]]:
    """Drop hits under `min_score`; then keep only the clear winners.

    The gap is judged on relevance, not on the recency-boosted score, so that age alone never makes a
    "clear winner": relevances are sorted, and everything below the first drop larger than `gap`
    between neighbours goes. The survivors keep their order.
    """
    kept = [item for item in scored if item[1] >= min_score]
    levels = sorted((item[2] for item in kept), reverse=True)
    floor = next((levels[i - 1] for i in range(1, len(levels)) if levels[i - 1] - levels[i] > gap), None)
    if floor is not None:
        kept = [item for item in kept if item[2] >= floor]
    return [(doc_id, score) for doc_id, score, _ in kept[:limit]]
