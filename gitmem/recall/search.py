"""`search()`: the one engine behind `gitmem recall` and the agent's `recall` tool."""
from __future__ import annotations

import sqlite3
from dataclasses import asdict, dataclass
from datetime import date, datetime, time
from typing import Any

from gitmem.config import Config
from gitmem.recall import rank
from gitmem.recall.corpus import KINDS
from gitmem.recall.database import RecallError
from gitmem.recall.index import DEFAULT, Index
from gitmem.recall.query import analyze
from gitmem.workspace import Workspace

MARK = "**"                  # snippet highlight: plain text that reads well in a terminal and in a prompt
SNIPPET_TOKENS = 16


@dataclass(frozen=True)
class Hit:
    kind: str
    id: str
    date: str
    path: str
    line: int
    snippet: str
    score: float
    workspace: str = ""      # set when searching all workspaces ("default" for the top-level memory)

    def __str__(self) -> str:
        where = f" · {self.workspace}" if self.workspace else ""
        label = " ".join(part for part in (self.kind, self.id, self.date) if part)
        return f"{self.path}:{self.line} [{label}{where}] {self.snippet}"

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "score": round(self.score, 4)}


def parse_when(value: str | date | datetime | None, config: Config, *, end: bool) -> float | None:
    """A bound for --since/--until: a date (the whole day, in the configured zone) or a timestamp."""
    if value is None or value == "":
        return None
    if isinstance(value, datetime):
        moment = value if value.tzinfo else value.replace(tzinfo=config.tzinfo())
        return moment.timestamp()
    if isinstance(value, date):
        day = value
    else:
        text = value.strip().replace("T", " ").removesuffix(" UTC").removesuffix("Z")
        try:
            return parse_when(datetime.fromisoformat(text), config, end=end) if len(text) > 10 \
                else parse_when(date.fromisoformat(text), config, end=end)
        except ValueError:
            raise RecallError(f"{value!r} is not a date; use YYYY-MM-DD or YYYY-MM-DD HH:MM") from None
    # The day's last millisecond, not the next day's start less one: 9999-12-31 has no next day.
    moment = datetime.combine(day, time(23, 59, 59, 999000) if end else time(0, 0), tzinfo=config.tzinfo())
    return moment.timestamp()


def search(ws: Workspace, query: str, *, kinds: list[str] | tuple[str, ...] | None = None,
           since: str | date | datetime | None = None, until: str | date | datetime | None = None,
           limit: int | None = None, all_workspaces: bool = False, min_score: float | None = None,
           gap: float | None = None) -> list[Hit]:
    """Search the memory of the workspace (or of all workspaces): best hits first, maybe none."""
    index = Index(ws)
    try:
        return run(index, query, kinds=kinds, since=since, until=until, limit=limit,
                   all_workspaces=all_workspaces, min_score=min_score, gap=gap)
    finally:
        index.close()


def rebuild(ws: Workspace) -> int:
    """Throw the index away and build it again from the files and history; returns the entry count."""
    index = Index(ws)
    try:
        return int(index.rebuild().execute("SELECT count(*) FROM docs").fetchone()[0])
    finally:
        index.close()


def run(index: Index, query: str, *, kinds: list[str] | tuple[str, ...] | None = None,
        since: str | date | datetime | None = None, until: str | date | datetime | None = None,
        limit: int | None = None,
        all_workspaces: bool = False, min_score: float | None = None, gap: float | None = None) -> list[Hit]:
    """`search` on an open index, so a long-lived caller (a benchmark, an agent session) can reuse it."""
    config = index.config
    bad = sorted(set(kinds or ()) - set(KINDS))
    if bad:
        raise RecallError(f"unknown kind {', '.join(bad)}; use one of {', '.join(KINDS)}")
    flt = rank.Filter(None if all_workspaces else (config.workspace or DEFAULT,),
                      tuple(kinds) if kinds else None,
                      parse_when(since, config, end=False), parse_when(until, config, end=True))
    settings = config.recall
    limit = settings.limit if limit is None else limit
    for attempt in range(2):
        conn = index.refresh()
        try:
            return _query(conn, query, flt, limit, settings, all_workspaces,
                          settings.min_score if min_score is None else min_score,
                          settings.gap if gap is None else gap)
        except sqlite3.DatabaseError:
            if attempt:
                raise
            index.rebuild()       # damage that only showed while reading: rebuild once and ask again
    return []


