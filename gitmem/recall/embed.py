"""Embedding models for semantic recall: static token vectors, averaged with weights. Loaded only on use.

A static model is a table of one vector per token: a text's vector is the weighted mean of its tokens'
vectors. That costs a tokenizer pass and a table lookup, so a 100x history embeds in about a minute on
two cores, where a transformer would take hours. Two sources:
- `wordllama` (the default): the 256-dimension l2_supercat table that ships inside the wordllama wheel
  (16 MB, Llama-2 tokenizer). Once the `semantic` extra is installed nothing is ever downloaded.
- `model2vec:DIRECTORY`: any model2vec-format model (model.safetensors + tokenizer.json) the user has
  saved once, e.g. a potion model; a relative DIRECTORY is taken from the repository root, wherever gitmem
  runs. Nothing is fetched at run time here either.
Both are read by the same code: the safetensors file with numpy, the tokenizer with `tokenizers`. The
wordllama package itself is never imported (its import configures root logging); only its files are read.
"""
from __future__ import annotations

import functools
import hashlib
import importlib.util
import json
import os
import stat
import struct
from dataclasses import dataclass
from itertools import chain
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

from gitmem import extras
from gitmem.config.nesting import loads_json
from gitmem.recall.database import RecallError

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

SHIPPED = "wordllama"
M2V = "model2vec:"
INSTALL = extras.extra_install_line("semantic")
_WORDLLAMA_TABLE = ("weights/l2_supercat_256.safetensors", "embedding.weight")
_WORDLLAMA_TOKENIZER = "tokenizers/l2_supercat_tokenizer_config.json"
_DTYPES = {"F16": "<f2", "F32": "<f4", "F64": "<f8"}
MAX_TABLE_BYTES = 4 << 30        # a model file larger than this is refused (potion-multilingual-128M is 0.5 GB)
MAX_TOKENIZER_BYTES = 256 << 20
MAX_HEADER_BYTES = 100 << 20     # safetensors' own limit
STATIC_FLOOR = 0.397             # calibrated in benchmarks/bench_recall_semantic.py --floors (1x, half 0)
_BATCH = 2_000                   # texts pooled per numpy pass: bounds memory (2,000 x longest x 256 floats)


def available(spec: str = SHIPPED) -> bool:
    """Whether `spec` can load, judged without importing anything heavy."""
    needed = ["numpy", "tokenizers"] + (["wordllama"] if spec == SHIPPED else [])
    return all(importlib.util.find_spec(name) is not None for name in needed)


