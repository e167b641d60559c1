"""Recall benchmarks on synthetic memory at 1x, 10x and 100x a real agent's size, in BM25 mode (words only;
hybrid and semantic recall are measured by bench_recall_semantic.py).

    pytest benchmarks/bench_recall.py                          # all scales (100x takes minutes to generate)
    GITMEM_BENCH_SCALES=1,10 pytest benchmarks/bench_recall.py
    GITMEM_BENCH_SEALED=1 pytest benchmarks/bench_recall.py     # LOG sealed into volumes first (rules 6)
    python benchmarks/bench_recall.py                          # the summary table only

What is measured, per scale:
- full build: a fresh index from the files and every commit;
- query latency, p50 and p95, over the labelled query set (the planted facts and superseded pairs of
  `tests.support.synth`), in-process on an open index, and through `gitmem.recall.search` (open + check + query);
- index update after one new cycle (a LOG entry, a NOW block and a commit), which should not grow with history;
- a naive baseline that reads and scans every memory file for each query (grep-like: entries holding the
  most query words, newest first), its p50, and the ratio to recall's p50;
- recall@5 of both on the labelled set, as keywords and as the sentence an agent would type
  ("what do we know about the <keywords> and what was done about it?"). A superseded pair counts only
  when the newer entry is in the top 5 above the older one.
The synthetic repos come from `tests.support.synth.cached_repo` and are never written to: each benchmark works on a
light copy whose git objects are borrowed through `objects/info/alternates`.
"""
from __future__ import annotations

import os
import re
import shutil
import statistics
import sys
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from benchmarks.recall_support import (
    QUESTION,
    add_cycle,
    config_in_mode,
    labelled_set,
    light_copy,
    percentile,
    recall_at_5,
)
from gitmem.workspace import Workspace

ROLES = ("log", "now", "decisions", "lessons", "rules")


def scales() -> list[float]:
    raw = os.environ.get("GITMEM_BENCH_SCALES", "1,10,100")
    return [float(part) for part in raw.split(",") if part.strip()]


# -- the naive baseline --------------------------------------------------------------------------------

_HEADING = re.compile(r"^(##|###) (.*)$")
_IDENT = re.compile(r"\b(cycle \d+|[LDR]-\d+)\b")


def naive_search(root: Path, paths: dict[str, str], query: str, limit: int = 5) -> list[tuple[str, str]]:
    """Read every memory file, split at headings, rank entries by how many query words they hold."""
    needles = [word for word in re.findall(r"[^\W_]+", query.lower())]
    scored: list[tuple[int, int, str, str]] = []
    order = 0
    for role, rel in paths.items():
        try:
            text = (root / rel).read_text(encoding="utf-8")
        except FileNotFoundError:
            continue
        kind = {"log": "log", "now": "now", "decisions": "decision", "lessons": "lesson", "rules": "rule"}[role]
        for chunk in re.split(r"\n(?=##)", text):
            order += 1
            lower = chunk.lower()
            hits = sum(1 for word in needles if word in lower)
            if hits:
                match = _IDENT.search(chunk.split("\n", 1)[0])
                scored.append((hits, order if role == "log" else 0, kind, match.group(1) if match else ""))
    scored.sort(key=lambda item: (-item[0], -item[1]))
    return [(kind, ident) for _, _, kind, ident in scored[:limit]]


# -- fixtures ------------------------------------------------------------------------------------------

def copied(info, target: Path) -> Path:
    """A light copy of the synthetic repo; with GITMEM_BENCH_SEALED=1, its LOG sealed into volumes first, as the
    first cycle under rules 6 leaves an old LOG (tests.support.sealing.seal_committed)."""
    root = light_copy(Path(info.path), target)
    if os.environ.get("GITMEM_BENCH_SEALED"):
        from tests.support.sealing import seal_committed

        seal_committed(root)
    return root


@pytest.fixture(scope="module", params=scales(), ids=lambda k: f"{k:g}x")
def recall_repo(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple]:
    from gitmem.recall.index import Index
    from tests.support.synth import cached_repo

    info = cached_repo(request.param, 0)
    root = copied(info, tmp_path_factory.mktemp(f"recall-{request.param:g}x") / "repo")
    config = config_in_mode(root, "bm25")
    index = Index(Workspace.at(root, config))
    started = time.perf_counter()
    index.refresh()
    build = time.perf_counter() - started
    yield info, root, config, index, build
    index.close()
    shutil.rmtree(root.parent, ignore_errors=True)


