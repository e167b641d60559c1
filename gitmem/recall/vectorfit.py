"""The fit of a vector store to its memory: token weights, whitening, and the sign bits of the first pass.

A weak static model tells a fact from filler in *this* memory once the vectors are fitted to it (measured in
benchmarks/bench_recall_semantic.py; ranked recall@5 on the paraphrase set went from about 0.2 to 0.6):
- token weights: idf over the rows x log(token id + 2) (a prior for rare tokens: BPE ids grow with rarity);
- whitening: queries are compared in a space where the memory's common directions (its recurring filler)
  are damped: s(row) = (c - mean) . W q', q' = unit(W (q - mean)), W = (Cov + SHRINK tr(Cov)/dim I)^-1/2.
  A row's length in that space is kept, so an unusual row (a rare fact) stands out;
- the covariance itself is kept: a query's scores over all rows have the standard deviation sqrt(d' Cov d),
  d = W q', which semantic.py divides by, so that scores mean the same in a small memory and a large one.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

SHRINK = 1.0


@dataclass
class Fit:
    weight: npt.NDArray[np.float32]     # per token
    mean: npt.NDArray[np.float32]
    whiten: npt.NDArray[np.float32]     # dim x dim, symmetric
    spread: npt.NDArray[np.float32]     # the rows' covariance: a query's scores over all rows have sd sqrt(d' S d)
    weighted: Any                       # what the model pools with for `weight` (encoder.Encoder.weighted)


def doc_freq(flat: Any, lengths: Any, vocab: int) -> Any:
    import numpy as np

    rows = np.repeat(np.arange(len(lengths), dtype=np.int64), lengths)
    pairs = np.unique(rows * vocab + np.minimum(flat, vocab - 1))
    return np.bincount(pairs % vocab, minlength=vocab).astype(np.int64)


def weights(df: Any, rows: int) -> Any:
    import numpy as np

    prior = np.log(np.arange(len(df), dtype=np.float64) + 2.0)
    return (np.log((rows + 1.0) / (df + 1.0)) * prior).astype(np.float32)


def quantise(vectors: Any) -> tuple[Any, Any]:
    import numpy as np

    peak = np.abs(vectors).max(axis=1)
    peak[peak == 0] = 1.0
    return np.round(vectors * (127.0 / peak)[:, None]).astype(np.int8), (peak / 127.0).astype(np.float32)


def words_per_row(dim: int) -> int:
    """64-bit words of a row's sign bits."""
    return -(-dim // 64)


def sign_bits(fitted: Any) -> Any:
    """Sign bits of rows (2-D) in 64-bit words, zero-padded."""
    import numpy as np

    packed = np.packbits(fitted > 0, axis=1)
    padded = np.zeros((packed.shape[0], words_per_row(fitted.shape[1]) * 8), dtype=np.uint8)
    padded[:, :packed.shape[1]] = packed
    return padded.view("<u8")


def codes(vectors: Any, fit: Fit) -> tuple[Any, Any]:
    import numpy as np

    fitted = (vectors - fit.mean) @ fit.whiten
    return sign_bits(fitted), np.linalg.norm(fitted, axis=1).astype(np.float32)


def fit_rows(weight: Any, weighted: Any, total: Any, outer: Any, rows: int, dim: int) -> Fit:
    import numpy as np

    if rows < 2:
        eye = np.eye(dim, dtype=np.float32)
        return Fit(weight, np.zeros(dim, dtype=np.float32), eye, (eye / dim).astype(np.float32), weighted)
    mean = total / rows
    spread = outer / rows - np.outer(mean, mean)
    values, basis = np.linalg.eigh(spread + (SHRINK * max(np.trace(spread), 1e-9) / dim) * np.eye(dim))
    whiten = (basis / np.sqrt(np.maximum(values, 1e-12))) @ basis.T
    return Fit(weight, mean.astype(np.float32), whiten.astype(np.float32), spread.astype(np.float32), weighted)
