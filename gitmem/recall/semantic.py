"""The semantic ranker: entries whose windows mean what the query means, whatever their words.

A query is embedded like a window (its content words, the store's token weights), taken into the fitted space,
and compared with every live row: exactly when the store is small, otherwise in two steps (sign bits for all
rows, then exact scores for the best CANDIDATES). An entry scores as its best window. A window's score s
is its similarity in standard deviations of this query's scores over the whole store (vectorfit.py),
divided by sqrt(2 ln rows), the expected largest of that many unrelated rows: about 1 for the best of the
junk, whatever the memory's size. Relevance is s / (s + recall.semantic_scale) for s > 0: 0..1, in the
order of the scores, and 0.5 at the scale. The scale is calibrated on the paraphrase benchmark so that
`recall.min_score` keeps meaning "no memory of that" when the words differ. Beside a word ranker (hybrid),
a window holding some of the query's words answers only for the words it lacks (`words_leave_open`).
"""
from __future__ import annotations

import sqlite3
from typing import TYPE_CHECKING, Any

from gitmem.recall import chunks
from gitmem.recall.query import Query
from gitmem.recall.rank import Filter
from gitmem.recall.vectorfit import sign_bits

if TYPE_CHECKING:
    from gitmem.recall.encoder import Encoder
    from gitmem.recall.vectors import Store

EXACT_ROWS = 16_384            # up to this many rows, every row is scored exactly
CANDIDATES = 4_096             # rows scored exactly after the sign-bit pass
EXAMINED = 512                 # rows, best first, hybrid's meaning candidates are taken from
MAX_RESTS = 32                 # distinct sets of missing words embedded for one query (words_leave_open)
SNIPPET_CHARS = 200


def similarities(store: Store, model: Encoder, text: str, allowed: Any = None) -> tuple[Any, Any]:
    """(rows, similarity) of the rows worth looking at, best first; empty when the query has no tokens.

    `allowed`, when given, is a boolean mask over the rows (entries outside a filter). A row whose raw cosine
    with the query is under the model's floor is never worth looking at: however much it stands out in this
    memory, it is unrelated (a fact planted in uniform filler always stands out)."""
    import numpy as np

    aim = _aim(store, model, text)
    if not store.rows or aim is None:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32)
    fitted, direction, offset, spread, unit = aim
    live = store.doc >= 0
    if allowed is not None:
        live &= allowed
    if store.rows <= EXACT_ROWS:
        dense = store.dense()
        scores = np.einsum("ij,j->i", dense, direction) - offset     # einsum: no BLAS thread start-up
        rows = np.nonzero(live)[0]
        exact = scores[rows]
        raw = np.einsum("ij,j->i", dense, unit)[rows]                # the rows are most of them: no copy
    else:
        rows = _shortlist(store, fitted, live)
        vec = store.vec[rows].astype(np.float32)
        exact = np.einsum("ij,j->i", vec, direction) * store.scale[rows] - offset
        raw = np.einsum("ij,j->i", vec, unit) * store.scale[rows]
    related = raw >= model.floor
    rows, exact = rows[related], exact[related]
    order = np.argsort(-exact, kind="stable")
    # In sds, over the sd's expected maximum among this many unrelated rows (sqrt(2 ln n)): a score that
    # means the same in a memory of a hundred windows and of a million.
    return rows[order], exact[order] / (spread * float(np.sqrt(2.0 * np.log(max(store.rows, 3)))))


def _shortlist(store: Store, fitted: Any, live: Any) -> Any:
    """The CANDIDATES live rows most likely to score best, from their sign bits: a row's score is about its
    length in the fitted space times cos(pi x (bits that differ from the query's) / dim)."""
    import numpy as np

    query = sign_bits(fitted[None, :])[0]
    distance = np.zeros(store.rows, dtype=np.uint16)
    differ = np.empty(store.rows, dtype=np.uint64)
    count = np.empty(store.rows, dtype=np.uint8)
    for word, column in enumerate(store.bits()):
        np.bitwise_xor(column, query[word], out=differ)
        np.bitwise_count(differ, out=count)
        distance += count
    cosine = np.cos(np.arange(store.dim + 1) * (np.pi / store.dim)).astype(np.float32)
    rough = cosine[distance]
    rough *= store.norm
    rough[~live] = -np.inf
    rows = np.argpartition(rough, store.rows - CANDIDATES)[store.rows - CANDIDATES:]
    return rows[live[rows]]


