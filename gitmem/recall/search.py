"""`search()`: the one engine behind `gitmem recall` and the agent's `recall` tool.

Modes (config recall.mode, `gitmem recall --mode`): `bm25` (words), `semantic` (meaning: encoder.py, vectors.py,
semantic.py), `hybrid` (both, fused by rank.fuse), or `auto` (the default): hybrid when recall.model names a
sentence encoder the user saved (`onnx:DIRECTORY`) and [semantic-onnx] is installed, bm25 otherwise. The
shipped static model is not the default: on the labelled set it finds few paraphrases once it must say "no
memory of that" to questions about things never written (docs/recall.md has the figures); it stays an option
(`--mode hybrid`). Nothing of the semantic side is imported in bm25 mode.
"""
from __future__ import annotations

import sqlite3
from dataclasses import asdict, dataclass, fields
from datetime import date, datetime, time
from typing import TYPE_CHECKING, Any

from gitmem.checks.violation import Violation
from gitmem.config import Config, Recall
from gitmem.config.validate import number_problem
from gitmem.memory import dates
from gitmem.memory.display import printable
from gitmem.recall import encoder, exact, feedback, neighbours, rank, when
from gitmem.recall.corpus import KINDS
from gitmem.recall.database import RecallError
from gitmem.recall.hit_proof import Holder
from gitmem.recall.index import DEFAULT, Index, Progress, visible_to
from gitmem.recall.query import Query, analyze, bounded_query
from gitmem.secrets import scrub
from gitmem.workspace import Workspace

if TYPE_CHECKING:
    from gitmem.recall.vectors import Embedding

MARK = "**"                  # snippet highlight: plain text that reads well in a terminal and in a prompt
SNIPPET_TOKENS = 16
SHOWN_CHARS = 160            # a masked entry's text shown in place of its snippet


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
    holds: bool = True       # it holds most of the query in one place (rank.holds_query), or meaning found it

    def __str__(self) -> str:
        where = f" · {self.workspace}" if self.workspace else ""
        where += "" if self.holds else " · weak"
        label = " ".join(part for part in (self.kind, self.id, self.date) if part)
        return f"{self.path}:{self.line} [{label}{where}] {self.snippet}"

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "score": round(self.score, 4)}


class Hits(list[Hit]):
    """Hits, best first, and the mode that found them: bm25, semantic or hybrid."""

    def __init__(self, hits: list[Hit] | None = None, mode: str = "bm25",
                 undecodable: list[Violation] | None = None) -> None:
        super().__init__(hits or [])
        self.mode = mode
        # The lines of LOG the index holds with U+FFFD for bytes that are not UTF-8 (GM902): a hit may quote one.
        self.undecodable = undecodable or []

    @property
    def known(self) -> bool:
        """Whether memory holds what was asked: some hit holds most of the question (`Hit.holds`)."""
        return any(hit.holds for hit in self)

    def text(self) -> str:
        """The hits as `gitmem recall` and the agent's recall tool show them: a line each, and when none holds
        the question, a line first that says so, so that the nearest entries are never taken for an answer."""
        if not self:
            return NO_MEMORY
        lines = [str(hit) for hit in self]
        return "\n".join(lines if self.known else [WEAK, *lines])


NO_MEMORY = "no memory of that"
WEAK = "no entry holds most of the question; the nearest (weak) entries:"


def resolve_mode(config: Config, mode: str | None = None) -> str:
    """The mode a search runs in: the one asked for, or for `auto`, hybrid with an encoder the user saved."""
    wanted = mode or config.recall.mode
    if wanted == "auto":
        spec = config.recall.model
        return "hybrid" if encoder.is_saved_encoder(spec) and encoder.model_available(spec) else "bm25"
    if wanted not in ("bm25", "semantic", "hybrid"):
        raise RecallError(f"unknown recall mode {wanted!r}; use auto, bm25, semantic or hybrid")
    if wanted != "bm25" and not encoder.model_available(config.recall.model):
        needs = encoder.missing_model_message(config.recall.model, f"recall mode {wanted}")
        raise RecallError(f"{needs} (or use --mode bm25)")
    return wanted


def describe_recall_mode(config: Config) -> dict[str, str]:
    """The mode recall runs in here, for `gitmem status`: mode, model, and a note when it cannot run as set."""
    try:
        mode = mode_of(ranker_weights(config, resolve_mode(config)))
    except RecallError as err:
        return {"mode": "unavailable", "model": "", "note": str(err)}
    spec = config.recall.model
    note = "" if mode != "bm25" or not encoder.is_saved_encoder(spec) or encoder.model_available(spec) else \
        f"hybrid needs {encoder.model_install_line(spec)}"
    return {"mode": mode, "model": config.recall.model if mode != "bm25" else "", "note": note}


