"""A sentence encoder for semantic recall: `recall.model: onnx:DIRECTORY`, run with onnxruntime.

DIRECTORY holds `model.onnx` (a BERT-style encoder: inputs input_ids and attention_mask, maybe
token_type_ids; first output the token states, batch x tokens x dim) and its `tokenizer.json`. A text's
vector is the mean of its token states over the attention mask, normalised: how sentence-transformers pools
all-MiniLM-L6-v2. The user saves such a folder once, by their own means (docs/recall.md says how); nothing
is downloaded here, ever. A relative DIRECTORY is taken from the repository root.

An optional `gitmem.json` in DIRECTORY, `{"floor": 0.3}`, sets the raw cosine under which a window never
answers (calibrated per model in benchmarks/bench_recall_semantic.py); without it, FLOOR, calibrated on
all-MiniLM-L6-v2.
"""
from __future__ import annotations

import functools
import hashlib
import importlib.util
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gitmem import extras
from gitmem.config.nesting import loads_json
from gitmem.recall.database import RecallError
from gitmem.recall.embed import MAX_TABLE_BYTES, MAX_TOKENIZER_BYTES, open_model_file

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

PREFIX = "onnx:"
EXTRA = "semantic-onnx"
FLOOR = 0.447                  # calibrated on all-MiniLM-L6-v2: bench_recall_semantic.py --floors (1x, half 0)
MAX_TOKENS = 128               # longer texts are cut (a window is 8 words; a query rarely passes 30 tokens)
_BATCH = 64                    # texts per run of the model
_NEEDED = ("onnxruntime", "tokenizers", "numpy")


def runtime_installed() -> bool:
    return all(importlib.util.find_spec(name) is not None for name in _NEEDED)


@dataclass(frozen=True)
class OnnxModel:
    model_id: str
    session: Any                 # an onnxruntime.InferenceSession
    tokenizer: Any               # a tokenizers.Tokenizer
    dim: int
    vocab: int
    floor: float
    typed: bool                  # whether the model takes token_type_ids

    def token_ids(self, texts: list[str]) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
        import numpy as np

        ids = [enc.ids[:MAX_TOKENS] for enc in self.tokenizer.encode_batch(texts, add_special_tokens=True)]
        flat = np.fromiter((i for row in ids for i in row), dtype=np.int64)
        return flat, np.fromiter(map(len, ids), dtype=np.int64, count=len(ids))

    def weighted(self, weight: npt.NDArray[np.float32]) -> Any:
        return None              # the transformer weighs tokens itself, by attention

    def pool(self, texts: list[str], weighted: Any = None) -> npt.NDArray[np.float32]:
        return self.pool_flat(*self.token_ids(texts), weighted)

    def pool_flat(self, flat: npt.NDArray[Any], lengths: npt.NDArray[np.int64],
                  weighted: Any = None) -> npt.NDArray[np.float32]:
        import numpy as np

        out = np.zeros((len(lengths), self.dim), dtype=np.float32)
        starts = np.concatenate([[0], np.cumsum(lengths)])
        # Texts of like length run together, so padding costs little (windows are all about 8 words).
        order = np.argsort(lengths, kind="stable")
        for begin in range(0, len(order), _BATCH):
            part = order[begin:begin + _BATCH]
            width = int(lengths[part].max(initial=0))
            if not width:
                continue
            ids = np.zeros((len(part), width), dtype=np.int64)
            mask = np.zeros((len(part), width), dtype=np.int64)
            for row, text in enumerate(part.tolist()):
                count = int(lengths[text])
                ids[row, :count] = flat[starts[text]:starts[text] + count]
                mask[row, :count] = 1
            feeds = {"input_ids": ids, "attention_mask": mask}
            if self.typed:
                feeds["token_type_ids"] = np.zeros_like(ids)
            states = self.session.run(None, feeds)[0]
            summed = np.einsum("btd,bt->bd", states.astype(np.float32), mask.astype(np.float32))
            out[part] = summed / np.maximum(mask.sum(axis=1, keepdims=True), 1)
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        pooled: npt.NDArray[np.float32] = np.divide(out, norms, out=out, where=norms > 0)
        return pooled


def load_onnx(spec: str, root: Path | None = None) -> OnnxModel:
    """The encoder `onnx:DIRECTORY` names, read once per process."""
    if not runtime_installed():
        raise RecallError(extras.missing_extra_message(EXTRA, f"recall.model {spec}"))
    home = Path(spec[len(PREFIX):]).expanduser()
    if not home.is_absolute() and root is not None:
        home = root / home
    return _load(str(home))


@functools.lru_cache(maxsize=4)
def _load(folder: str) -> OnnxModel:
    import onnxruntime
    from tokenizers import Tokenizer

    home = Path(folder)
    if not home.is_dir():
        raise RecallError(f"recall.model: onnx:{home} is not a directory; it must hold model.onnx and "
                          "tokenizer.json (docs/recall.md says how to save one)")
    handle, size = open_model_file(home / "model.onnx", MAX_TABLE_BYTES)
    with handle:
        data = handle.read()
    handle, _ = open_model_file(home / "tokenizer.json", MAX_TOKENIZER_BYTES)
    with handle:
        tokenizer_bytes = handle.read()
    try:
        tokenizer = Tokenizer.from_buffer(tokenizer_bytes)
    except Exception as err:                  # tokenizers raises plain Exception on a malformed file
        raise RecallError(f"cannot load the embedding model: {home / 'tokenizer.json'}: {err}") from None
    tokenizer.no_padding()
    tokenizer.no_truncation()
    options = onnxruntime.SessionOptions()
    options.log_severity_level = 3            # no warnings on stderr: gitmem's output is the hits
    try:
        session = onnxruntime.InferenceSession(data, options, providers=["CPUExecutionProvider"])
    except Exception as err:                  # onnxruntime's own error types share no base but Exception
        first = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        raise RecallError(f"cannot load the embedding model: {home / 'model.onnx'}: {first}") from None
    names = {item.name for item in session.get_inputs()}
    if not {"input_ids", "attention_mask"} <= names:
        raise RecallError(f"cannot load the embedding model: {home / 'model.onnx'} takes {', '.join(sorted(names))};"
                          " a sentence encoder takes input_ids and attention_mask")
    shape = session.get_outputs()[0].shape
    dim = shape[-1] if shape and isinstance(shape[-1], int) else 0
    if dim <= 0:
        raise RecallError(f"cannot load the embedding model: {home / 'model.onnx'}: its first output has no "
                          "fixed width (expected token states, batch x tokens x dim)")
    digest = hashlib.sha256(data).hexdigest()[:16]
    tok_digest = hashlib.sha256(tokenizer_bytes).hexdigest()[:16]
    return OnnxModel(f"onnx {home.resolve()} {size}:{digest} {tok_digest}", session, tokenizer, int(dim),
                     int(tokenizer.get_vocab_size(with_added_tokens=True)), _floor(home),
                     "token_type_ids" in names)


def _floor(home: Path) -> float:
    path = home / "gitmem.json"
    if not path.exists():
        return FLOOR
    handle, _ = open_model_file(path, 1 << 16)
    with handle:
        try:
            found = loads_json(handle.read()).get("floor", FLOOR)
        except (ValueError, TypeError, AttributeError) as err:
            raise RecallError(f"cannot load the embedding model: {path}: {err}") from None
    if not isinstance(found, int | float) or isinstance(found, bool) or not -1.0 <= found <= 1.0:
        raise RecallError(f"cannot load the embedding model: {path}: floor must be a number from -1 to 1")
    return float(found)
