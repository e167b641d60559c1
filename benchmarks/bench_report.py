"""`gitmem report` over the whole history at 1x, 10x and 100x (480, 4,800 and 48,000 cycles; 100x is a 75 MB LOG),
with no date window, and the job summary's 14 days.

Goal (issue 15): the full report at 100x finishes in seconds, not minutes; the summary does not grow with history.
The synthetic LOG's entries carry no runner lines, so each scale's copy gets what the runner writes today in every
cycle's Evidence (a context line and a tokens line), a cost on every third cycle and a revert note on every 50th:
the report reads each of them, as it would in a real history.

Run:  .venv/bin/pytest benchmarks/bench_report.py --benchmark-only -s
Scales: GITMEM_BENCH_SCALES (default "1,10,100"). `test_report_scaling` prints seconds and page sizes per scale.
"""
from __future__ import annotations

import os
import re
import shutil
import time
from datetime import UTC, date, datetime
from pathlib import Path

import pytest

from gitmem.report import build
from gitmem.workspace import Workspace
from tests.support.synth import cached_repo

SCALES = tuple(float(s) for s in os.environ.get("GITMEM_BENCH_SCALES", "1,10,100").split(","))
NOW = datetime(2026, 11, 1, 12, tzinfo=UTC)      # the synthetic histories end on 2026-11-01
MEMORY = ("LOG.md", "DECISIONS.md", "LESSONS.md", "RULES.md", "NOW.md", "gitmem.yaml")
_EVIDENCE = re.compile(r"^- Evidence: .*$", re.M)


def with_runner_lines(text: str) -> str:
    count = 0

    def add(match: re.Match[str]) -> str:
        nonlocal count
        count += 1
        lines = [match.group(0), f"  runner: context {5000 + count % 700} tokens of 60000 (estimate)"]
        if count % 50 == 0:
            lines.append("  runner: reverted the agent's resolution of D-0001 (only humans answer decisions)")
        if count % 3 == 0:
            lines.append(f"  cost: ${0.1 + count % 40 / 100:.2f}")
        lines.append(f"  tokens: input {900 + count % 800}, output {300 + count % 500}, cache_read_input_tokens "
                     f"{count % 3000}, cache_creation_input_tokens {count % 200}, total {1200 + count % 4500}")
        return "\n".join(lines)

    return _EVIDENCE.sub(add, text)


@pytest.fixture(scope="module")
def repos(tmp_path_factory: pytest.TempPathFactory) -> dict[float, Path]:
    out: dict[float, Path] = {}
    for scale in SCALES:
        source = Path(cached_repo(scale).path)
        target = tmp_path_factory.mktemp(f"report{scale:g}") / "repo"
        target.mkdir()
        for name in MEMORY:
            if (source / name).exists():
                shutil.copyfile(source / name, target / name)
        (target / "LOG.md").write_text(with_runner_lines((source / "LOG.md").read_text(encoding="utf-8")),
                                       encoding="utf-8")
        out[scale] = target
    return out


def report(root: Path, fmt: str) -> str:
    return build(Workspace.at(root), fmt=fmt, clock=lambda: NOW, until=date(2026, 11, 1))


@pytest.mark.parametrize("scale", SCALES)
def test_report_whole_history(benchmark, repos: dict[float, Path], scale: float) -> None:
    page = benchmark.pedantic(report, args=(repos[scale], "html"), rounds=3, iterations=1)
    benchmark.extra_info.update(scale=scale, page_bytes=len(page.encode()))
    assert page.count('class="chart"') == 8


@pytest.mark.parametrize("scale", SCALES)
def test_report_summary(benchmark, repos: dict[float, Path], scale: float) -> None:
    text = benchmark(report, repos[scale], "summary")
    benchmark.extra_info.update(scale=scale, summary_bytes=len(text.encode()))
    assert text.count("```mermaid") == 6


def test_report_scaling(repos: dict[float, Path]) -> None:
    print()
    print(f"{'scale':>6} {'LOG MB':>7} {'html s':>7} {'page KB':>8} {'summary ms':>11}")
    for scale, root in repos.items():
        started = time.perf_counter()
        page = report(root, "html")
        whole = time.perf_counter() - started
        best = float("inf")
        for _ in range(5):
            started = time.perf_counter()
            report(root, "summary")
            best = min(best, time.perf_counter() - started)
        size = (root / "LOG.md").stat().st_size / 1e6
        print(f"{scale:>6g} {size:>7.1f} {whole:>7.2f} {len(page.encode()) / 1024:>8.0f} {best * 1000:>11.1f}")
        assert whole < 30