def _measure(synth_value) -> dict[str, float]:
    from gitmem.recall import search
    from gitmem.recall.search import run

    info, root, config, index, build = synth_value
    labels = labelled_set(info)
    for label in labels:                      # warm the page cache and the stem cache
        run(index, label.query, limit=5)
    in_process, found = [], []
    for label in labels:
        started = time.perf_counter()
        hits = run(index, label.query, limit=5)
        in_process.append(time.perf_counter() - started)
        found.append([(hit.kind, hit.id) for hit in hits])
    api = []
    for label in labels:
        started = time.perf_counter()
        search(Workspace.at(root, config), label.query, limit=5)
        api.append(time.perf_counter() - started)
    paths = {role: config.path(role) for role in ROLES}
    naive, naive_found = [], []
    for label in labels:
        started = time.perf_counter()
        naive_found.append(naive_search(root, paths, label.query))
        naive.append(time.perf_counter() - started)
    # The same queries asked the way an agent asks, in a sentence: the glue words match almost everything.
    asked = [replace(label, query=QUESTION.format(label.query)) for label in labels]
    asked_found = [[(hit.kind, hit.id) for hit in run(index, label.query, limit=5)] for label in asked]
    naive_asked = [naive_search(root, paths, label.query) for label in asked]
    return {
        "scale": info.scale, "docs": index.conn.execute("SELECT count(*) FROM docs").fetchone()[0],
        "build_s": build, "p50_ms": percentile(in_process, 0.5) * 1000, "p95_ms": percentile(in_process, 0.95) * 1000,
        "api_p50_ms": percentile(api, 0.5) * 1000, "api_p95_ms": percentile(api, 0.95) * 1000,
        "naive_p50_ms": percentile(naive, 0.5) * 1000,
        "naive_ratio": percentile(naive, 0.5) / percentile(in_process, 0.5),
        "recall_at_5": recall_at_5(found, labels), "naive_recall_at_5": recall_at_5(naive_found, labels),
        "question_recall_at_5": recall_at_5(asked_found, asked),
        "naive_question_recall_at_5": recall_at_5(naive_asked, asked),
        "queries": len(labels),
    }


# -- benchmarks ----------------------------------------------------------------------------------------

def test_query_latency(benchmark, recall_repo) -> None:
    from gitmem.recall.search import run

    info, root, config, index, build = recall_repo
    figures = _measure(recall_repo)
    benchmark.extra_info.update(figures)
    queries = [label.query for label in labelled_set(info)]
    position = iter(range(10**9))
    benchmark(lambda: run(index, queries[next(position) % len(queries)], limit=5))
    assert figures["recall_at_5"] >= figures["naive_recall_at_5"]
    print(f"\nrecall {figures}", file=sys.stderr)


def test_update_after_one_cycle(benchmark, recall_repo) -> None:
    info, root, config, index, build = recall_repo
    added: list[int] = []

    def setup() -> tuple[tuple, dict]:
        added.append(len(added) + 1)
        add_cycle(root, config, added[-1])
        return (), {}

    benchmark.pedantic(index.refresh, setup=setup, rounds=10, iterations=1)
    assert not index.rebuilt
    from gitmem.recall.search import run
    # Rounds vary (one with --benchmark-disable): the newest cycle must be found either way.
    assert run(index, f"zyzzyva{added[-1]}")[0].id == "cycle " + str(info.cycles + added[-1])


def test_full_build(benchmark, recall_repo) -> None:
    info, root, config, index, build = recall_repo
    benchmark.extra_info["first_build_s"] = build
    benchmark.pedantic(index.rebuild, rounds=1, iterations=1)


def main() -> int:
    """Print the summary table without pytest-benchmark."""
    import tempfile

    from gitmem.recall.index import Index
    from tests.support.synth import cached_repo

    print("| scale | docs | build s | p50 ms | p95 ms | search() p50 ms | update ms (median of 10) | naive p50 ms |"
          " naive/recall | recall@5 | naive recall@5 | recall@5, as questions | naive, as questions |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for scale in scales():
        info = cached_repo(scale, 0)
        with tempfile.TemporaryDirectory() as tmp:
            root = copied(info, Path(tmp) / "repo")
            config = config_in_mode(root, "bm25")
            index = Index(Workspace.at(root, config))
            started = time.perf_counter()
            index.refresh()
            figures = _measure((info, root, config, index, time.perf_counter() - started))
            updates = []
            for number in range(1, 11):
                add_cycle(root, config, number)
                started = time.perf_counter()
                index.refresh()
                updates.append(time.perf_counter() - started)
            index.close()
        print(f"| {scale:g}x | {figures['docs']} | {figures['build_s']:.1f} | {figures['p50_ms']:.1f} |"
              f" {figures['p95_ms']:.1f} | {figures['api_p50_ms']:.1f} | {statistics.median(updates) * 1000:.1f} |"
              f" {figures['naive_p50_ms']:.1f} | {figures['naive_ratio']:.0f}x | {figures['recall_at_5']:.3f} |"
              f" {figures['naive_recall_at_5']:.3f} | {figures['question_recall_at_5']:.3f} |"
              f" {figures['naive_question_recall_at_5']:.3f} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
