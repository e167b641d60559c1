"""Recall by meaning with a sentence encoder: `recall.model: onnx:DIRECTORY`, run with onnxruntime.

Every test loads a real ONNX file through the real loading code: a tiny encoder the test builds itself
(tests/support/recall_support.tiny_onnx_model), with a real tokenizer.json. Nothing is downloaded.
"""
from __future__ import annotations

import importlib.util
import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from gitmem import install_command
from gitmem.errors import ExitCode
from gitmem.recall import RecallError, chunks, encoder, transformer
from gitmem.recall.index import Index
from gitmem.recall.search import search
from gitmem.workspace import Workspace
from tests.support.helpers import GitRepo
from tests.support.recall_support import History, tiny_onnx_model
from tests.support.terminal import run_on_a_terminal

FACT = "the checkout charged swiss customers twice"
# Each word of the fact shares its vector with a word of the question: the question shares no word with it.
PAIRS = {"swiss": "switzerland", "customers": "buyers", "charged": "billed", "twice": "double"}
INSTALL = install_command("semantic-onnx")


def vectors_of_words() -> dict[str, list[float]]:
    eye = np.eye(8)
    found = {}
    for n, (word, other) in enumerate(PAIRS.items()):
        found[word] = found[other] = list(eye[n])
    found["checkout"] = list(eye[4])
    found["weather"] = list(eye[5])                               # never written: orthogonal to every entry
    found["faintly"] = list(0.2 * eye[0] + np.sqrt(1 - 0.04) * eye[6])   # cosine 0.2 with "swiss"
    return found


@pytest.fixture
def planted(memrepo: GitRepo, tmp_path: Path) -> History:
    history = History(memrepo)
    for number in range(16):
        history.cycle(result=FACT if number == 8 else None)
    tiny_onnx_model(tmp_path / "encoder", vectors_of_words())
    return history


def with_model(history: History, model: str, mode: str = "hybrid") -> Workspace:
    config = history.config
    return Workspace.at(history.root, replace(config, recall=replace(config.recall, mode=mode, model=model)))


def found_ids(ws: Workspace, query: str, **cuts: Any) -> list[str]:
    return [hit.id for hit in search(ws, query, **cuts)]


def test_an_onnx_directory_loads_and_mean_pools_with_the_real_runtime(tmp_path: Path) -> None:
    folder = tiny_onnx_model(tmp_path / "enc", {"alpha": [1.0, 0.0, 0.0], "beta": [0.0, 1.0, 0.0],
                                                "gamma": [0.0, 0.0, 1.0]})
    model = encoder.load_model(f"onnx:{folder}")
    assert isinstance(model, transformer.OnnxModel) and (model.dim, model.vocab) == (3, 6)
    assert model.floor == transformer.FLOOR and model.model_id.startswith("onnx ")
    pooled = model.pool(["alpha beta", "gamma", "nothing known", "Alpha alpha gamma"])
    assert np.allclose(pooled, [[0.5 ** 0.5, 0.5 ** 0.5, 0], [0, 0, 1], [0, 0, 0], [2 / 5 ** 0.5, 0, 1 / 5 ** 0.5]],
                       atol=1e-6)
    flat, lengths = model.token_ids(["alpha beta"])
    assert flat.tolist() == [1, 3, 4, 2] and lengths.tolist() == [4]       # [CLS] alpha beta [SEP]


def test_hybrid_with_an_encoder_finds_other_words_and_says_no_memory_under_its_floor(planted: History,
                                                                                      tmp_path: Path) -> None:
    folder = tmp_path / "encoder"
    ws = with_model(planted, f"onnx:{folder}")
    assert found_ids(with_model(planted, f"onnx:{folder}", "bm25"), "switzerland buyers billed double") == []
    assert found_ids(ws, "switzerland buyers billed double")[:1] == ["cycle 9"]
    assert found_ids(ws, "weather") == []
    assert search(with_model(planted, f"onnx:{folder}", "auto"), "switzerland buyers").mode == "hybrid"
    # Related a little (cosine 0.09 with the fact's window): it stands out in this memory, but it is under
    # the encoder's floor. A model saved with a lower floor answers it.
    assert found_ids(with_model(planted, f"onnx:{folder}", "semantic"), "faintly", min_score=0, gap=1) == []
    (folder / "gitmem.json").write_text(json.dumps({"floor": 0.05}))
    transformer._load.cache_clear()
    assert found_ids(with_model(planted, f"onnx:{folder}", "semantic"), "faintly", min_score=0, gap=1)[:1] == \
        ["cycle 9"]


