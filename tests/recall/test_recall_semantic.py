"""Recall by meaning: the shipped model, model2vec directories, the vector store beside the index, and the modes.

These use the real shipped model (wordllama's 16 MB table, read once per process) on small histories.
"""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from gitmem import install_command
from gitmem.config import load_config
from gitmem.errors import ExitCode
from gitmem.recall import RecallError, chunks, embed, semantic, vectors
from gitmem.recall.index import Index
from gitmem.recall.search import search
from gitmem.workspace import Workspace
from tests.support.helpers import GitRepo
from tests.support.recall_support import History, tiny_model

SWISS = "the checkout charged Swiss customers twice because currency rounding ran before the VAT step"
BACKUPS = "nightly backups stopped after the storage volume filled with old log archives"


def in_mode(history: History, mode: str, **recall: object) -> Workspace:
    config = history.config
    return Workspace.at(history.root, replace(config, recall=replace(config.recall, mode=mode, **recall)))


@pytest.fixture
def planted(memrepo: GitRepo) -> History:
    history = History(memrepo)
    for _ in range(12):
        history.cycle()
    history.cycle(result=SWISS)
    for _ in range(12):
        history.cycle()
    history.cycle(result=BACKUPS)
    for _ in range(4):
        history.cycle()
    return history


@pytest.fixture
def floorless() -> Iterator[None]:
    """The shipped model without its "no memory" floor, for tests of the ranker's mechanics (windows, filters,
    the two-step search): at its floor it finds few paraphrases, which is why it is not the default."""
    model = embed.load_static_model()
    kept = model.floor
    object.__setattr__(model, "floor", -1.0)
    try:
        yield
    finally:
        object.__setattr__(model, "floor", kept)


def store_of(ws: Workspace) -> vectors.Store:
    index = Index(ws)
    try:
        index.refresh()
        return index.vectors(embed.load_static_model(ws.config.recall.model, index.root))
    finally:
        index.close()


# -- the models ------------------------------------------------------------------------------------------------

def test_the_shipped_model_loads_from_its_wheel_and_embeds_meaning() -> None:
    model = embed.load_static_model()
    assert model.model_id.startswith("wordllama ") and model.dim == 256 and model.vocab == 32000
    weighted = model.weighted(np.ones(model.vocab, dtype=np.float32))
    price, cost, banana, empty = model.pool(["price", "cost", "banana", ""], weighted)
    assert price @ cost > 0.5 > price @ banana
    assert not empty.any()                              # no tokens: a zero vector, never a NaN


def test_a_model2vec_directory_loads_with_the_same_code(tmp_path: Path) -> None:
    folder = tiny_model(tmp_path / "m2v", {"price": [1.0] + [0.0] * 63, "cost": [0.9, 0.1] + [0.0] * 62,
                                          "banana": [0.0] * 63 + [1.0]})
    model = embed.load_static_model(f"model2vec:{folder}")
    assert (model.dim, model.vocab) == (64, 4) and model.model_id.startswith("model2vec ")
    price, cost, banana, unknown = model.pool(["Price", "cost", "banana", "zebra"], model.weighted(np.ones(4, "f4")))
    assert price @ cost > 0.9 and price @ banana == 0.0 and not unknown.any()
    first = model.model_id
    tiny_model(folder, {"price": [0.5] * 64})          # another model in the same place: another id
    embed._load.cache_clear()
    assert embed.load_static_model(f"model2vec:{folder}").model_id != first


def test_a_bad_model_setting_says_what_to_use(tmp_path: Path) -> None:
    with pytest.raises(RecallError, match="use wordllama or model2vec:DIRECTORY"):
        embed.load_static_model("word2vec")
    with pytest.raises(RecallError, match="cannot load the embedding model"):
        embed.load_static_model(f"model2vec:{tmp_path / 'nowhere'}")
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "model.safetensors").write_bytes(b"\x08\x00\x00\x00\x00\x00\x00\x00{}      ")
    (tmp_path / "bad" / "tokenizer.json").write_text("{}")
    with pytest.raises(RecallError, match="cannot load"):
        embed.load_static_model(f"model2vec:{tmp_path / 'bad'}")


