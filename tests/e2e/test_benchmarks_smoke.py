"""The benchmarks still run: every one of them once, at 1x, with timing disabled (the figures come from
`pytest benchmarks/ --benchmark-only` at 1x, 10x and 100x; see the README)."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.untraced import untraced_environ

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_every_benchmark_runs_once_at_1x(tmp_path: Path) -> None:
    # Untraced: the benchmarks re-run paths the suite's own tests measure, and under the tracer the run cost
    # 44% more CPU (115 s against 80 s; the suite's longest test); what this test holds is that they run.
    # Its own --basetemp: pytest's default, a numbered folder in the machine's /tmp, has every run clean up older
    # runs' folders there as it ends (other sessions' too; 27 s of this run's time on a shared machine).
    env = {**untraced_environ(), "GITMEM_BENCH_SCALES": "1", "GITMEM_BENCH_CACHE": str(tmp_path / "cache")}
    done = subprocess.run([sys.executable, "-m", "pytest", "benchmarks", "--benchmark-disable", "--no-cov",
                           "-p", "no:cacheprovider", "-n", "0", "--basetemp", str(tmp_path / "run")], cwd=ROOT,
                          env=env, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert " passed" in done.stdout and " failed" not in done.stdout



@pytest.mark.slow
def test_the_recall_benchmark_can_measure_another_model(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # GITMEM_BENCH_MODEL goes into the planted copy's gitmem.yaml (round-trip), so the in-process index and a
    # fresh process (the cold-start figure) both embed with it.
    from benchmarks.bench_recall_semantic import prepare
    from gitmem.config import load_config
    from gitmem.recall import embed
    from tests.support.recall_support import tiny_model

    spec = f"model2vec:{tiny_model(tmp_path / 'model', {'price': [1.0, 0.0], 'charge': [0.9, 0.1]})}"
    monkeypatch.setenv("GITMEM_BENCH_MODEL", spec)
    setup = prepare(1.0, tmp_path / "bench")
    try:
        assert setup.index.config.recall.model == spec
        assert load_config(setup.root).recall.model == spec
        assert setup.index.vectors(embed.load_static_model(spec)).rows == setup.figures["windows"]
        assert (setup.root / "gitmem.yaml").read_text(encoding="utf-8").startswith("# gitmem configuration.")
    finally:
        setup.index.close()


@pytest.mark.slow
def test_the_recall_benchmark_reuses_a_kept_build(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # GITMEM_BENCH_KEEP: a real encoder embeds 10x for minutes, so a later run (another cut, another table)
    # starts from a copy of the kept build and leaves the kept one as it was.
    from benchmarks.bench_recall_semantic import prepare
    from tests.support.recall_support import tiny_model

    monkeypatch.setenv("GITMEM_BENCH_MODEL", f"model2vec:{tiny_model(tmp_path / 'model', {'price': [1.0, 0.0]})}")
    monkeypatch.setenv("GITMEM_BENCH_KEEP", str(tmp_path / "kept"))
    first = prepare(1.0, tmp_path / "first")
    first.index.close()
    kept = next((tmp_path / "kept").iterdir())
    log_before = (kept / "repo" / "LOG.md").read_bytes()
    second = prepare(1.0, tmp_path / "second")
    try:
        assert second.root == tmp_path / "second" / "repo" and second.figures == first.figures
        assert [case.target for case in second.sets["paraphrase"]] == [case.target for case in first.sets["paraphrase"]]
        assert not second.index.rebuilt
        assert sorted(p.name for p in second.index.path.parent.glob("vectors-*")) == \
            sorted(p.name for p in first.index.path.parent.glob("vectors-*"))
    finally:
        second.index.close()
    assert (kept / "repo" / "LOG.md").read_bytes() == log_before
