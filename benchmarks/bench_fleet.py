"""`gitmem fleet` over 1, 10 and 100 local agent repositories, each at 1x history (480 cycles), timed as whole
processes, as a human or a workflow runs it; and the catch-up loop (`gitmem fleet dispatch`) at 100 agents
against the loopback fake of GitHub's Actions API (tests/support/fake_actions.py), counting its calls.

One synthetic repository is built (and cached); the others are clones of it that borrow its objects (git
alternates), so 100 agents cost seconds to set up. Each is read once before timing, so the page cache is warm.

Goals (issues 25 and 33): `fleet status`, `fleet pending` and `fleet report` at 100 agents within 15x one agent;
`fleet report` (the page and every agent's own report) at 100 agents within 30 s. Time is measured both as
wall time and as CPU time (user + system of the command and all its workers): on a shared machine the wall time
moves with the load, the CPU time much less. Peak memory is the largest resident set of any one process.

The catch-up: the synthetic agents' last cycles are days old, so with `stall_after` set every agent is overdue,
the worst case: each costs four calls (the workflow's state, its unfinished runs, the repository's default
branch, the dispatch). A second pass, with the dispatched runs still queued, costs three per agent (the state,
the runs, the queued run's jobs: a cycle, not a close) and starts nothing. Agents on schedule
cost no call (tests/fleet/test_fleet_dispatch.py).

Run:  .venv/bin/pytest benchmarks/bench_fleet.py --benchmark-only -s
Counts: GITMEM_BENCH_SCALES (default "1,10,100") is read as numbers of agents here.
"""
from __future__ import annotations

import json
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

from tests.support.fake_actions import FakeActions
from tests.support.synth import cached_repo, default_cache_dir
from tests.support.synth_copy import working_copy

COUNTS = tuple(int(float(s)) for s in os.environ.get("GITMEM_BENCH_SCALES", "1,10,100").split(",") if s.strip())
GITMEM = str(Path(sys.executable).parent / "gitmem")
COMMANDS = {"status": ("status",), "pending": ("pending",), "report": ("report", "--out", "site/index.html")}


@pytest.fixture(scope="module")
def fleets() -> Iterator[dict[int, Path]]:
    """A directory per count with its fleet.yaml, over one shared set of agent clones; each agent is on GitHub
    (for the catch-up) and stalls after 8 hours."""
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
            lines = [f"  - name: agent-{n:03d}\n    repo: {agents / f'agent-{n:03d}'}\n"
                     f"    github: owner/agent-{n:03d}\n    stall_after: 8h\n" for n in range(count)]
            (folder / "fleet.yaml").write_text("agents:\n" + "".join(lines), encoding="utf-8")
            run(folder, "status")               # warm: files in the page cache
            out[count] = folder
        yield out
    finally:
        shutil.rmtree(home, ignore_errors=True)


def measured(folder: Path, *args: str, env: dict[str, str] | None = None) -> tuple[float, float, str]:
    """(wall seconds, CPU seconds of the process and its workers, stdout) of one whole `gitmem fleet ...`."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run([GITMEM, "fleet", *args], cwd=folder, capture_output=True, text=True, timeout=600,
                          env={**os.environ, **(env or {})})
    took = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return took, cpu, done.stdout


def run(folder: Path, *args: str) -> float:
    """Seconds one whole `gitmem fleet ...` process took."""
    return measured(folder, *args)[0]


@pytest.mark.parametrize("count", COUNTS)
def test_fleet_status(benchmark, fleets: dict[int, Path], count: int) -> None:
    benchmark.pedantic(run, args=(fleets[count], "status"), rounds=3, iterations=1)
    benchmark.extra_info.update(agents=count)


@pytest.mark.parametrize("count", COUNTS)
def test_fleet_pending(benchmark, fleets: dict[int, Path], count: int) -> None:
    benchmark.pedantic(run, args=(fleets[count], "pending"), rounds=3, iterations=1)
    benchmark.extra_info.update(agents=count)


@pytest.mark.parametrize("count", COUNTS)
def test_fleet_report(benchmark, fleets: dict[int, Path], count: int) -> None:
    benchmark.pedantic(run, args=(fleets[count], "report", "--out", "site/index.html"), rounds=1, iterations=1)
    assert len(list((fleets[count] / "site" / "agents").glob("*.html"))) == count


def test_fleet_scaling(fleets: dict[int, Path]) -> None:
    """Each command's best of three, wall and CPU, and its ratio to one agent."""
    print()
    print(f"{'agents':>6} {'command':>8} {'wall s':>8} {'x one':>6} {'CPU s':>8} {'x one':>6} {'peak RSS MB':>12}")
    first: dict[str, tuple[float, float]] = {}
    for count, folder in fleets.items():
        for name, args in COMMANDS.items():
            wall, cpu = (min(values) for values in zip(*(measured(folder, *args)[:2] for _ in range(3)),
                                                       strict=True))
            one = first.setdefault(name, (wall, cpu))
            peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
            print(f"{count:>6} {name:>8} {wall:>8.2f} {wall / one[0]:>6.1f} {cpu:>8.2f} {cpu / one[1]:>6.1f} "
                  f"{peak:>12.0f}")


def test_fleet_catch_up(fleets: dict[int, Path]) -> None:
    """`gitmem fleet dispatch` at the largest count, every agent overdue: API calls and time of a run that
    dispatches every agent, then of the next run, which finds every run still queued."""
    count = max(COUNTS)
    folder = fleets[count]
    print()
    with FakeActions() as fake:
        for n in range(count):
            fake.add(f"owner/agent-{n:03d}")
        env = {"GITHUB_API_URL": fake.url, "GITMEM_FLEET_DISPATCH_TOKEN": fake.token}
        for label in ("first run", "next run"):
            before = len(fake.requests)
            wall, cpu, out = measured(folder, "dispatch", "--json", env=env)
            said = json.loads(out)
            calls = len(fake.requests) - before
            assert calls == said["calls"]
            started = sum(any(done.startswith("dispatched") for done in agent["done"]) for agent in said["agents"])
            print(f"catch-up, {count} agents, {label}: {calls} API calls ({calls / count:.1f} per agent), "
                  f"{started} dispatched, {wall:.2f} s wall, {cpu:.2f} s CPU")
        assert all(len(flow.dispatched) == 1 for flow in fake.workflows.values())