def ranker_weights(config: Config, mode: str) -> dict[str, float]:
    """recall.rankers narrowed to the mode: bm25 leaves out the semantic ranker, semantic keeps only it."""
    weights = {name: weight for name, weight in config.recall.rankers if weight > 0}
    if mode == "semantic":
        return {"semantic": weights.get("semantic", 1.0)}
    if mode == "bm25":
        weights.pop("semantic", None)
    return weights or {"bm25": 1.0}


def mode_of(weights: dict[str, float]) -> str:
    if "semantic" in weights:
        return "hybrid" if len(weights) > 1 else "semantic"
    return "bm25"


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
        try:
            return parse_when(dates.parse_day_or_time(value), config, end=end)
        except dates.NotADate as err:
            raise RecallError(str(err)) from None
    # The day's last millisecond, not the next day's start less one: 9999-12-31 has no next day.
    moment = datetime.combine(day, time(23, 59, 59, 999000) if end else time(0, 0), tzinfo=config.tzinfo())
    return moment.timestamp()


def search(ws: Workspace, query: str, *, kinds: list[str] | tuple[str, ...] | None = None,
           since: str | date | datetime | None = None, until: str | date | datetime | None = None,
           limit: int | None = None, all_workspaces: bool = False, min_score: float | None = None,
           gap: float | None = None, mode: str | None = None, progress: Embedding | None = None,
           known_only: bool = False) -> Hits:
    """Search the memory of the workspace (or of all workspaces): best hits first, maybe none.

    Two questions, two calls. By default, "what is the best evidence for this?": every entry that shares a word
    (or, in hybrid, a meaning over the model's floor) with the query is ranked, up to `limit`, and each hit says
    whether it holds most of the query in one place (`Hit.holds`, `Hits.known`); a question rarely says its
    answer's words, so that share is no condition of being found. With `known_only`, "is this known at all?":
    only hits that hold the query, after the cuts (recall.min_score and recall.gap), so a question about
    something never written gets no hit ("no memory of that").

    `mode` overrides recall.mode; `min_score` and `gap` set the cuts (0 and 1 turn them off; by default they
    apply to `known_only` calls only); `progress(done, total)` hears the entries embedded when the vectors must
    be built or brought up to date."""
    index = Index(ws)
    try:
        return run(index, query, kinds=kinds, since=since, until=until, limit=limit,
                   all_workspaces=all_workspaces, min_score=min_score, gap=gap, mode=mode, progress=progress,
                   known_only=known_only)
    finally:
        index.close()


def rebuild(ws: Workspace, progress: Progress | None = None) -> int:
    """Throw the index away and build it again from the files and history; returns the entry count.
    `progress(n)` hears each memory file and commit indexed (`rebuild_size` says how many)."""
    index = Index(ws)
    try:
        return int(index.rebuild(progress).execute("SELECT count(*) FROM docs").fetchone()[0])
    finally:
        index.close()


def rebuild_size(ws: Workspace) -> int:
    """How many items `rebuild` reports to its `progress`: the memory files and every commit."""
    return Index(ws).work()


def run(index: Index, query: str, *, kinds: list[str] | tuple[str, ...] | None = None,
        since: str | date | datetime | None = None, until: str | date | datetime | None = None,
        limit: int | None = None, all_workspaces: bool = False, min_score: float | None = None,
        gap: float | None = None, mode: str | None = None, progress: Embedding | None = None,
        known_only: bool = False, today: date | None = None) -> Hits:
    """`search` on an open index, so a long-lived caller (a benchmark, an agent session) can reuse it.

    A question that names a time ("before April 10", "3 weeks ago") is searched in it first, then over all
    time (recall.when), resolved against `today`: the real clock's date unless a test sets it."""
    bounded_query(query)
    config = index.config
    weights = ranker_weights(config, resolve_mode(config, mode))
    unknown = sorted(set(weights) - set(rank.RANKERS) - {"semantic"})
    if unknown:
        raise RecallError(f"recall.rankers: no ranker named {', '.join(unknown)} (known: {', '.join(rank.RANKERS)},"
                          " semantic)")
    bad = sorted(set(kinds or ()) - set(KINDS))
    if bad:
        raise RecallError(f"unknown kind {', '.join(bad)}; use one of {', '.join(KINDS)}")
    within_settings(limit=limit, min_score=min_score, gap=gap)
    flt = rank.Filter(None if all_workspaces else visible_to(index.scopes, config.workspace or DEFAULT),
                      tuple(kinds) if kinds else None,
                      parse_when(since, config, end=False), parse_when(until, config, end=True))
    settings = config.recall
    limit = settings.limit if limit is None else limit
    for attempt in range(2):
        conn = index.refresh()
        try:
            rankers = {name: rank.RANKERS[name] for name in weights if name != "semantic"}
            passage = None
            if "semantic" in weights:
                from gitmem.recall import semantic

                model = encoder.load_model(settings.model, index.root)
                store = index.vectors(model, progress)
                rankers["semantic"] = semantic.ranker(store, model, settings.semantic_scale, len(index.scopes),
                                                      beside_words=len(rankers) > 0)
                passage = semantic.passage_finder(store, model)
            cuts = (settings.min_score, settings.gap) if known_only else (0.0, 1.0)
            hits = _query(conn, query, flt, limit, settings, all_workspaces,
                          cuts[0] if min_score is None else min_score, cuts[1] if gap is None else gap,
                          rankers, weights, passage, Holder(index, conn), known_only,
                          _named_time(query, config, since, until, today))
            return Hits(hits, mode_of(weights), undecodable_indexed(conn))
        except sqlite3.DatabaseError:
            if attempt:
                raise
            index.rebuild()       # damage that only showed while reading: rebuild once and ask again
    return Hits([], mode_of(weights))