def test_beside_words_meaning_answers_only_for_the_words_a_window_lacks(memrepo: GitRepo, tmp_path: Path) -> None:
    eye = np.eye(4)
    folder = tiny_onnx_model(tmp_path / "encoder", {
        "ledger": list(eye[0]), "yearly": list(eye[0]),           # the subject both entries are about
        "sluggish": list(eye[1]),                                 # what the first question asks: never written
        "backups": list(eye[2]), "halted": list(eye[3]), "quit": list(eye[3])})   # "quit" means "halted"
    (folder / "gitmem.json").write_text(json.dumps({"floor": 0.5}))
    transformer._load.cache_clear()
    history = History(memrepo)
    ledger = history.cycle(task="closed the yearly ledger")
    backups = history.cycle(task="the backups halted")
    for _ in range(8):
        history.cycle()
    ws = with_model(history, f"onnx:{folder}")
    # "ledger sluggish" against the ledger window: cosine 0.71, over the floor, all of it from the shared word.
    # What the words leave open ("sluggish") the window does not mean (cosine 0): no memory, not even with --all.
    assert found_ids(ws, "why was the ledger sluggish?", min_score=0, gap=1, known_only=True) == []
    assert found_ids(with_model(history, f"onnx:{folder}", "semantic"), "why was the ledger sluggish?",
                     min_score=0, gap=1)[:1] == [f"cycle {ledger}"], "meaning alone has no words to defer to"
    # "backups quit": the window lacks "quit" but means it ("halted", cosine 0.71): found, though its words
    # hold too little of the question for words alone.
    assert found_ids(with_model(history, f"onnx:{folder}", "bm25"), "did the backups quit?", known_only=True) == []
    assert found_ids(ws, "did the backups quit?")[:1] == [f"cycle {backups}"]