def test_a_model_file_over_its_size_limit_is_refused_before_it_is_read(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tiny_model(tmp_path / "m2v", {"price": [1.0] * 8})
    monkeypatch.setattr(embed, "MAX_TABLE_BYTES", 64)
    with pytest.raises(RecallError, match=r"model.safetensors is \d+ bytes, more than a model file may be \(64\)"):
        embed.load_static_model(f"model2vec:{folder}")
    monkeypatch.setattr(embed, "MAX_TABLE_BYTES", 1 << 20)
    monkeypatch.setattr(embed, "MAX_TOKENIZER_BYTES", 64)
    with pytest.raises(RecallError, match=r"tokenizer.json is \d+ bytes"):
        embed.load_static_model(f"model2vec:{folder}")


def test_without_the_extra_auto_is_bm25_and_the_other_modes_say_what_to_install(
        planted: History, monkeypatch: pytest.MonkeyPatch, cli) -> None:
    monkeypatch.setattr(embed, "available", lambda spec="wordllama": False)
    hits = search(in_mode(planted, "auto"), "swiss currency")
    assert hits.mode == "bm25" and hits[0].id == "cycle 13"
    with pytest.raises(RecallError, match=re.escape(install_command("semantic"))):
        search(in_mode(planted, "hybrid"), "swiss")
    result = cli(["recall", "swiss", "--mode", "semantic"], cwd=planted.root)
    assert result.code == ExitCode.USAGE and "gitmem-agent[semantic]" in result.err
    status = cli(["status", "--json"], cwd=planted.root)
    # auto is bm25 with the shipped model whatever is installed: nothing is missing, so no note.
    assert json.loads(status.out)["recall"] == {"mode": "bm25", "model": "", "note": ""}


# -- finding by meaning ----------------------------------------------------------------------------------------

def test_at_its_floor_the_shipped_model_finds_a_paraphrase_and_says_no_memory_rather_than_guess(
        planted: History) -> None:
    question = "why were buyers from Switzerland billed double?"
    assert search(in_mode(planted, "bm25"), question, known_only=True) == []
    assert [hit.id for hit in search(in_mode(planted, "hybrid"), question, known_only=True)][:1] == ["cycle 13"]
    # Never written: one foreign, one in the filler's own words ("refund", "plan"). Under the floor, even --all.
    for never in ("what colour is the office cat?", "why did the refund for annual plans take two weeks?"):
        assert search(in_mode(planted, "hybrid"), never, known_only=True) == []
        assert search(in_mode(planted, "semantic"), never, min_score=0.0, gap=1.0) == []
        assert not search(in_mode(planted, "hybrid"), never).known      # the nearest entries say they are weak


def test_hybrid_finds_in_other_words_what_bm25_misses(planted: History, floorless: None) -> None:
    question = "why were buyers from Switzerland billed double?"
    assert search(in_mode(planted, "bm25"), question, known_only=True) == []
    hits = search(in_mode(planted, "hybrid"), question, known_only=True)
    assert hits.mode == "hybrid" and [hit.id for hit in hits] == ["cycle 13"]
    assert "Swiss customers twice" in hits[0].snippet          # the passage that matched, not the entry's start
    semantic_only = search(in_mode(planted, "semantic"), question)
    assert semantic_only.mode == "semantic" and semantic_only[0].id == "cycle 13"


def test_hybrid_keeps_word_matches_first_and_says_no_memory_of_the_unknown(planted: History) -> None:
    ws = in_mode(planted, "hybrid")
    assert search(ws, "swiss currency rounding")[0].id == "cycle 13"
    assert search(ws, "nightly backups storage")[0].id == "cycle 26"
    for question in ("why did the Kubernetes ingress drop gRPC streams?", "who catered the summer party?"):
        assert search(ws, question) == [], question


def test_the_newer_of_two_contradicting_facts_ranks_first_in_bm25_and_hybrid(memrepo: GitRepo) -> None:
    # Semantic-only mode is not held to this: its gap cut drops the newer fact here (issue 14 stays open).
    history = History(memrepo)
    history.cycle(result="the newsletter is sent through Brevo; Brevo sends the newsletter on Tuesdays")
    for _ in range(30):
        history.cycle()
    history.cycle(result="the newsletter now goes out through Postmark on Tuesdays, replacing Brevo after a long test")
    for mode in ("bm25", "hybrid"):
        hits = search(in_mode(history, mode), "newsletter brevo tuesdays", kinds=["log"])
        assert [hit.id for hit in hits][:2] == ["cycle 32", "cycle 1"], mode


def test_a_fact_deep_in_a_long_close_report_is_found_by_its_window(memrepo: GitRepo, floorless: None) -> None:
    history = History(memrepo)
    for _ in range(8):
        history.cycle()
    filler = "\n".join(history.filler(10) for _ in range(40))
    history.memory.add_close_entry({"Cycles": "8 (8 built)", "Done": f"{filler}\n{BACKUPS}", "Plan": "more"})
    history.commit("close")
    for _ in range(3):
        history.cycle()
    hits = search(in_mode(history, "semantic"), "why did the overnight copies of our data quit?", kinds=["log"],
                  min_score=0.0, gap=1.0)
    assert (hits[0].id, hits[0].path) == ("close", "LOG.md")
    assert "nightly backups stopped" in hits[0].snippet
    assert len(chunks.windows("close", filler + " " + BACKUPS)) > 10


def test_filters_and_workspaces_reach_the_semantic_ranker(memrepo: GitRepo, floorless: None) -> None:
    memrepo.commit_files({"gitmem.yaml": "workspaces:\n  billing:\n    memory_dir: billing\n"}, "two agents")
    base = load_config(memrepo.path)
    billing_config = base.with_workspace("billing")
    for role in ("now", "decisions", "log", "lessons", "rules"):
        source = memrepo.path / getattr(billing_config.files, role)
        memrepo.write(billing_config.path(role), source.read_bytes())
    default, billing = History(memrepo, base), History(memrepo, billing_config)
    for _ in range(6):
        default.cycle()
        billing.cycle()
    billing.cycle(result=SWISS)
    default.cycle(result=BACKUPS)
    question = "why were buyers from Switzerland billed double?"
    top = search(in_mode(default, "semantic"), question, min_score=0.0, gap=1.0)
    assert top and all(hit.path != "billing/LOG.md" for hit in top)
    found = search(in_mode(billing, "semantic"), question, min_score=0.0, gap=1.0)
    assert (found[0].id, found[0].path) == ("cycle 7", "billing/LOG.md")
    everywhere = search(in_mode(default, "hybrid"), question, all_workspaces=True)
    assert [(hit.id, hit.workspace) for hit in everywhere][:1] == [("cycle 7", "billing")]
    only_now = search(in_mode(default, "semantic"), question, kinds=["now"], min_score=0.0, gap=1.0)
    assert only_now and {hit.kind for hit in only_now} == {"now"}


def test_the_two_step_search_of_large_stores_agrees_with_the_exact_one(planted: History,
                                                                       monkeypatch: pytest.MonkeyPatch,
                                                                       floorless: None) -> None:
    ws = in_mode(planted, "semantic")
    question = "why did the overnight copies of our data quit?"
    exact = [hit.id for hit in search(ws, question, min_score=0.0, gap=1.0)]
    monkeypatch.setattr(semantic, "EXACT_ROWS", 10)
    monkeypatch.setattr(semantic, "CANDIDATES", 40)
    approx = [hit.id for hit in search(ws, question, min_score=0.0, gap=1.0)]
    assert approx[0] == exact[0] == "cycle 26"


# -- the vector store ------------------------------------------------------------------------------------------

def test_vectors_follow_the_index_incrementally_and_drop_what_is_gone(planted: History) -> None:
    ws = in_mode(planted, "hybrid")
    before = store_of(ws)
    planted.cycle(result="the ocelot mascot was redrawn in teal")
    planted.memory.ask_decision(title="Rename the ocelot mascot", recommendation="yes")
    after = store_of(ws)
    assert after.token == before.token and after.rows > before.rows       # appended, not rebuilt
    decisions = planted.repo.read("DECISIONS.md")
    planted.repo.write("DECISIONS.md", decisions.replace("Rename the ocelot mascot", "Rename the lynx mascot"))
    edited = store_of(ws)
    assert edited.token == before.token and int((edited.doc < 0).sum()) >= 1      # the old text's rows are gone
    found = search(ws, "lynx mascot")
    assert found[0].kind == "decision" and "ocelot" not in found[0].snippet


def test_a_new_model_or_damaged_files_rebuild_the_vectors(planted: History, tmp_path: Path) -> None:
    ws = in_mode(planted, "hybrid")
    first = store_of(ws)
    (first.folder / "doc.i64").write_bytes(b"")                       # a torn write: the rows are not there
    second = store_of(ws)
    assert second.token != first.token and second.rows == first.rows and not first.folder.exists()
    folder = tiny_model(tmp_path / "m2v", {word: list(np.eye(64)[n]) for n, word in
                                           enumerate(("checkout", "swiss", "backups", "storage"))})
    other = in_mode(planted, "hybrid", model=f"model2vec:{folder}")
    third = store_of(other)
    assert third.token != second.token and third.dim == 64
    assert search(other, "swiss checkout", mode="semantic", min_score=0.0, gap=1.0)[0].id == "cycle 13"


@pytest.mark.parametrize("damage", ["torn fit", "no df", "short df"])
def test_any_damaged_file_of_the_vectors_folder_rebuilds_it(memrepo: GitRepo, damage: str) -> None:
    history = History(memrepo)
    for _ in range(4):
        history.cycle()
    ws = in_mode(history, "hybrid")
    folder = store_of(ws).folder
    if damage == "torn fit":
        (folder / "fit.npz").write_bytes((folder / "fit.npz").read_bytes()[:100])
    elif damage == "no df":
        (folder / "df.i64").unlink()
    else:
        (folder / "df.i64").write_bytes(bytes(16))
    history.cycle(result="the ocelot mascot was redrawn in teal")       # an append would read the damage
    rebuilt = store_of(ws)
    assert rebuilt.folder != folder and not folder.exists()
    assert "ocelot" in search(ws, "ocelot mascot teal")[0].snippet


def test_rows_past_the_committed_ones_are_cut_off_by_the_next_writer(planted: History) -> None:
    ws = in_mode(planted, "hybrid")
    before = store_of(ws)
    for name, _ in vectors.COLUMNS:                         # an interrupted write: rows never committed
        with (before.folder / name).open("ab") as handle:
            handle.write(b"\x7f" * 4096)
    assert store_of(ws).rows == before.rows                 # never read
    planted.cycle(result="the ocelot mascot was redrawn in teal")
    after = store_of(ws)
    assert after.token == before.token and after.rows > before.rows
    assert (after.folder / "doc.i64").stat().st_size == after.rows * 8
    assert (after.folder / "vec.i8").stat().st_size == after.rows * after.dim
    assert 0x7F7F7F7F7F7F7F7F not in after.doc.tolist()          # no junk taken for an entry
    assert "ocelot" in search(ws, "ocelot mascot teal", mode="semantic")[0].snippet


def test_the_fit_is_redone_when_memory_has_doubled(memrepo: GitRepo) -> None:
    history = History(memrepo)
    for _ in range(3):
        history.cycle()
    ws = in_mode(history, "hybrid")
    first = last = store_of(ws)
    for _ in range(60):
        history.cycle()
        found = store_of(ws)
        if found.token != first.token:
            break
        assert found.rows < 2 * first.rows + 20            # appended until the rows have doubled
        last = found
    assert found.token != first.token and last.rows >= 2 * first.rows


def test_windows_overlap_and_reach_the_end() -> None:
    words = " ".join(f"w{n}" for n in range(60))
    found = chunks.windows("cycle 3 built", words)
    assert len(found) == len(range(0, 60 - chunks.WINDOW, chunks.STRIDE)) + 1
    assert all(text.startswith("cycle 3 built w") for text in found)
    assert found[0].split()[3:] == [f"w{n}" for n in range(chunks.WINDOW)] and found[-1].endswith("w59")
    assert chunks.windows("", "the a of") == [""] and chunks.query_text("the of") == "the of"
    spans = chunks.window_spans("alpha, beta and gamma")
    assert spans == [("alpha beta gamma", 0, 21)]
    # Snippets embed a body's windows exactly as they were stored: the same texts, no stray space.
    assert chunks.window_texts("", spans) == chunks.windows("", "alpha, beta and gamma") == ["alpha beta gamma"]
    assert chunks.window_texts("cycle 3 built", chunks.window_spans(words)) == found


# -- the modes and the CLI -------------------------------------------------------------------------------------

def test_json_and_status_say_which_mode_ran(planted: History, cli) -> None:
    out = json.loads(cli(["recall", "swiss", "--json", "--mode", "hybrid"], cwd=planted.root).out)
    assert out["mode"] == "hybrid" and out["hits"][0]["id"] == "cycle 13"
    # The default (auto) is words with the shipped static model: it is hybrid only with a saved encoder.
    words = json.loads(cli(["recall", "swiss", "--json"], cwd=planted.root).out)
    assert words["mode"] == "bm25"
    status = cli(["status"], cwd=planted.root)
    assert [line for line in status.lines if line.startswith("recall")] == ["recall       bm25"]
    planted.repo.write("gitmem.yaml", "recall:\n  mode: hybrid\n")
    status = cli(["status"], cwd=planted.root)
    assert [line for line in status.lines if line.startswith("recall")] == ["recall       hybrid (wordllama)"]


def test_config_rejects_an_unknown_mode(memrepo: GitRepo) -> None:
    from gitmem.config import ConfigError

    memrepo.write("gitmem.yaml", "recall:\n  mode: fuzzy\n")
    with pytest.raises(ConfigError, match="recall.mode: 'fuzzy' is not one of auto, bm25, semantic, hybrid"):
        load_config(memrepo.path)
    memrepo.write("gitmem.yaml", "recall:\n  semantic_scale: 0\n")
    with pytest.raises(ConfigError, match="semantic_scale: must be at least 0.001, got 0"):
        load_config(memrepo.path)


def test_bm25_mode_and_check_import_nothing_of_the_semantic_side(planted: History) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    probe = ("import sys; from gitmem.cli import main; code = main(['recall', '--mode', 'bm25', 'swiss']); "
             "print(code, sorted(m for m in ('numpy', 'tokenizers', 'wordllama') if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", probe], cwd=planted.root, capture_output=True, text=True, env=env,
                          timeout=120)
    assert done.stdout.strip().endswith("0 []"), done.stdout + done.stderr


