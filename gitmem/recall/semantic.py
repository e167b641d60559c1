"""The semantic ranker: entries whose windows mean what the query means, whatever their words.

A query is embedded like a window (its content words, the store's token weights), taken into the fitted space,
and compared with every live row: exactly when the store is small, otherwise in two steps (sign bits for all
rows, then exact scores for the best CANDIDATES). An entry scores as its best window. A window's score s
is its similarity in standard deviations of this query's scores over the whole store (vectorfit.py),
divided by sqrt(2 ln rows), the expected largest of that many unrelated rows: about 1 for the best of the
junk, whatever the memory's size. Relevance is s / (s + recall.semantic_scale) for s > 0: 0..1, in the
order of the scores, and 0.5 at the scale. The scale is calibrated on the paraphrase benchmark so that
`recall.min_score` keeps meaning "no memory of that" when the words differ.
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


def ranker(store: Store, model: Encoder, scale: float, workspaces: int) -> Any:
    """A `rank.Ranker` over `store`: (entry id, relevance 0..1), best first. `workspaces`: how many the
    index holds (with one, a workspace filter lets every entry through)."""
    def rank(conn: sqlite3.Connection, query: Query, flt: Filter, limit: int) -> list[tuple[int, float]]:
        rows, sims = similarities(store, model, query.text, _mask(conn, store, flt, workspaces))
        best: dict[int, float] = {}
        for doc_id, sim in zip(store.doc[rows].tolist(), sims.tolist(), strict=False):
            if sim <= 0 or len(best) >= limit:
                break
            best.setdefault(doc_id, sim / (sim + scale))
        return list(best.items())
    return rank


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
