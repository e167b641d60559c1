"""What a scheduled run of the GitHub Action costs outside the agent (issue 23: at most 15 s cold, 5 s warm).

The composite action's steps are replayed locally (tests/support/action_support.py) for `command: cycle` with
a no-op agent (`command: 'true'`, agent.sandbox auto), each run on a fresh "runner": a new clone of a bare
origin (actions/checkout), a new RUNNER_TEMP, and the cycle pushed back to the origin.

- **cold**: nothing cached. pip's download cache is empty, so the install step fetches every wheel from the
  configured index (a local mirror here: on GitHub the download is added), builds gitmem and fills the venv;
  the dependency cache is then saved.
- **warm**: the dependency cache hits its full key (the dependencies and a digest of gitmem's own source):
  the venv saved by the cold run is restored into the new RUNNER_TEMP and already holds this gitmem, so the
  install step installs nothing; the recall index (`.git/gitmem`) the previous run left is restored too.

actions/cache's save and restore are stood in for by `tar --zstd` of the same paths (it uses tar with zstd),
without the upload and download. setup-python is not timed (the runner image has the interpreter cached).
"Install the agent sandbox" is not run: it calls sudo apt-get and sysctl on the machine; the bench reports
bubblewrap's package apart (the .deb's size and unpack time when apt has it cached).
Reported, not asserted: see `extra_info` and the printed table.
"""
from __future__ import annotations

import glob
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from tests.support.action_support import agent_repo, run_action
from tests.support.gitcli import git

WARM_RUNS = 5
SANDBOX_STEP = "Install the agent sandbox"
NO_OP_AGENT = "  backend: command\n  command: 'true'"


def _timed(argv: list[str], cwd: Path | None = None) -> float:
    began = time.perf_counter()
    subprocess.run(argv, cwd=cwd, check=True, capture_output=True)
    return time.perf_counter() - began


def _save(source: Path, archive: Path, *, exclude: tuple[str, ...] = ()) -> float:
    """actions/cache/save, without the upload: the folder into a zstd tarball."""
    return _timed(["tar", "--zstd", "-cf", str(archive), *(f"--exclude={e}" for e in exclude),
                   "-C", str(source.parent), source.name])


def _restore(archive: Path, into: Path) -> float:
    """actions/cache/restore, without the download."""
    into.mkdir(parents=True, exist_ok=True)
    return _timed(["tar", "--zstd", "-xf", str(archive), "-C", str(into)])


def scheduled_run(origin: Path, base: Path, python_bin: Path, caches: Path, *, warm: bool) -> dict[str, float]:
    """One scheduled cycle on a fresh runner; seconds per step, by the step's name in action.yml."""
    # A runner's paths are the same on every run (the restored venv's scripts name its interpreter by path).
    runner = base / "runner"
    shutil.rmtree(runner, ignore_errors=True)
    runner.mkdir()
    temp, checkout = runner / "runner-temp", runner / "agent"
    steps = {"checkout (git clone)": _timed(["git", "clone", "-q", str(origin), str(checkout)])}
    deps, state = caches / "deps.tar.zst", caches / "state.tar.zst"
    if warm:
        steps["Restore the cached dependencies"] = _restore(deps, temp)
        steps["Restore the recall index"] = _restore(state, checkout / ".git")
    pip_cache = runner / "pip-cache"           # empty on every runner: the venv cache is what carries over
    run = run_action(checkout, {"command": "cycle"}, bin_dir=python_bin, scratch=runner / "scratch",
                     runner_temp=temp, skip=(SANDBOX_STEP,), env={"PIP_CACHE_DIR": str(pip_cache)},
                     uses_outputs={"deps-cache": {"cache-hit": "true" if warm else "false"}}, timeout=900)
    assert run.ok, run.describe()
    assert run.outputs["outcome"] == "no-build", run.outputs
    steps.update({step.name: step.seconds for step in run.steps})
    if not warm:
        steps["Save the dependencies for the next run"] = _save(temp / "gitmem-venv", deps)
    steps["Save the recall index"] = _save(checkout / ".git" / "gitmem", state, exclude=("gitmem/cycle.lock",))
    shutil.rmtree(runner, ignore_errors=True)
    return steps


def bubblewrap_package() -> dict[str, float | str]:
    """bubblewrap's .deb as apt has it cached, and the time to unpack it; why not, when it is not there."""
    debs = sorted(glob.glob("/var/cache/apt/archives/bubblewrap_*.deb"))
    if not debs or not shutil.which("dpkg-deb"):
        return {"note": "no bubblewrap .deb in apt's cache here: its install on a runner is measured in the "
                        "Action's own log (the sandbox step), not here"}
    with tempfile.TemporaryDirectory() as into:
        seconds = _timed(["dpkg-deb", "-x", debs[-1], into])
    return {"deb": Path(debs[-1]).name, "deb_kb": round(Path(debs[-1]).stat().st_size / 1024),
            "unpack_s": round(seconds, 3)}


def action_overhead(base: Path, warm_runs: int) -> dict[str, object]:
    origin = base / "origin.git"
    agent_repo(base / "seed", origin, backend=NO_OP_AGENT, sandbox="auto")
    venv = base / "setup-python"               # what setup-python leaves: an interpreter with nothing installed
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, capture_output=True)
    caches = base / "caches"
    caches.mkdir()
    cold = scheduled_run(origin, base, venv / "bin", caches, warm=False)
    warms = [scheduled_run(origin, base, venv / "bin", caches, warm=True) for _ in range(warm_runs)]
    warm = {name: statistics.median(run[name] for run in warms) for name in warms[0]}
    cycles = git(origin, "rev-list", "--count", "main").strip()
    return {"cold_s": round(sum(cold.values()), 2), "warm_median_s": round(sum(warm.values()), 2),
            "cold_steps": {k: round(v, 2) for k, v in cold.items()},
            "warm_steps": {k: round(v, 2) for k, v in warm.items()},
            "cold_largest": max(cold, key=lambda k: cold[k]), "warm_largest": max(warm, key=lambda k: warm[k]),
            "warm_runs": warm_runs, "commits_on_origin": int(cycles), "bubblewrap": bubblewrap_package()}


@pytest.mark.benchmark(group="action: a scheduled cycle outside the agent, cold and warm")
def test_a_scheduled_cycle_through_the_action(benchmark, tmp_path: Path) -> None:
    """Reported, not asserted (timings depend on the machine and the index): see `extra_info`."""
    runs = 1 if benchmark.disabled else WARM_RUNS
    result = benchmark.pedantic(action_overhead, args=(tmp_path, runs), rounds=1, iterations=1)
    benchmark.extra_info.update(result)
    print(f"\nscheduled cycle outside the agent: cold {result['cold_s']:.1f} s "
          f"(largest: {result['cold_largest']}), warm {result['warm_median_s']:.1f} s median of {runs} "
          f"(largest: {result['warm_largest']})")
    for phase in ("cold_steps", "warm_steps"):
        steps = result[phase]
        assert isinstance(steps, dict)
        print(f"  {phase}: " + "; ".join(f"{name} {seconds:.2f}" for name, seconds in steps.items()))
    print(f"  bubblewrap: {result['bubblewrap']}")
    assert result["commits_on_origin"] == 2 + runs       # the seed, the cold run's cycle, each warm run's