def undecodable_indexed(conn: sqlite3.Connection) -> list[Violation]:
    """GM902 at each line of an indexed LOG that was not UTF-8, as the index's sync state keeps them
    (gitmem.recall.incremental_sync): a row per LOG, read with the query, never the file again."""
    from gitmem import codes
    from gitmem.recall.incremental_sync import remembered, undecodable_lines

    rows = conn.execute("SELECT path, state FROM sources WHERE role = 'log'").fetchall()
    return sorted(Violation.of(codes.NOT_UTF8, path, line, byte=byte, reason=why)
                  for path, state in rows for line, byte, why in undecodable_lines(remembered(state)))


def within_settings(**given: float | None) -> None:
    """RecallError unless each number given lies in the bounds of the recall setting it stands in for
    (gitmem.config.Recall: `--limit` for recall.limit, ...): a limit past SQLite's integers was a traceback, and a
    NaN cut passed every range check and silently dropped every hit."""
    specs = {spec.name: spec for spec in fields(Recall)}
    for name, value in given.items():
        problem = None if value is None else number_problem(specs[name], value)
        if problem is not None:
            raise RecallError(f"recall: {name} {problem} (the bounds of recall.{name} in gitmem.yaml)")


def _named_time(query: str, config: Config, since: object, until: object,
                today: date | None) -> tuple[float, float] | None:
    """The time the question names ("before April 10", "3 weeks ago": recall.when) as timestamps, resolved
    against today on the real clock; None when it names none or the caller set --since/--until."""
    if since or until:
        return None
    span = when.named_span(query, today or datetime.now(config.tzinfo()).date())
    if span is None:
        return None
    return (parse_when(span.since, config, end=False) or float("-inf"),
            parse_when(span.until, config, end=True) or float("inf"))


