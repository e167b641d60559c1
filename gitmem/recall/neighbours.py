"""Context from the entry before: a LOG entry is read with the one just before it, written the same day.

A question is often answered by an entry that does not say the question's words, because the entry before it
said them: a reply ("I've had them for 3 years now") after its question ("How long have you had the
turtles?"), the result of a cycle after the cycle that named what it was about. Passage retrieval knows this as
context from adjacent passages: a passage's score takes a share of its neighbour's. Here the entry just after a
candidate in its LOG, written the same day, takes LENT of the candidate's relevance (less when it is long:
SHORT), as a second chance to be relevant (noisy-or: relevance + share x neighbour's x (1 - relevance)), so an
entry never loses relevance of its own, and one that holds nothing of the question comes in ranked by what it
borrows, below the entry it borrows from.

Only for the evidence call ("what is the best evidence?"): the check ("is this known at all?", search's
`known_only`) judges each entry by what it says itself, so a borrowed word never makes something known.
"""
from __future__ import annotations

import sqlite3

from gitmem.memory import volumes
from gitmem.recall.rank import Filter

LENT = 0.5             # the share of the entry before's relevance an entry takes
LENDERS = 10           # only the best candidates lend: each entry brought in is judged and shown like any other
# A reply needs its context; a long entry says what it is about itself. An entry of more than SHORT characters
# (a few sentences: a turn, a cycle's entry) takes a share shrunk in proportion, so a session of thousands of
# characters written the same day as an unrelated one borrows next to nothing from it.
SHORT = 400
KIND = "log"           # LOG entries are a sequence in time; the other kinds are not read in order


def lend(conn: sqlite3.Connection, items: list[tuple[int, float]], flt: Filter) -> list[tuple[int, float]]:
    """`items` (doc id, relevance 0..1, best first), each entry just after one of the LENDERS best in its LOG on
    the same day (that the filter allows) taking LENT of its relevance: best first."""
    if not items or LENT <= 0:
        return items
    relevance = dict(items)
    lenders = [doc_id for doc_id, _ in items[:LENDERS]]
    marks = ",".join("?" * len(lenders))
    after: dict[int, int] = {}          # the entry just after -> the candidate before it
    for doc_id, path, line, rel, day in conn.execute(
            f"SELECT id, path, line, rel, substr(date, 1, 10) FROM docs WHERE id IN ({marks}) AND kind = ?"
            f" AND date != ''", [*lenders, KIND]).fetchall():
        # The least line past the candidate's in the same file (docs_by_path), if written the same day.
        row = conn.execute("SELECT id, substr(date, 1, 10) FROM docs WHERE path = ? AND rel = ? AND line > ?"
                           " AND kind = ? ORDER BY line LIMIT 1", (path, rel, line, KIND)).fetchone()
        if row is None and (following := _next_part(conn, path)) is not None:
            row = conn.execute("SELECT id, substr(date, 1, 10) FROM docs WHERE path = ? AND kind = ?"
                               " ORDER BY line LIMIT 1", (following, KIND)).fetchone()
        if row is not None and row[1] == day:
            after[row[0]] = doc_id
    if not after:
        return items
    where, params = flt.where()
    allowed = {doc_id for doc_id, in conn.execute(
        f"SELECT d.id FROM docs d WHERE d.id IN ({','.join('?' * len(after))}) AND {where}", [*after, *params])}
    if not allowed:
        return items
    found = dict(relevance)
    sizes = {doc_id: size for doc_id, size in conn.execute(
        f"SELECT rowid, length(title) + length(body) FROM fts WHERE rowid IN ({','.join('?' * len(allowed))})",
        list(allowed))}
    for doc_id in allowed:
        own = found.get(doc_id, 0.0)
        share = LENT * min(1.0, SHORT / max(1, sizes.get(doc_id, SHORT)))
        found[doc_id] = own + share * relevance[after[doc_id]] * (1.0 - own)
    return sorted(found.items(), key=lambda item: -item[1])


def _next_part(conn: sqlite3.Connection, path: str) -> str | None:
    """The part of LOG's history after `path` when it is a sealed volume (rules 6): the next volume, or LOG.md
    after the last; so the last entry of a volume has the entry after it, as in the unsealed LOG."""
    for log_path, in conn.execute("SELECT path FROM sources WHERE role = 'log'"):
        number = volumes.volume_number(log_path, path)
        if number is not None:
            after = volumes.volume_path(log_path, number + 1)
            held = conn.execute("SELECT 1 FROM docs WHERE path = ? LIMIT 1", (after,)).fetchone()
            return after if held is not None else log_path
    return None
