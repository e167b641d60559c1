"""Masking what is shown (`gitmem.secrets.scrub_data`): every string of a `--json` view masked alone, as `status
--json`, `import --json` and the MCP tools print them.

20,000 short strings of ordinary prose (an import's facts, a status's lines), one in a hundred with a secret-like
token. CPU time per view, so other work on the machine does not count. Before short strings were asked for any
needle at once, each asked the redactors' 80 needles in turn: 31.9 µs a string against 5.8 µs (2026-12-07).

Run:  .venv/bin/pytest benchmarks/bench_scrub.py --benchmark-only -s
"""
from __future__ import annotations

import time

import pytest

from gitmem import secrets

STRINGS = 20_000
TOKEN = "sk-ant-" + "a1B2c3D4" * 4


@pytest.fixture(scope="module")
def view() -> list[str]:
    return [f"Always run the linter before committing change {n} to the billing service."
            + (f" The key was {TOKEN}." if n % 100 == 0 else "") for n in range(STRINGS)]


@pytest.mark.benchmark(group="display: scrub_data of a 20,000-string view", timer=time.process_time)
def test_scrub_of_a_view_of_short_strings(benchmark, view: list[str]) -> None:
    shown = benchmark(secrets.scrub_data, view)
    if benchmark.stats is not None:          # None when the smoke test runs it with --benchmark-disable
        print(f"\n{STRINGS:,} strings: {benchmark.stats.stats.median * 1e6 / STRINGS:.1f} µs CPU a string (median)")
    assert sum(TOKEN in line for line in shown) == 0 and sum("***" in line for line in shown) == STRINGS // 100