def _query(conn: sqlite3.Connection, text: str, flt: rank.Filter, limit: int, settings: Any,
           all_workspaces: bool, min_score: float, gap: float, rankers: dict[str, rank.Ranker],
           weights: dict[str, float], passage: Any, holder: Holder, known_only: bool,
           named: tuple[float, float] | None = None) -> list[Hit]:
    if limit <= 0:
        return []
    parsed = analyze(conn, text)
    if not parsed.words:
        return []
    depth = max(rank.CANDIDATES, limit * 4)
    lists = {name: rankers[name](conn, parsed, flt, depth) for name in weights}
    holding = _Holding(conn, parsed, {doc_id for doc_id, _ in lists.get("semantic", ())})
    if not known_only and "bm25" in lists:     # the best evidence: what its best entries share (recall.feedback)
        lists["bm25"] = feedback.expand(conn, parsed, rankers["bm25"], flt, depth, lists["bm25"], holding)
        lists["bm25"] = exact.reorder(conn, parsed, lists["bm25"])   # past the best five, the words as written
        lists["bm25"] = neighbours.lend(conn, lists["bm25"], flt)    # a reply read with what it replies to
    if known_only:            # before fusing: an entry that does not hold the query takes no rank from one that does
        lists = {name: [item for item in items if holding(item[0])] for name, items in lists.items()}
    ids = sorted({doc_id for items in lists.values() for doc_id, _ in items})
    if not ids:
        return []
    rows = _rows(conn, ids)
    # Recency orders the entries that hold the query, counted from the newest of them: the latest word on it
    # comes first (a fact before the one it superseded). Among the weak hits, an entry's age says nothing of
    # whether it is the evidence: an old session is as likely to hold the answer as a new one.
    reference = _newest(row for doc_id, row in rows.items() if holding(doc_id))
    boost = {doc_id: rank.recency(row["ts"], row["kind"], reference, half_life=settings.recency_half_life_days,
                                  weight=settings.recency_weight) if holding(doc_id) else 1.0
             for doc_id, row in rows.items()}
    fused = rank.fuse(lists, weights, boost)
    # Entries that hold the question come before those that only share some of its words: in hybrid, a
    # paraphrase meaning found is not outranked by an entry holding one rare word of the question.
    # Among those, the ones dated in the time the question names come first: a preference, not a filter (memory
    # is dated by when it was written, not by when things happened), and no weight for a weak hit.
    def in_time(doc_id: int) -> bool:
        ts = rows[doc_id]["ts"]
        return named is not None and ts is not None and named[0] <= ts <= named[1]

    fused.sort(key=lambda item: (not holding(item[0]), not (holding(item[0]) and in_time(item[0]))))
    # What the index holds is a claim: a hit is shown only when its source holds it (gitmem.recall.hit_proof), and
    # one that is not leaves the ranking before the cut, so it can neither speak nor hide a real hit.
    while True:
        kept = rank.cut(fused, min_score=min_score, gap=gap, limit=limit)
        planted = holder.drop(doc_id for doc_id, _ in kept)
        if not planted:
            break
        fused = [item for item in fused if item[0] not in planted]
    hits = []
    for doc_id, score in kept:
        row = rows[doc_id]
        workspace = (row["workspace"] or "default") if all_workspaces else ""
        hits.append(Hit(row["kind"], row["ident"], row["date"], row["path"], row["line"],
                        _shown(conn, doc_id, _snippet(conn, parsed.match, doc_id, text, passage)),
                        score, workspace, holding(doc_id)))
    return hits


def _shown(conn: sqlite3.Connection, doc_id: int, snippet: str) -> str:
    """The snippet as it may be shown: masked as everything shown is (`gitmem.secrets.scrub`: the
    environment's secret values too), since history keeps whatever was once written. The whole entry is judged,
    not the snippet: a snippet can start halfway into a value, or bold a word inside it, and a part is no match.
    An entry holding a secret is shown from its masked text, without highlights. Either way it is `printable`:
    commit messages are indexed as written, and no check keeps a terminal escape out of them as GM920 does out
    of the memory files."""
    entry = conn.execute("SELECT title, body FROM fts WHERE rowid = ?", (doc_id,)).fetchone()
    whole = f"{entry[0]} — {entry[1]}" if entry is not None else snippet
    masked = scrub(whole)
    if masked == whole and scrub(snippet) == snippet:
        return printable(snippet)
    return printable(" ".join(masked.split())[:SHOWN_CHARS])


class _Holding:
    """Whether a candidate holds the query (rank.holds_query), judged once each and only when asked: an evidence call
    asks it of the hits it shows, a `known_only` call of every candidate. Meaning's candidates hold it: they
    passed the model's floor (semantic.py)."""

    def __init__(self, conn: sqlite3.Connection, query: Query, by_meaning: set[int]) -> None:
        self.conn, self.query, self.judged = conn, query, dict.fromkeys(by_meaning, True)

    def __call__(self, doc_id: int) -> bool:
        if doc_id not in self.judged:
            entry = self.conn.execute("SELECT title, body FROM fts WHERE rowid = ?", (doc_id,)).fetchone()
            self.judged[doc_id] = entry is not None and rank.holds_query(self.conn, self.query, entry[0], entry[1])
        return self.judged[doc_id]


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


def _snippet(conn: sqlite3.Connection, match: str, doc_id: int, text: str, passage: Any) -> str:
    row = None
    if match:
        row = conn.execute(f"SELECT snippet(fts, -1, '{MARK}', '{MARK}', '…', {SNIPPET_TOKENS}) FROM fts"
                           " WHERE fts MATCH ? AND rowid = ?", (match, doc_id)).fetchone()
    if row is None:           # found by another ranker without a word match
        entry = conn.execute("SELECT title, body FROM fts WHERE rowid = ?", (doc_id,)).fetchone()
        if entry is None:
            return ""
        if passage is not None:                  # the window that matched the meaning
            return " ".join(passage(text, doc_id, entry[0], entry[1]).split())
        return " ".join(f"{entry[0]} — {entry[1]}"[:SHOWN_CHARS].split())
    return " ".join(row[0].split())
