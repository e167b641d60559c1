"""A cycle's cost with the trust-anchor look (gitmem.agents.ignored_tool_dirs) against without it, unsandboxed (the case
that walks the anchors; a confined cycle only lstats each one).

The runner's own time, start to commit, with a no-op agent command (`true`) and no sandbox, over a work tree
holding a venv-sized `.venv` (VENV_ENTRIES entries in nested folders: about what a venv with gitmem and
its test dependencies holds; one with only gitmem[agents] holds fewer). "Without" is the same runner with
the look after the agent replaced by one that finds nothing, which is what the runner did before.
Interleaved pairs, so drifting machine load hits both alike; the figure is the median of the ratios.

Run:  .venv/bin/pytest benchmarks/bench_ignored_tool_dirs.py --benchmark-only -s
"""
from __future__ import annotations

import statistics
import time
from pathlib import Path

import pytest

from benchmarks.conftest import runner_seconds
from gitmem.agents import ignored_tool_dirs
from tests.support.helpers import isolate_git_env, make_repo, with_command_backend

PAIRS = 9
VENV_ENTRIES = 18_000


def _repo(path: Path, entries: int) -> Path:
    repo = make_repo(path)
    repo.commit_files({"gitmem.yaml": with_command_backend(repo.read("gitmem.yaml"), "true", sandbox="none")},
                      "a no-op command agent, no sandbox")
    for package in range(40):           # site-packages/pkgN/subM/module_K.py, like an installed venv
        for sub in range(15):
            folder = path / ".venv" / "lib" / "site-packages" / f"pkg{package}" / f"sub{sub}"
            folder.mkdir(parents=True)
            for module in range(max(1, entries // 600 - 1)):
                (folder / f"module_{module}.py").write_text("x = 1\n")
    return path


def anchors_ratio(with_them: Path, without: Path, pairs: int, monkeypatch: pytest.MonkeyPatch) -> dict[str, float]:
    real = ignored_tool_dirs.changed
    ratios, firsts, seconds = [], [], []
    for _ in range(pairs + 1):                    # the first pair warms caches and is dropped
        first = runner_seconds(with_them)
        monkeypatch.setattr(ignored_tool_dirs, "changed", lambda root, before, walk: [])
        second = runner_seconds(without)
        monkeypatch.setattr(ignored_tool_dirs, "changed", real)
        firsts.append(first)
        seconds.append(second)
        ratios.append(first / second)
    began = time.perf_counter()
    real(with_them, ignored_tool_dirs.snapshot_tool_dirs(with_them, clock_dir=with_them / ".git"), walk=True)
    one = time.perf_counter() - began
    return {"ratio_median": statistics.median(ratios[1:]), "with_median_s": statistics.median(firsts[1:]),
            "without_median_s": statistics.median(seconds[1:]), "one_walk_s": one, "pairs": pairs}


@pytest.mark.benchmark(group="cycle: trust-anchor look on / off, no-op agent, venv in the tree")
def test_cycle_with_the_anchor_look_against_without(benchmark, tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """Reported, not asserted (timings depend on the machine): see `extra_info`."""
    isolate_git_env(monkeypatch)
    pairs, entries = (2, 1200) if benchmark.disabled else (PAIRS, VENV_ENTRIES)     # the smoke run: small
    with_them, without = _repo(tmp_path / "with", entries), _repo(tmp_path / "without", entries)
    result = benchmark.pedantic(anchors_ratio, args=(with_them, without, pairs, monkeypatch), rounds=1,
                                iterations=1)
    benchmark.extra_info.update(result)
    print(f"\nwith/without the anchor look, cycle median ratio over {result['pairs']} pairs: "
          f"{result['ratio_median']:.3f} ({result['with_median_s'] * 1000:.0f} ms / "
          f"{result['without_median_s'] * 1000:.0f} ms); one walk {result['one_walk_s'] * 1000:.0f} ms")
    assert result["ratio_median"] > 0