@dataclass(frozen=True)
class StaticModel:
    model_id: str                    # changes whenever the vectors would: the vector store is rebuilt then
    table: npt.NDArray[np.float32]   # vocabulary x dimensions
    tokenizer: Any                   # a `tokenizers.Tokenizer`
    floor: float = 0.0               # the raw cosine under which a window never answers (encoder.Encoder)

    @property
    def dim(self) -> int:
        return int(self.table.shape[1])

    @property
    def vocab(self) -> int:
        return int(self.table.shape[0])

    def token_ids(self, texts: list[str]) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
        """The token ids of all `texts` in one flat array, and how many each text has (what `pool_flat` takes)."""
        import numpy as np

        ids = [enc.ids for enc in self.tokenizer.encode_batch(texts, add_special_tokens=False)]
        return (np.fromiter(chain.from_iterable(ids), dtype=np.int64),
                np.fromiter(map(len, ids), dtype=np.int64, count=len(ids)))

    def weighted(self, weight: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
        """The table with each token's vector times its weight, and a zero row last (padding for `pool_flat`)."""
        import numpy as np

        return np.vstack([self.table * weight[:, None], np.zeros((1, self.dim), dtype=np.float32)])

    def pool(self, texts: list[str], weighted: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
        """Unit vectors of `texts`: the weighted mean of their token vectors (zero for a text without tokens).

        `weighted` comes from `weighted(weight)`."""
        return self.pool_flat(*self.token_ids(texts), weighted)

    def pool_flat(self, flat: npt.NDArray[Any], lengths: npt.NDArray[np.int64],
                  weighted: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
        """`pool` on token ids already made: all texts' ids in one array, and how many each text has."""
        import numpy as np

        out = np.zeros((len(lengths), self.dim), dtype=np.float32)
        pad = weighted.shape[0] - 1
        ends = np.cumsum(lengths)
        for start in range(0, len(lengths), _BATCH):
            part = lengths[start:start + _BATCH]
            width = int(part.max(initial=0))
            if not width:
                continue
            base = int(ends[start] - lengths[start])
            ids = np.full((len(part), width), pad, dtype=np.int64)
            ids[np.arange(width)[None, :] < part[:, None]] = flat[base:base + int(part.sum())]
            ids[ids >= pad] = pad                  # a tokenizer may know a few more tokens than the table
            out[start:start + len(part)] = weighted[ids].sum(axis=1)
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        pooled: npt.NDArray[np.float32] = np.divide(out, norms, out=out, where=norms > 0)
        return pooled


def load_static_model(spec: str = SHIPPED, root: Path | None = None) -> StaticModel:
    """The model named by `spec` (config recall.model), read once per process. `root`, the repository's work
    tree, is where a relative model2vec DIRECTORY is found (the current directory without it)."""
    if not available(spec):
        raise RecallError(extras.missing_extra_message("semantic", "semantic recall"))
    if spec.startswith(M2V) and root is not None:
        home = Path(spec[len(M2V):]).expanduser()
        spec = f"{M2V}{root / home}" if not home.is_absolute() else spec
    return _load(spec)


@functools.lru_cache(maxsize=4)
def _load(spec: str) -> StaticModel:
    if spec == SHIPPED:
        from importlib.metadata import version

        found = importlib.util.find_spec("wordllama")
        places = list(found.submodule_search_locations or []) if found else []
        if not places:
            raise RecallError(f"the wordllama package is incomplete; reinstall it: {INSTALL}")
        home = Path(places[0])
        table_file, key = _WORDLLAMA_TABLE
        return _read(home / table_file, key, home / _WORDLLAMA_TOKENIZER,
                     f"wordllama {version('wordllama')} l2_supercat_256")
    if spec.startswith(M2V):
        home = Path(spec[len(M2V):]).expanduser()
        try:
            where = home.resolve()
        except (OSError, RuntimeError) as err:       # RuntimeError: a symbolic link loop (Python 3.11)
            raise RecallError(f"recall.model: cannot follow {home}: {err}") from None
        return _read(home / "model.safetensors", "embeddings", home / "tokenizer.json", f"model2vec {where}",
                     digest=True)
    raise RecallError(f"recall.model: {spec!r} is not a model; use {SHIPPED} or {M2V}DIRECTORY "
                      "(a model2vec model saved with model.safetensors and tokenizer.json)")


def _digest(handle: BinaryIO, size: int) -> str:
    """Size and a hash of both ends: enough to notice a different model without reading it all."""
    head = handle.read(1 << 16)
    handle.seek(max(0, size - (1 << 16)))
    tail = handle.read(1 << 16)
    handle.seek(0)
    return f"{size}:{hashlib.sha1(head + tail).hexdigest()[:12]}"


def open_model_file(path: Path, limit: int) -> tuple[BinaryIO, int]:
    """`path` opened for reading, and its size: a regular file of at most `limit` bytes, or a RecallError.

    Links are followed (a model saved in a cache is often one), but a FIFO or a device is never read: a FIFO
    would hang the command and /dev/zero would fill the memory. Opened non-blocking, checked with fstat."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except (OSError, ValueError) as err:
        raise RecallError(f"cannot load the embedding model: {path}: {getattr(err, 'strerror', None) or err}") \
            from None
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode) or info.st_size > limit:
        os.close(fd)
        what = "is not a regular file" if not stat.S_ISREG(info.st_mode) else \
            f"is {info.st_size} bytes, more than a model file may be ({limit})"
        raise RecallError(f"cannot load the embedding model: {path} {what}")
    os.set_blocking(fd, True)
    return os.fdopen(fd, "rb"), info.st_size


def _read(weights: Path, key: str, tokenizer: Path, model_id: str, *, digest: bool = False) -> StaticModel:
    from tokenizers import Tokenizer

    handle, size = open_model_file(weights, MAX_TABLE_BYTES)
    with handle:
        if digest:
            model_id = f"{model_id} {_digest(handle, size)}"
        try:
            table = read_tensor(handle, size, key)
        except (OSError, ValueError, KeyError, TypeError) as err:
            raise RecallError(f"cannot load the embedding model: {weights}: {err}") from None
    handle, _ = open_model_file(tokenizer, MAX_TOKENIZER_BYTES)
    with handle:
        try:
            reader = Tokenizer.from_buffer(handle.read())
        except Exception as err:              # OSError, a malformed file; tokenizers raises plain Exception
            raise RecallError(f"cannot load the embedding model: {tokenizer}: {err}") from None
    reader.no_padding()
    reader.no_truncation()
    return StaticModel(model_id, table, reader, STATIC_FLOOR)


def read_tensor(handle: BinaryIO, size: int, key: str) -> npt.NDArray[np.float32]:
    """One 2-D tensor of a safetensors file of `size` bytes as float32 (the format: u64 header size, JSON
    header, raw data). A header that claims more than the file holds is refused before anything is read."""
    import numpy as np

    (length,) = struct.unpack("<Q", handle.read(8).ljust(8, b"\xff"))
    if length > min(size - 8, MAX_HEADER_BYTES):
        raise ValueError(f"the header claims {length} bytes; the file holds {size}")
    spec = loads_json(handle.read(length))[key]     # bounded: a header nested past the parser is a ValueError
    dtype = _DTYPES.get(spec["dtype"])
    shape = spec["shape"]
    if dtype is None or len(shape) != 2 or not all(isinstance(n, int) and n > 0 for n in shape):
        raise ValueError(f"tensor {key} is {spec['dtype']} {shape}; expected a 2-D float table")
    start, end = (int(n) for n in spec["data_offsets"])
    if not 0 <= start <= end <= size - 8 - length or end - start != shape[0] * shape[1] * int(dtype[-1]):
        raise ValueError(f"tensor {key} {shape} claims bytes {start}..{end}; the file holds {size - 8 - length}")
    handle.seek(8 + length + start)
    data = np.frombuffer(handle.read(end - start), dtype=dtype)
    return np.ascontiguousarray(data.reshape(shape), dtype=np.float32)


def write_tensor(path: Path, key: str, table: npt.NDArray[Any]) -> None:
    """Write a one-tensor safetensors file (used to save small models, e.g. in tests)."""
    import numpy as np

    data = np.ascontiguousarray(table, dtype="<f4").tobytes()
    header = json.dumps({key: {"dtype": "F32", "shape": list(table.shape), "data_offsets": [0, len(data)]}}).encode()
    header += b" " * (-len(header) % 8)
    path.write_bytes(struct.pack("<Q", len(header)) + header + data)
