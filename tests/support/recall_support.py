"""Small memory histories for the recall tests: real repos, real gitmem writes, a fake clock, real commits."""
from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta
from pathlib import Path

from gitmem.config import Config, load_config
from gitmem.memory_writer import MemoryWriter
from gitmem.workspace import Workspace
from tests.support.helpers import GitRepo

FILLER = ("index", "ranking", "invoice", "refund", "digest", "pipeline", "container", "tutorial", "endpoint",
          "webhook", "dashboard", "cohort", "ticket", "latency", "cache", "session", "locale", "layout", "plan")
VERBS = ("fixed", "measured", "shipped", "reviewed", "refactored", "documented", "tested", "trimmed")


class History:
    """Writes cycles the way the runner does (LOG entry, NOW block, commit), one day apart by default."""

    def __init__(self, repo: GitRepo, config: Config | None = None, *, start: datetime | None = None) -> None:
        self.repo = repo
        self.config = config or load_config(repo.path)
        self.moment = start or datetime(2025, 6, 1, 9, 0, tzinfo=UTC)
        self.step = timedelta(days=1)
        self.memory = MemoryWriter(Workspace.at(repo.path, self.config), clock=self._clock)
        self.rng = random.Random(0)

    def _clock(self) -> datetime:
        self.moment += timedelta(minutes=1)
        return self.moment

    def filler(self, words: int = 8) -> str:
        return " ".join(self.rng.choice(VERBS if i % 4 == 0 else FILLER) for i in range(words))

    def cycle(self, *, task: str | None = None, result: str | None = None, did: str | None = None,
              commit: bool = True, message: str | None = None) -> int:
        self.moment += self.step
        entry = self.memory.add_log_entry(task=task or self.filler(), outcome="built", result=result or self.filler(12))
        self.memory.add_now_block(did=did or self.filler(6), human="nothing", next=self.filler(5))
        if commit:
            self.commit(message or f"cycle {entry.cycle}: {self.filler(4)}")
        return entry.cycle or 0

    def commit(self, message: str) -> str:
        paths = [p for p in self.config.memory_paths().values() if (self.repo.path / p).exists()]
        self.repo.stage(*paths)
        return str(self.repo.commit(message))

    @property
    def root(self) -> Path:
        return self.repo.path


def tiny_model(folder: Path, words: dict[str, list[float]]) -> Path:
    """A model2vec-format model (model.safetensors + tokenizer.json) of a few words, built by the test itself.

    Each word gets the given vector (all the same length); "[UNK]" is the zero vector."""
    import numpy as np
    from tokenizers import Tokenizer, normalizers, pre_tokenizers
    from tokenizers.models import WordLevel

    from gitmem.recall.embed import write_tensor

    folder.mkdir(parents=True, exist_ok=True)
    vocab = {"[UNK]": 0, **{word: n + 1 for n, word in enumerate(words)}}
    tokenizer = Tokenizer(WordLevel(vocab, unk_token="[UNK]"))
    tokenizer.normalizer = normalizers.Lowercase()
    tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
    tokenizer.save(str(folder / "tokenizer.json"))
    dim = len(next(iter(words.values())))
    table = np.array([[0.0] * dim, *words.values()], dtype=np.float32)
    write_tensor(folder / "model.safetensors", "embeddings", table)
    return folder


def tiny_onnx_model(folder: Path, words: dict[str, list[float]]) -> Path:
    """A sentence encoder in the `onnx:DIRECTORY` layout (model.onnx + tokenizer.json), built by the test itself.

    The graph is what a BERT-style export looks like from outside: input_ids, attention_mask and
    token_type_ids in, token states (batch x tokens x dim) out; inside, each token's state is its word's
    vector (a Gather), so mean pooling gives known vectors. The tokenizer adds [CLS] and [SEP], whose
    vectors are zero, as a real WordPiece export does (they then add nothing to a mean's direction)."""
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    from tokenizers import Tokenizer, normalizers, pre_tokenizers, processors
    from tokenizers.models import WordLevel

    folder.mkdir(parents=True, exist_ok=True)
    vocab = {"[UNK]": 0, "[CLS]": 1, "[SEP]": 2, **{word: n + 3 for n, word in enumerate(words)}}
    tokenizer = Tokenizer(WordLevel(vocab, unk_token="[UNK]"))
    tokenizer.normalizer = normalizers.Lowercase()
    tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
    tokenizer.post_processor = processors.TemplateProcessing(single="[CLS] $A [SEP]",
                                                             special_tokens=[("[CLS]", 1), ("[SEP]", 2)])
    tokenizer.save(str(folder / "tokenizer.json"))
    dim = len(next(iter(words.values())))
    table = np.array([[0.0] * dim] * 3 + list(words.values()), dtype=np.float32)
    graph = helper.make_graph(
        [helper.make_node("Gather", ["table", "input_ids"], ["last_hidden_state"], axis=0)], "tiny-encoder",
        [helper.make_tensor_value_info(name, TensorProto.INT64, ["batch", "tokens"])
         for name in ("input_ids", "attention_mask", "token_type_ids")],
        [helper.make_tensor_value_info("last_hidden_state", TensorProto.FLOAT, ["batch", "tokens", dim])],
        [numpy_helper.from_array(table, "table")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, str(folder / "model.onnx"))
    return folder
