"""The vector store beside the SQLite index: one row per window (chunks.py) of every entry, in flat files.

Files, in `.git/gitmem/vectors-<token>/` (the token is in the index's meta table, so a reader always opens the
files that belong to the index it reads; a rebuild writes a new folder and removes the old ones):
  doc.i64    the entry each row belongs to; -1 once the entry is gone
  vec.i8     the row's unit vector as int8, with scale.f32 to bring it back
  code.u64   sign bits of the row in the fitted space (DIM/64 words a row), for a quick first pass
  norm.f32   the row's length in the fitted space
  fit.npz    the fit: the token weights, the mean and the whitening matrix
  df.i64     in how many rows each token occurs, kept up to date for the next fit
All of them only grow, row by row, under the index's write lock; `meta.vec_rows` says how many rows are
committed, and rows past it (from an interrupted write) are cut off by the next writer and never read.

The fit (vectorfit.py: token weights, whitening, the rows' covariance) is stored with the rows in fit.npz.
The fit is redone from scratch (every entry embedded again) when the rows have doubled since the last
fit, up to REFIT_MAX rows; beyond that the memory's statistics have settled.
"""
from __future__ import annotations

import secrets
import shutil
import sqlite3
import zipfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from gitmem.recall import chunks
from gitmem.recall.database import get_meta, set_meta
from gitmem.recall.vectorfit import Fit, codes, doc_freq, fit_rows, quantise, weights, words_per_row

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from gitmem.recall.encoder import Encoder

Embedding = Callable[[int, int], None]    # progress(done, total): entries embedded so far, of how many
PREFIX = "vectors-"
REFIT_MAX = 50_000
BATCH = 8_000                  # entries embedded per pass
COLUMNS = (("doc.i64", "<i8"), ("vec.i8", "i1"), ("scale.f32", "<f4"), ("code.u64", "<u8"), ("norm.f32", "<f4"))


@dataclass
class Store:
    """The committed rows of one vector folder, memory-mapped read-only."""

    folder: Path
    rows: int
    dim: int
    fit: Fit
    doc: npt.NDArray[np.int64]
    vec: npt.NDArray[np.int8]
    scale: npt.NDArray[np.float32]
    code: npt.NDArray[np.uint64]
    norm: npt.NDArray[np.float32]
    token: str = ""
    _dense: Any = None
    _bits: Any = None
    aims: dict[str, Any] = field(default_factory=dict)     # query text -> its aim (semantic.py), per store

    def dense(self) -> npt.NDArray[np.float32]:
        """All rows as float32, for stores small enough to score exactly (kept for the next query)."""
        if self._dense is None:
            self._dense = self.vec.astype("<f4") * self.scale[:, None]
        dense: npt.NDArray[np.float32] = self._dense
        return dense

    def bits(self) -> npt.NDArray[np.uint64]:
        """The sign bits word by word (words x rows, each word contiguous), kept for the next query."""
        import numpy as np

        if self._bits is None:
            self._bits = np.ascontiguousarray(self.code.T)
        bits: npt.NDArray[np.uint64] = self._bits
        return bits


def _columns(folder: Path, rows: int, dim: int, *, mode: Literal["r", "r+"] = "r") -> dict[str, Any]:
    import numpy as np

    widths = {"vec.i8": dim, "code.u64": words_per_row(dim)}
    found = {}
    for name, dtype in COLUMNS:
        shape = (rows, widths[name]) if name in widths else (rows,)
        found[name] = np.memmap(folder / name, dtype=dtype, mode=mode, shape=shape) if rows else \
            np.zeros(shape, dtype=dtype)
    return found


def store_key(model: Encoder) -> str:
    """What the vectors depend on besides the entries: the model and the windowing. A store under another key
    is never read (a restored cache made with another model or window size is rebuilt)."""
    return f"{model.model_id} {chunks.shape()}"


