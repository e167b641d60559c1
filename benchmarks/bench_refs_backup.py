"""The cycle's backup of the human's unpushed refs (gitmem.cycle.refs_backup), on the synthetic histories.

What a cycle pays before its agent runs: deciding what the remote lacks, and bundling it. Three cases: every
branch pushed (the common case: a revision walk in process, no bundle, should cost nearly nothing), one
unpushed commit on top of the remote (a small bundle), and no remote at all (the whole history bundled: the
worst case).

Run:  .venv/bin/pytest benchmarks/bench_refs_backup.py --benchmark-only -s    (GITMEM_BENCH_SCALES=1)
"""
from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pygit2
import pytest

from benchmarks.conftest import scale_id
from gitmem import gitio
from gitmem.cycle.refs_backup import BUNDLE, RefsBackup
from tests.support.synth import SynthInfo, default_cache_dir
from tests.support.synth_copy import working_copy

CASES = ("everything-pushed", "one-unpushed-commit", "no-remote")


@pytest.fixture(scope="module")
def copies(synth: SynthInfo) -> Iterator[dict[str, gitio.Repo]]:
    home = Path(tempfile.mkdtemp(prefix=f"refs-{scale_id(synth.scale)}-", dir=default_cache_dir()))
    saved = os.environ.get("XDG_STATE_HOME")
    os.environ["XDG_STATE_HOME"] = str(home / "state")
    try:
        found: dict[str, gitio.Repo] = {}
        for case in CASES:
            root = working_copy(synth, home / case)
            raw = pygit2.Repository(str(root))
            head = raw.head.peel(pygit2.Commit)
            if case == "everything-pushed":
                raw.references.create("refs/remotes/origin/main", head.id)
            elif case == "one-unpushed-commit":
                raw.references.create("refs/remotes/origin/main", head.parent_ids[0])
            found[case] = gitio.open_repo(root)
        yield found
    finally:
        if saved is None:
            os.environ.pop("XDG_STATE_HOME", None)
        else:
            os.environ["XDG_STATE_HOME"] = saved
        import shutil

        shutil.rmtree(home, ignore_errors=True)


@pytest.mark.parametrize("case", CASES)
@pytest.mark.benchmark(group="cycle: back up the human's unpushed refs before the agent runs")
def test_refs_backup(benchmark, copies: dict[str, gitio.Repo], case: str) -> None:
    repo = copies[case]
    refs = gitio.references_all(repo)

    def take() -> bool:
        backup = RefsBackup.take(repo, refs, cycle=1)
        wrote = backup.path is not None
        if backup.path is not None:
            # a kept bundle is reused by the next cycle with the same refs: remove it, so each round pays for
            # the first cycle's write (the reuse costs one stat)
            for kept in backup.path.parent.glob(backup.path.name.removesuffix(BUNDLE) + "*"):
                kept.unlink()
        return wrote

    wrote = benchmark.pedantic(take, rounds=5 if case != "no-remote" else 3, iterations=1)
    assert wrote == (case != "everything-pushed")