def _query(conn: sqlite3.Connection, text: str, flt: rank.Filter, limit: int, settings: Any,
           all_workspaces: bool, min_score: float, gap: float) -> list[Hit]:
    if limit <= 0:
        return []
    parsed = analyze(conn, text)
    if not parsed.words:
        return []
    weights = {name: weight for name, weight in settings.rankers if weight > 0}
    unknown = sorted(set(weights) - set(rank.RANKERS))
    if unknown:
        raise RecallError(f"recall.rankers: no ranker named {', '.join(unknown)} (known: {', '.join(rank.RANKERS)})")
    depth = max(rank.CANDIDATES, limit * 4)
    lists = {name: rank.RANKERS[name](conn, parsed, flt, depth) for name in weights}
    ids = sorted({doc_id for items in lists.values() for doc_id, _ in items})
    if not ids:
        return []
    rows = _rows(conn, ids)
    reference = _newest(rows.values())
    boost = {doc_id: rank.recency(row["ts"], row["kind"], reference, half_life=settings.recency_half_life_days,
                                  weight=settings.recency_weight) for doc_id, row in rows.items()}
    kept = rank.cut(rank.fuse(lists, weights, boost), min_score=min_score, gap=gap, limit=limit)
    hits = []
    for doc_id, score in kept:
        row = rows[doc_id]
        workspace = (row["workspace"] or "default") if all_workspaces else ""
        hits.append(Hit(row["kind"], row["ident"], row["date"], row["path"], row["line"],
                        _snippet(conn, parsed.match, doc_id), score, workspace))
    return hits


def _newest(rows: Any) -> float | None:
    """The "now" that ages are counted from: the newest dated entry among the candidates.

    Relative to the candidates, not the wall clock or the whole memory: what matters is which of the
    entries that answer the query is the latest word on it. Commit times are left out, as a commit made
    long after (a rebase, an import) would otherwise age every entry at once.
    """
    dated = [row["ts"] for row in rows if row["ts"] is not None and row["kind"] != "commit"]
    dated = dated or [row["ts"] for row in rows if row["ts"] is not None]
    return max(dated, default=None)


def _rows(conn: sqlite3.Connection, ids: list[int]) -> dict[int, dict[str, Any]]:
    marks = ",".join("?" * len(ids))
    found = {}
    for doc_id, kind, ident, ts, day, path, line, rel, workspace, lines in conn.execute(
            f"SELECT d.id, d.kind, d.ident, d.ts, d.date, d.path, d.line, d.rel, d.workspace, s.lines"
            f" FROM docs d LEFT JOIN sources s ON s.path = d.path WHERE d.id IN ({marks})", ids):
        # NOW lines are stored counted from the end of the file (see sync.py).
        found[doc_id] = {"kind": kind, "ident": ident, "ts": ts, "date": day, "path": path,
                         "line": line + (lines or 0) if rel else line, "workspace": workspace}
    return found


def _snippet(conn: sqlite3.Connection, match: str, doc_id: int) -> str:
    row = None
    if match:
        row = conn.execute(f"SELECT snippet(fts, -1, '{MARK}', '{MARK}', '…', {SNIPPET_TOKENS}) FROM fts"
                           " WHERE fts MATCH ? AND rowid = ?", (match, doc_id)).fetchone()
    if row is None:           # found by another ranker without a word match: show the start
        row = conn.execute("SELECT substr(title || ' — ' || body, 1, 160) FROM fts WHERE rowid = ?",
                           (doc_id,)).fetchone()
    return " ".join((row[0] if row else "").split())