def open_store(conn: sqlite3.Connection, state: Path, model: Encoder, known: Store | None = None) -> Store | None:
    """The store the index's meta names, or None when there is none for this model (sync makes one).

    `known`, an earlier open of the same folder, lends its fit (saves reading it and weighting the table)."""
    import numpy as np

    token, rows = get_meta(conn, "vec_token"), int(get_meta(conn, "vec_rows") or 0)
    if not token or get_meta(conn, "vec_model") != store_key(model):
        return None
    folder = state / f"{PREFIX}{token}"
    try:
        if known is not None and known.token == token:
            fit = known.fit
        else:
            with np.load(folder / "fit.npz") as saved:
                fit = Fit(saved["weight"], saved["mean"], saved["whiten"], saved["spread"],
                          model.weighted(saved["weight"]))
        columns = _columns(folder, rows, model.dim)
        if (folder / "df.i64").stat().st_size != model.vocab * 8:
            raise ValueError("df.i64 does not count this model's tokens")   # the next append adds to it
    except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile):
        return None                    # missing, short or garbled files: the next sync rebuilds them
    return Store(folder, rows, model.dim, fit, columns["doc.i64"], columns["vec.i8"], columns["scale.f32"],
                 columns["code.u64"], columns["norm.f32"], token)


def current(conn: sqlite3.Connection, store: Store, model: Encoder) -> bool:
    """Whether `store` is still the store the index's meta names, with the same committed rows."""
    return (get_meta(conn, "vec_token") == store.token and get_meta(conn, "vec_model") == store_key(model)
            and int(get_meta(conn, "vec_rows") or 0) == store.rows)


def behind(conn: sqlite3.Connection, store: Store) -> bool:
    """Whether entries were added or deleted since the vectors were last brought up to date, or a refit is due."""
    newest = conn.execute("SELECT max(id) FROM docs").fetchone()[0] or 0
    fit = int(get_meta(conn, "vec_fit") or 0)
    return (newest > int(get_meta(conn, "vec_upto") or 0) or _refit_due(store.rows, fit)
            or conn.execute("SELECT 1 FROM gone LIMIT 1").fetchone() is not None)


def _refit_due(rows: int, fit: int) -> bool:
    return fit < REFIT_MAX and rows >= 2 * fit and rows > 0


def sync(conn: sqlite3.Connection, state: Path, model: Encoder, known: Store | None = None,
         progress: Embedding | None = None) -> Store:
    """Bring the vectors up to the index's entries; call inside the index's write transaction.
    `progress(done, total)` hears how many entries are embedded (a build of a large memory takes minutes)."""
    store = open_store(conn, state, model, known)
    if store is None or _refit_due(store.rows, int(get_meta(conn, "vec_fit") or 0)):
        return _build(conn, state, model, progress or _quiet)
    _append(conn, store, model, progress or _quiet)
    gone = [row[0] for row in conn.execute("SELECT id FROM gone")]
    if gone:
        _bury(store, gone)
        conn.execute("DELETE FROM gone")
    found = open_store(conn, state, model, store)
    assert found is not None
    return found


def _quiet(done: int, total: int) -> None:
    pass


def _entries(conn: sqlite3.Connection, after: int, limit: int = -1) -> list[tuple[int, str, str]]:
    # CROSS JOIN keeps docs the outer loop (a range on its key); SQLite would otherwise scan the whole fts table.
    return conn.execute("SELECT d.id, f.title, f.body FROM docs d CROSS JOIN fts f ON f.rowid = d.id"
                        " WHERE d.id > ? ORDER BY d.id LIMIT ?", (after, limit)).fetchall()


def _encode(model: Encoder, entries: list[tuple[int, str, str]]) -> tuple[Any, Any, Any]:
    """(owner entry per window, flat token ids, tokens per window)."""
    import numpy as np

    owners, texts = [], []
    for doc_id, title, body in entries:
        for text in chunks.windows(title, body):
            owners.append(doc_id)
            texts.append(text)
    return (np.array(owners, dtype=np.int64), *model.token_ids(texts))


def _write(folder: Path, rows: int, columns: dict[str, Any]) -> None:
    """Append rows to every column file, first cutting off anything past the committed `rows`."""
    for name, dtype in COLUMNS:
        path = folder / name
        item = columns[name].dtype.itemsize * (columns[name].shape[1] if columns[name].ndim == 2 else 1)
        with path.open("ab") as handle:
            handle.truncate(rows * item)
            handle.write(columns[name].astype(dtype, copy=False).tobytes())


def _append(conn: sqlite3.Connection, store: Store, model: Encoder, progress: Embedding) -> None:
    import numpy as np

    upto = int(get_meta(conn, "vec_upto") or 0)
    entries = _entries(conn, upto)
    if not entries:
        return
    owners, flat, lengths = _encode(model, entries)
    vectors = model.pool_flat(flat, lengths, store.fit.weighted)
    progress(len(entries), len(entries))
    vec, scale = quantise(vectors)
    code, norm = codes(vectors, store.fit)
    _write(store.folder, store.rows, {"doc.i64": owners, "vec.i8": vec, "scale.f32": scale, "code.u64": code,
                                      "norm.f32": norm})
    df_path = store.folder / "df.i64"
    df = np.fromfile(df_path, dtype="<i8") + doc_freq(flat, lengths, model.vocab)
    df.tofile(df_path)
    set_meta(conn, "vec_rows", str(store.rows + len(owners)))
    set_meta(conn, "vec_upto", str(entries[-1][0]))