def _aim(store: Store, model: Encoder, text: str) -> tuple[Any, Any, float, float, Any] | None:
    """The query in the fitted space, the direction that scores rows (s(c) = c . direction - offset), the
    standard deviation of s over the rows the store was fitted on, and the query's own unit vector (for the
    raw floor). Kept on the store: snippets ask again."""
    if text not in store.aims:
        if len(store.aims) > 64:
            store.aims.clear()
        store.aims[text] = _compute_aim(store, model, text)
    aim: tuple[Any, Any, float, float, Any] | None = store.aims[text]
    return aim


def _compute_aim(store: Store, model: Encoder, text: str) -> tuple[Any, Any, float, float, Any] | None:
    import numpy as np

    query = model.pool([chunks.query_text(text)], store.fit.weighted)[0]
    if not query.any():
        return None
    fitted = store.fit.whiten @ (query - store.fit.mean)
    fitted /= max(float(np.linalg.norm(fitted)), 1e-12)
    direction = store.fit.whiten @ fitted
    spread = float(np.sqrt(max(float(direction @ store.fit.spread @ direction), 0.0)))
    return fitted, direction, float(store.fit.mean @ direction), spread if spread > 1e-9 else 1.0, query


def passage_finder(store: Store, model: Encoder) -> Any:
    """A function (query, entry id, title, body) -> the part of the body whose window is closest to the query.

    The windows' vectors are the store's own rows of that entry when it has one per window (they were appended
    in window order); only otherwise are the windows embedded again, which costs a transformer a run per hit."""
    import numpy as np

    def passage(text: str, doc_id: int, title: str, body: str) -> str:
        spans = chunks.window_spans(body)
        aim = _aim(store, model, text)
        if aim is None or len(spans) < 2:
            return f"{title} — {body}"[:SNIPPET_CHARS]
        rows = np.nonzero(store.doc == doc_id)[0]
        if len(rows) == len(spans):
            windows = store.vec[rows].astype(np.float32) * store.scale[rows, None]
        else:
            windows = model.pool(chunks.window_texts(title, spans), store.fit.weighted)
        scores = np.einsum("ij,j->i", windows, aim[1])
        _, start, end = spans[int(scores.argmax())]
        excerpt = body[start:end]
        if len(excerpt) > SNIPPET_CHARS:
            excerpt = excerpt[:SNIPPET_CHARS].rsplit(" ", 1)[0]
        return ("…" if start else "") + excerpt + ("…" if end < len(body) else "")
    return passage


def ranker(store: Store, model: Encoder, scale: float, workspaces: int, *, beside_words: bool = False) -> Any:
    """A `rank.Ranker` over `store`: (entry id, relevance 0..1), best first. `workspaces`: how many the
    index holds (with one, a workspace filter lets every entry through). `beside_words`: a word ranker runs
    too (hybrid), so meaning answers only for what the words leave open (`words_leave_open`)."""
    def rank(conn: sqlite3.Connection, query: Query, flt: Filter, limit: int) -> list[tuple[int, float]]:
        rows, sims = similarities(store, model, query.text, _mask(conn, store, flt, workspaces))
        answers = None
        if beside_words:        # the words' verdict reads windows: it looks at the best EXAMINED rows only
            answers = words_leave_open(conn, store, model, query)
            rows, sims = rows[:EXAMINED], sims[:EXAMINED]
        best: dict[int, float] = {}
        for row, doc_id, sim in zip(rows.tolist(), store.doc[rows].tolist(), sims.tolist(), strict=False):
            if sim <= 0 or len(best) >= limit:
                break
            if doc_id not in best and (answers is None or answers(row, doc_id)):
                best[doc_id] = sim / (sim + scale)
        return list(best.items())
    return rank


