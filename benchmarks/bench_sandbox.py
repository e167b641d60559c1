"""A cycle's cost with the bubblewrap sandbox against without it (issue 21's bar: at most 1.2x).

The runner's own time, start to commit, with a no-op agent command (`true`: the runner then writes the
no-build entry itself), through the real cycle runner and the `command` backend. One repository per side,
run as interleaved pairs so drifting machine load hits both alike; the figure is the median of the ratios.
"""
from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import time
from pathlib import Path

import pygit2
import pytest

from benchmarks.conftest import runner_seconds
from gitmem import gitio
from gitmem.agents.sandbox import choose
from gitmem.config import Config
from gitmem.cycle.gitstate import FileState
from gitmem.workspace import Workspace
from tests.support.helpers import isolate_git_env, make_repo, with_command_backend

PAIRS = 15


def _repo(path: Path, mode: str) -> Workspace:
    repo = make_repo(path)
    repo.commit_files({"gitmem.yaml": with_command_backend(repo.read("gitmem.yaml"), "true", sandbox=mode)},
                      f"a no-op command agent, sandbox {mode}")
    return Workspace.open(path)


def sandbox_ratio(boxed: Path, plain: Path, pairs: int) -> dict[str, float]:
    ratios, firsts, seconds = [], [], []
    for _ in range(pairs + 1):                    # the first pair warms caches and is dropped
        first, second = runner_seconds(boxed), runner_seconds(plain)
        firsts.append(first)
        seconds.append(second)
        ratios.append(first / second)
    return {"ratio_median": statistics.median(ratios[1:]), "sandboxed_median_s": statistics.median(firsts[1:]),
            "plain_median_s": statistics.median(seconds[1:]), "pairs": pairs}


@pytest.mark.benchmark(group="cycle: sandbox bubblewrap / none, no-op agent, interleaved pairs")
def test_cycle_with_the_sandbox_against_without(benchmark, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Reported, not asserted (timings depend on the machine): see `extra_info`."""
    isolate_git_env(monkeypatch)
    bwrap = shutil.which("bwrap")
    if bwrap is None or subprocess.run([bwrap, "--ro-bind", "/", "/", "true"], capture_output=True).returncode:
        pytest.skip("bwrap is not installed or cannot create namespaces here")
    boxed, plain = _repo(tmp_path / "boxed", "bubblewrap"), _repo(tmp_path / "plain", "none")
    assert choose(boxed.config).mode == "bubblewrap" and choose(plain.config).mode == "none"
    auto = choose(Config()).mode            # what `auto`, the default, picks on this machine
    pairs = 2 if benchmark.disabled else PAIRS
    result = benchmark.pedantic(sandbox_ratio, args=(boxed.root, plain.root, pairs), rounds=1, iterations=1)
    benchmark.extra_info.update({**result, "auto_chose": auto})
    print(f"\nsandboxed/plain cycle median ratio over {result['pairs']} pairs: {result['ratio_median']:.3f} "
          f"({result['sandboxed_median_s'] * 1000:.0f} ms / {result['plain_median_s'] * 1000:.0f} ms); "
          f"auto chose {auto}")
    assert result["ratio_median"] > 0


TREE_FOLDERS = 1_000            # node_modules/pkgN/lib/sub, each with FILES_EACH files: ~50,000 entries in all
FILES_EACH = 45


def _wide_tree(path: Path) -> Workspace:
    """A repository whose work tree holds a `node_modules` of ~50,000 entries and one clone in `vendor/lib`."""
    repo = make_repo(path)
    for number in range(TREE_FOLDERS):
        folder = path / "node_modules" / f"pkg{number}" / "lib" / "sub"
        folder.mkdir(parents=True)
        for item in range(FILES_EACH):
            (folder / f"f{item}.js").write_bytes(b"")
    pygit2.init_repository(str(path / "vendor" / "lib"))
    return Workspace.open(repo.path)


@pytest.mark.benchmark(group="sandbox: git directories found in a 50,000-entry work tree")
def test_the_walk_for_git_directories_in_a_wide_tree(benchmark, tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """What each box pays to find the git directories in the work tree (gitmem.gitio.nested), with their config
    files and includes (`config_files_in_tree`): reported, not asserted."""
    isolate_git_env(monkeypatch)
    ws = _wide_tree(tmp_path / "wide")
    found = benchmark(gitio.config_files_in_tree, ws.repo)
    assert ws.root.resolve() / "vendor" / "lib" / ".git" / "config" in found
    entries = sum(len(dirs) + len(names) for _folder, dirs, names in os.walk(ws.root))
    benchmark.extra_info.update({"entries": entries})
    print(f"\n{entries} entries walked for {len(found)} config files")


@pytest.mark.benchmark(group="sandbox: git directories found in a 50,000-entry work tree")
def test_the_guard_of_nested_git_directories_in_a_wide_tree(benchmark, tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """What the cycle's guard pays at its start for the repositories nested in the tree (gitmem.gitio.nested_state):
    the one walk, their state places and their capture (gitmem.cycle.gitstate). The box then finds the same walk
    pinned and walks nothing (timed beside it, `box_ms`): reported, not asserted."""
    isolate_git_env(monkeypatch)
    ws = _wide_tree(tmp_path / "wide")

    def guard_start() -> tuple[gitio.NestedWalk, FileState]:
        walk = gitio.nested_walk(ws.root)
        return walk, FileState.capture(gitio.nested_state_paths(ws.repo, walk))

    walk, state = benchmark(guard_start)
    assert any(place.label == "vendor/lib/.git/hooks" for place in state.places)
    with gitio.pinned_walk(ws.root, walk):
        began = time.perf_counter()
        gitio.config_files_in_tree(ws.repo)
        box_ms = (time.perf_counter() - began) * 1000
    entries = sum(len(dirs) + len(names) for _folder, dirs, names in os.walk(ws.root))
    benchmark.extra_info.update({"entries": entries, "box_ms": round(box_ms, 2)})
    print(f"\n{entries} entries: the guard's walk and capture of {len(state.places)} places; the box's look after it "
          f"{box_ms:.1f} ms")
