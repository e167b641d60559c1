"""The cycle's backup of the human's unpushed refs (gitmem.cycle.refs_backup), on the synthetic histories.

What a cycle pays before its agent runs: deciding what the remote lacks, and bundling it. Every branch pushed
(the common case: a revision walk in process, no bundle, should cost nearly nothing); one unpushed commit on top
of the remote (a small bundle); no remote at all, first cycle (the whole history bundled: the worst case, once
per chain); no remote, a next cycle with one new commit (a bundle of that commit on top of the kept chain); no
remote, refs unchanged since the last cycle (the kept chain reused: nothing written). Each prints the bytes it
wrote.

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
from gitmem.cycle.refs_backup import BUNDLE, CHAIN, RefsBackup
from tests.support.synth import SynthInfo, default_cache_dir
from tests.support.synth_copy import working_copy

CASES = ("everything-pushed", "one-unpushed-commit", "no-remote", "no-remote-next-cycle", "no-remote-unchanged")


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
            if case.startswith("no-remote-"):       # the chain a first cycle left, in this copy's own folder
                os.environ["XDG_STATE_HOME"] = str(home / "state" / case)
                RefsBackup.take(found[case], gitio.references_all(found[case]), cycle=1)
                os.environ["XDG_STATE_HOME"] = str(home / "state")
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
def test_refs_backup(benchmark, copies: dict[str, gitio.Repo], case: str, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = copies[case]
    if case.startswith("no-remote-"):
        monkeypatch.setenv("XDG_STATE_HOME", str(Path(os.environ["XDG_STATE_HOME"]) / case))
    refs = gitio.references_all(repo)
    if case == "no-remote-next-cycle":         # the cycle's one new commit, which no bundle holds yet
        raw = pygit2.Repository(str(gitio.root(repo)))
        head = raw.head.peel(pygit2.Commit)
        made = raw.create_commit(None, head.author, head.committer, "one more", head.tree_id, [head.id])
        raw.references.create("refs/heads/next-cycle", made, force=True)
        refs = gitio.references_all(repo)
    folder = Path(os.environ["XDG_STATE_HOME"])
    kept = {path: path.read_bytes() for path in folder.rglob(CHAIN)}     # the first cycle's chain, if any
    written: list[int] = []

    def take() -> None:
        backup = RefsBackup.take(repo, refs, cycle=2)
        chain = backup.path.parent.glob(f"*{BUNDLE}") if backup.path is not None else []
        written.append(sum(path.stat().st_size for path in chain if path.stat().st_mtime_ns >= began))
        if backup.path is not None and case != "no-remote-unchanged":
            # the bundle this cycle wrote is reused by the next one with the same refs: remove it and put the
            # chain back as it was, so each round pays for the write (the unchanged case measures the reuse)
            for path in backup.path.parent.glob(backup.path.name.removesuffix(BUNDLE) + "*"):
                path.unlink()
            (backup.path.parent / CHAIN).unlink()
            for path, text in kept.items():
                path.write_bytes(text)

    import time

    began = time.time_ns()
    benchmark.pedantic(take, rounds=5 if case != "no-remote" else 3, iterations=1)
    print(f"\n{case}: {max(written):,} bytes written")
    assert (max(written) > 0) == (case not in ("everything-pushed", "no-remote-unchanged"))