def test_the_agent_tool_uses_the_same_engine(planted: History, floorless: None) -> None:
    from gitmem.agents.tools import recall_text

    text = recall_text(in_mode(planted, "hybrid"), "why were buyers from Switzerland billed double?", 5)
    assert text.startswith("LOG.md:") and "cycle 13" in text
    # The agent is shown what `search` finds, as `gitmem recall` shows it.
    ws = in_mode(planted, "hybrid")
    assert recall_text(ws, "who catered the summer party?", 5) == search(ws, "who catered the summer party?",
                                                                         limit=5).text()


def test_a_hostile_model_directory_gives_one_line_and_reads_nothing_unbounded(tmp_path: Path) -> None:
    import struct

    (tmp_path / "loop").symlink_to(tmp_path / "loop")
    with pytest.raises(RecallError, match="recall.model: cannot follow"):
        embed.load_static_model(f"model2vec:{tmp_path / 'loop'}")
    good = tiny_model(tmp_path / "good", {"price": [1.0] * 8})
    for name, target in (("fifo", None), ("zero", Path("/dev/zero")), ("folder", tmp_path)):
        folder = tmp_path / name
        folder.mkdir()
        (folder / "tokenizer.json").write_bytes((good / "tokenizer.json").read_bytes())
        if target is None:
            os.mkfifo(folder / "model.safetensors")     # would hang a reader waiting for a writer
        else:
            (folder / "model.safetensors").symlink_to(target)   # /dev/zero would fill the memory
        with pytest.raises(RecallError, match="model.safetensors is not a regular file"):
            embed.load_static_model(f"model2vec:{folder}")
    liar = tmp_path / "liar"
    liar.mkdir()
    (liar / "tokenizer.json").write_bytes((good / "tokenizer.json").read_bytes())
    (liar / "model.safetensors").write_bytes(struct.pack("<Q", 1 << 40) + b"{}")
    with pytest.raises(RecallError, match="the header claims 1099511627776 bytes; the file holds 10"):
        embed.load_static_model(f"model2vec:{liar}")
    header = json.dumps({"embeddings": {"dtype": "F32", "shape": [100_000, 100_000],
                                        "data_offsets": [0, 40_000_000_000]}}).encode()
    (liar / "model.safetensors").write_bytes(struct.pack("<Q", len(header)) + header)
    with pytest.raises(RecallError, match=r"claims bytes 0\.\.40000000000; the file holds 0"):
        embed.load_static_model(f"model2vec:{liar}")
    (liar / "model.safetensors").write_bytes((good / "model.safetensors").read_bytes())
    (liar / "tokenizer.json").unlink()
    (liar / "tokenizer.json").symlink_to("/dev/zero")
    with pytest.raises(RecallError, match="tokenizer.json is not a regular file"):
        embed.load_static_model(f"model2vec:{liar}")


def test_a_relative_model_directory_is_taken_from_the_repository_root(planted: History, cli) -> None:
    tiny_model(planted.root / "models" / "m2v", {word: list(np.eye(64)[n]) for n, word in
                                                  enumerate(("checkout", "swiss", "backups", "storage"))})
    config = planted.repo.read("gitmem.yaml") if (planted.root / "gitmem.yaml").exists() else ""
    planted.repo.write("gitmem.yaml", config + "\nrecall:\n  model: model2vec:models/m2v\n")
    (planted.root / "deep" / "down").mkdir(parents=True)
    embed._load.cache_clear()                           # read afresh, first from a subdirectory
    for where in (planted.root / "deep" / "down", planted.root):
        found = cli(["recall", "swiss checkout", "--json", "--mode", "semantic", "--all"], cwd=where)
        assert found.code == 0, found.err
        assert json.loads(found.out)["hits"][0]["id"] == "cycle 13", where
