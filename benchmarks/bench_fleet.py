"""`gitmem fleet` over 1, 10 and 100 local agent repositories, each at 1x history (480 cycles), timed as whole
processes, as a human or a workflow runs it.

One synthetic repository is built (and cached); the others are clones of it that borrow its objects (git
alternates), so 100 agents cost seconds to set up. Each is read once before timing, so the page cache is warm.

Goals (issue 25): `fleet status` at 100 agents within 15x the time of one agent; `fleet report` (the page and
every agent's own report) at 100 agents within 30 s. Peak memory is reported as the largest resident set of any
one process (the command or one of its workers: there are as many workers as CPUs).

Run:  .venv/bin/pytest benchmarks/bench_fleet.py --benchmark-only -s
Counts: GITMEM_BENCH_SCALES (default "1,10,100") is read as numbers of agents here.
"""
from __future__ import annotations

import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.synth import cached_repo, default_cache_dir
from tests.support.synth_copy import working_copy

COUNTS = tuple(int(float(s)) for s in os.environ.get("GITMEM_BENCH_SCALES", "1,10,100").split(",") if s.strip())
GITMEM = str(Path(sys.executable).parent / "gitmem")


@pytest.fixture(scope="module")
def fleets() -> Iterator[dict[int, Path]]:
    """A directory per count with its fleet.yaml, over one shared set of agent clones."""
    source = cached_repo(1.0)
    home = Path(tempfile.mkdtemp(prefix="fleet-", dir=default_cache_dir()))
    try:
        agents = home / "agents"
        for n in range(max(COUNTS)):
            working_copy(source, agents / f"agent-{n:03d}")
        out: dict[int, Path] = {}
        for count in COUNTS:
            folder = home / f"fleet-{count}"
            folder.mkdir()
            lines = [f"  - name: agent-{n:03d}\n    repo: {agents / f'agent-{n:03d}'}\n" for n in range(count)]
            (folder / "fleet.yaml").write_text("agents:\n" + "".join(lines), encoding="utf-8")
            run(folder, "status")               # warm: files in the page cache
            out[count] = folder
        yield out
    finally:
        shutil.rmtree(home, ignore_errors=True)


def run(folder: Path, *args: str) -> float:
    """Seconds one whole `gitmem fleet ...` process took."""
    started = time.perf_counter()
    done = subprocess.run([GITMEM, "fleet", *args], cwd=folder, capture_output=True, text=True, timeout=600)
    took = time.perf_counter() - started
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    return took


@pytest.mark.parametrize("count", COUNTS)
def test_fleet_status(benchmark, fleets: dict[int, Path], count: int) -> None:
    benchmark.pedantic(run, args=(fleets[count], "status"), rounds=3, iterations=1)
    benchmark.extra_info.update(agents=count)


@pytest.mark.parametrize("count", COUNTS)
def test_fleet_report(benchmark, fleets: dict[int, Path], count: int) -> None:
    benchmark.pedantic(run, args=(fleets[count], "report", "--out", "site/index.html"), rounds=1, iterations=1)
    assert len(list((fleets[count] / "site" / "agents").glob("*.html"))) == count


def test_fleet_scaling(fleets: dict[int, Path]) -> None:
    print()
    print(f"{'agents':>6} {'status s':>9} {'x one':>6} {'report s':>9} {'peak RSS MB':>12}")
    first = None
    for count, folder in fleets.items():
        status = min(run(folder, "status") for _ in range(3))
        first = first or status
        report = run(folder, "report", "--out", "site/index.html")
        peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
        print(f"{count:>6} {status:>9.2f} {status / first:>6.1f} {report:>9.2f} {peak:>12.0f}")