def words_leave_open(conn: sqlite3.Connection, store: Store, model: Encoder, query: Query) -> Any:
    """A test (row, entry id) -> whether the row's window answers the query by meaning, beside the words.

    A window that holds some of the query's own words was already judged by them (rank.py's coverage in one
    passage), and a sentence encoder scores shared words high whatever the rest says: "why did the refund for
    annual plans take two weeks?" is close to any window about refunds of annual plans. So such a window
    answers by meaning only if it also means what the words it lacks say: its raw cosine with those words
    alone clears the model's floor ("overnight quit" against "nightly backups stopped"). A window holding
    every word of the query is the words' to answer."""
    rest = rest_cosine(conn, store, model, query)
    return lambda row, doc_id: rest(row, doc_id) >= model.floor


UNASKED = 2.0                  # rest_cosine of a window that holds none of the query's words: nothing to ask


def rest_cosine(conn: sqlite3.Connection, store: Store, model: Encoder, query: Query) -> Any:
    """A function (row, entry id) -> the raw cosine of the row with the query's words its window lacks:
    UNASKED when it holds none of them, -1 when it holds them all (see `words_leave_open`)."""
    import numpy as np

    from gitmem.recall.query import WORD_RE, fold_for_search, stems

    asked, terms = list(query.words), query.stems      # its content words, folded: at most MAX_TERMS (query.py)
    windows: dict[int, tuple[Any, list[str]]] = {}
    rests: dict[tuple[str, ...], Any] = {}
    # Rows are appended entry by entry in id order, so ids only grow down the store (-1 marks a deleted
    # entry's rows): an entry's rows are found by bisection, not by a pass over every row.
    ascending = np.maximum.accumulate(store.doc) if store.rows else store.doc

    def rows_of(doc_id: int, row: int) -> Any:
        low, high = np.searchsorted(ascending, [doc_id, doc_id + 1])
        own = low + np.flatnonzero(store.doc[low:high] == doc_id)
        return own if row in own else np.flatnonzero(store.doc == doc_id)

    def held(row: int, doc_id: int) -> set[str]:
        if doc_id not in windows:
            # The index says at once whether the entry holds any of the words; only then are its windows read.
            entry = conn.execute("SELECT title, body FROM fts WHERE fts MATCH ? AND rowid = ?",
                                 (query.match, doc_id)).fetchone() if query.match else None
            texts = chunks.windows(*entry) if entry is not None else []
            windows[doc_id] = (rows_of(doc_id, row) if texts else store.doc[:0], texts)
        own, texts = windows[doc_id]
        if not texts:
            return set()
        at = int(np.searchsorted(own, row))
        # The entry's rows are its windows in order; should they not be (a store another version wrote), the
        # whole entry stands for the window: it holds at least as many of the query's words.
        window = texts[at] if len(own) == len(texts) and at < len(texts) else " ".join(texts)
        found = set(stems(conn, WORD_RE.findall(fold_for_search(window))).values())
        return {word for word in asked if terms.get(word, word) in found}

    def cosine(row: int, doc_id: int) -> float:
        shared = held(row, doc_id) if asked else set()
        if not shared:
            return UNASKED
        rest = tuple(word for word in asked if word not in shared)
        if not rest:
            return -1.0
        if rest not in rests:
            if len(rests) >= MAX_RESTS:
                return -1.0              # a bound on model runs per query: past it, the words judge alone
            rests[rest] = model.pool([" ".join(rest)], store.fit.weighted)[0]
        return float((store.vec[row].astype(np.float32) * store.scale[row]) @ rests[rest])
    return cosine


def _mask(conn: sqlite3.Connection, store: Store, flt: Filter, workspaces: int) -> Any:
    """The rows a filter allows, or None when it allows every entry (the usual case: no filter, one workspace)."""
    import numpy as np

    if not (flt.kinds or flt.since is not None or flt.until is not None) and (flt.workspaces is None
                                                                             or workspaces == 1):
        return None
    where, params = flt.where()
    allowed = np.fromiter((row[0] for row in conn.execute(f"SELECT d.id FROM docs d WHERE {where}", params)),
                          dtype=np.int64)
    return np.isin(store.doc, allowed)