def _bury(store: Store, gone: list[int]) -> None:
    """Mark the rows of deleted entries; they are skipped by every query from now on."""
    import numpy as np

    if not store.rows:
        return
    doc = np.memmap(store.folder / "doc.i64", dtype="<i8", mode="r+", shape=(store.rows,))
    doc[np.isin(doc, np.array(gone, dtype=np.int64))] = -1
    doc.flush()


def _build(conn: sqlite3.Connection, state: Path, model: Encoder, progress: Embedding) -> Store:
    """Embed every entry into a new folder, fit on it, and point the meta at it; old folders go."""
    import numpy as np

    token = secrets.token_hex(6)
    folder = state / f"{PREFIX}{token}"
    folder.mkdir(parents=True)
    last = 0
    parts: list[tuple[Any, Any, Any]] = []
    df = np.zeros(model.vocab, dtype=np.int64)
    while True:                             # pass 1: tokens and their frequencies
        entries = _entries(conn, last, BATCH)
        if not entries:
            break
        owners, flat, lengths = _encode(model, entries)
        df += doc_freq(flat, lengths, model.vocab)
        parts.append((owners, flat.astype(np.int32), lengths))
        last = entries[-1][0]
    rows = sum(len(owners) for owners, _, _ in parts)
    embedding = sum(len(set(owners.tolist())) for owners, _, _ in parts)
    weight = weights(df, rows)
    weighted = model.weighted(weight)
    total = np.zeros(model.dim, dtype=np.float64)
    outer = np.zeros((model.dim, model.dim), dtype=np.float64)
    written = done = 0
    progress(0, embedding)
    for owners, flat, lengths in parts:      # pass 2: vectors, and their mean and covariance
        vectors = model.pool_flat(flat, lengths, weighted)
        done += len(set(owners.tolist()))
        progress(done, embedding)
        total += vectors.sum(axis=0)
        outer += vectors.T.astype(np.float64) @ vectors
        vec, scale = quantise(vectors)
        _write(folder, written, {"doc.i64": owners, "vec.i8": vec, "scale.f32": scale,
                                 "code.u64": np.zeros((len(owners), words_per_row(model.dim)), dtype="<u8"),
                                 "norm.f32": np.zeros(len(owners), dtype="<f4")})
        written += len(owners)
    fit = fit_rows(weight, weighted, total, outer, rows, model.dim)
    np.savez(folder / "fit.npz", weight=fit.weight, mean=fit.mean, whiten=fit.whiten, spread=fit.spread)
    df.astype("<i8").tofile(folder / "df.i64")
    columns = _columns(folder, rows, model.dim, mode="r+")
    for start in range(0, rows, 50_000):     # pass 3: codes in the fitted space
        part = slice(start, start + 50_000)
        block = columns["vec.i8"][part].astype(np.float32) * columns["scale.f32"][part, None]
        columns["code.u64"][part], columns["norm.f32"][part] = codes(block, fit)
    for column in columns.values():
        if isinstance(column, np.memmap):
            column.flush()
    for key, value in (("vec_token", token), ("vec_model", store_key(model)), ("vec_rows", str(rows)),
                       ("vec_upto", str(last or int(get_meta(conn, "vec_upto") or 0))), ("vec_fit", str(rows))):
        set_meta(conn, key, value)
    conn.execute("DELETE FROM gone")
    remove_others(state, token)
    found = open_store(conn, state, model)
    assert found is not None
    return found


def remove_others(state: Path, keep: str = "") -> None:
    """Delete vector folders other than `keep` (a reader that still maps one keeps its data until it closes)."""
    for folder in state.glob(f"{PREFIX}*"):
        if folder.name != f"{PREFIX}{keep}":
            shutil.rmtree(folder, ignore_errors=True)


def size(state: Path) -> int:
    return sum(path.stat().st_size for folder in state.glob(f"{PREFIX}*") for path in folder.iterdir()
               if path.is_file()) if state.exists() else 0


