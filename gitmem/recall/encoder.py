"""What the vector store asks of an embedding model, whichever kind it is (embed.py, transformer.py).

Two kinds implement it: a static token table (embed.StaticModel: a text is the weighted mean of its tokens'
vectors, the weights fitted to the memory) and a sentence encoder run with onnxruntime
(transformer.OnnxModel: the transformer's token states, mean-pooled; it ignores the fitted weights).
Both give unit vectors, and both carry the raw-similarity `floor` under which a window is unrelated to a
query whatever this memory holds: the floor belongs to the model, not to a memory (semantic.py).
"""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt


class Encoder(Protocol):
    @property
    def model_id(self) -> str:
        """Changes whenever the vectors would: the vector store is rebuilt then."""

    @property
    def dim(self) -> int: ...

    @property
    def vocab(self) -> int:
        """How many token ids the tokenizer gives (token frequencies are counted per id)."""

    @property
    def floor(self) -> float:
        """The raw cosine under which a window never answers a query (calibrated per model)."""

    def token_ids(self, texts: list[str]) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
        """All texts' token ids in one flat array, and how many each text has."""

    def weighted(self, weight: npt.NDArray[np.float32]) -> Any:
        """What `pool_flat` takes for these per-token weights."""

    def pool(self, texts: list[str], weighted: Any) -> npt.NDArray[np.float32]:
        """Unit vectors of `texts` (zero for a text without tokens)."""

    def pool_flat(self, flat: npt.NDArray[Any], lengths: npt.NDArray[np.int64],
                  weighted: Any) -> npt.NDArray[np.float32]:
        """`pool` on token ids already made (from `token_ids`)."""


def model_available(spec: str) -> bool:
    """Whether the model `spec` names can load here, judged without importing anything heavy."""
    from gitmem.recall import embed, transformer

    return transformer.runtime_installed() if spec.startswith(transformer.PREFIX) else embed.available(spec)


def is_saved_encoder(spec: str) -> bool:
    """Whether `spec` names a sentence encoder the user saved (`onnx:DIRECTORY`): then `auto` is hybrid."""
    from gitmem.recall import transformer

    return spec.startswith(transformer.PREFIX)


def model_install_line(spec: str) -> str:
    """What to install for the model `spec` names."""
    from gitmem import extras
    from gitmem.recall import transformer

    return extras.extra_install_line(transformer.EXTRA if spec.startswith(transformer.PREFIX) else "semantic")


def missing_model_message(spec: str, what: str) -> str:
    from gitmem import extras
    from gitmem.recall import transformer

    return extras.missing_extra_message(transformer.EXTRA if spec.startswith(transformer.PREFIX) else "semantic", what)


def load_model(spec: str, root: Path | None = None) -> Encoder:
    """The model config recall.model names: `onnx:DIRECTORY` (transformer.py), else a static model (embed.py).
    `root`, the repository's work tree, is where a relative DIRECTORY is found."""
    from gitmem.recall import embed, transformer

    if spec.startswith(transformer.PREFIX):
        return transformer.load_onnx(spec, root)
    return embed.load_static_model(spec, root)
