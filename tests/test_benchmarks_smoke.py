"""The benchmarks still run: every one of them once, at 1x, with timing disabled (the figures come from
`pytest benchmarks/ --benchmark-only` at 1x, 10x and 100x; see the README)."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.slow
def test_every_benchmark_runs_once_at_1x(tmp_path: Path) -> None:
    env = {**os.environ, "GITMEM_BENCH_SCALES": "1", "GITMEM_BENCH_CACHE": str(tmp_path / "cache")}
    done = subprocess.run([sys.executable, "-m", "pytest", "benchmarks", "--benchmark-disable", "--no-cov",
                           "-p", "no:cacheprovider"], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=900)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert " passed" in done.stdout and " failed" not in done.stdout