def test_the_words_verdict_runs_the_model_a_bounded_number_of_times(memrepo: GitRepo, tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    from gitmem.recall import semantic

    eye = np.eye(3)
    folder = tiny_onnx_model(tmp_path / "encoder", {"ledger": list(eye[0]), "backups": list(eye[1]),
                                                    "quit": list(eye[2])})
    (folder / "gitmem.json").write_text(json.dumps({"floor": 0.1}))
    transformer._load.cache_clear()
    history = History(memrepo)
    history.cycle(task="the ledger")
    history.cycle(task="the backups")
    ws = with_model(history, f"onnx:{folder}")
    search(ws, "ledger")                                          # the vectors are built before counting
    texts: list[str] = []
    pool = transformer.OnnxModel.pool
    monkeypatch.setattr(transformer.OnnxModel, "pool", lambda self, batch, weighted=None:
                        texts.extend(batch) or pool(self, batch, weighted))
    monkeypatch.setattr(semantic, "MAX_RESTS", 1)
    # Each window holds one of the question's words, so each asks a different rest: one is embedded, and the
    # other window is left to the words (however long a pasted question, the runs stay bounded).
    search(ws, "ledger backups quit", min_score=0, gap=1)
    assert len(texts) == 2 and texts[0] == "ledger backups quit", texts


def test_another_encoder_or_window_size_rebuilds_the_vectors(planted: History, tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    def store_token(model: str) -> str:
        index = Index(with_model(planted, model))
        try:
            index.refresh()
            return index.vectors(encoder.load_model(model, index.root)).token
        finally:
            index.close()

    first = store_token(f"onnx:{tmp_path / 'encoder'}")
    assert store_token(f"onnx:{tmp_path / 'encoder'}") == first
    other = tiny_onnx_model(tmp_path / "other", {**vectors_of_words(), "extra": [1.0] + [0.0] * 7})
    second = store_token(f"onnx:{other}")
    assert second != first
    monkeypatch.setattr(chunks, "WINDOW", 12)
    assert store_token(f"onnx:{other}") not in (first, second)


@pytest.mark.parametrize("damage", ["no-directory", "no-model", "no-tokenizer", "garbage-model",
                                    "garbage-tokenizer", "bad-floor"])
def test_a_bad_encoder_directory_is_one_line_naming_the_file(tmp_path: Path, damage: str) -> None:
    folder = tiny_onnx_model(tmp_path / "enc", {"alpha": [1.0, 0.0]})
    if damage == "no-directory":
        folder = tmp_path / "nowhere"
    elif damage == "no-model":
        (folder / "model.onnx").unlink()
    elif damage == "no-tokenizer":
        (folder / "tokenizer.json").unlink()
    elif damage == "garbage-model":
        (folder / "model.onnx").write_bytes(b"\x00not an onnx file" * 10)
    elif damage == "garbage-tokenizer":
        (folder / "tokenizer.json").write_text("{")
    else:
        (folder / "gitmem.json").write_text('{"floor": "high"}')
    with pytest.raises(RecallError) as raised:
        encoder.load_model(f"onnx:{folder}")
    message = str(raised.value)
    assert "\n" not in message and str(folder) in message, message
    assert raised.value.exit_code == ExitCode.USAGE


def test_without_the_extra_the_encoder_says_what_to_install(planted: History, tmp_path: Path, cli,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *rest: None if name == "onnxruntime"
                        else real(name, *rest))
    planted.repo.write("gitmem.yaml", f"recall:\n  model: onnx:{tmp_path / 'encoder'}\n  mode: hybrid\n")
    found = cli(["recall", "swiss"], cwd=planted.root)
    assert found.code == ExitCode.USAGE
    assert len(found.err.strip().splitlines()) == 1 and INSTALL in found.err, found.err
    status = cli(["status"], cwd=planted.root)
    assert INSTALL in status.out


def test_a_building_index_shows_progress_on_a_terminal_only(memrepo: GitRepo, tmp_path: Path, cli) -> None:
    import os
    import re
    import sys

    history = History(memrepo)
    for _ in range(110):
        history.cycle()                 # one commit each: a writer adds no entry while LOG has one uncommitted
    tiny_onnx_model(tmp_path / "encoder", vectors_of_words())
    memrepo.write("gitmem.yaml", f"recall:\n  model: onnx:{tmp_path / 'encoder'}\n  mode: hybrid\n")
    piped = cli(["recall", "--rebuild", "switzerland"], cwd=memrepo.path)
    assert piped.code == 0 and "embedding" not in piped.err, piped.err
    env = {key: value for key, value in os.environ.items() if key != "CI"}
    done, seen = run_on_a_terminal([sys.executable, "-m", "gitmem", "recall", "--rebuild", "swiss"],
                                   memrepo.path, env)
    assert done.returncode == 0, seen
    counts = re.findall(r"embedding the memory for recall \(entries\): (\d+)/(\d+)", seen)
    assert counts and counts[0][0] == "0" and counts[-1][0] == counts[-1][1] and int(counts[-1][1]) >= 220, seen


def test_a_query_runs_the_encoder_once_whatever_the_snippets(planted: History, tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    # The snippet's window is scored with the store's own rows of the hit: a transformer run costs milliseconds.
    planted.cycle(result=f"{FACT} " + " ".join(["filler"] * 30))
    ws = with_model(planted, f"onnx:{tmp_path / 'encoder'}", "semantic")
    assert found_ids(ws, "checkout")                                 # vectors built
    real = transformer.OnnxModel.pool_flat
    runs: list[int] = []

    def counted(self: transformer.OnnxModel, *args: Any) -> Any:
        runs.append(len(args[1]))
        return real(self, *args)

    monkeypatch.setattr(transformer.OnnxModel, "pool_flat", counted)
    hits = search(ws, "switzerland buyers billed double", min_score=0, gap=1)
    assert {hit.id for hit in hits[:2]} == {"cycle 9", "cycle 17"} and runs == [1], runs
    assert any("**" not in hit.snippet and "swiss" in hit.snippet for hit in hits)
