"""A push that races the first seal of an old LOG (rules 6), on the synthetic histories.

The first cycle under rules 6 seals an old LOG into many volumes at once (269 at 100x). When a human's session
reached the remote meanwhile, the runner's push rebases that seal onto it: each tree of the rebase has its
volumes unsealed back into LOG.md, merged, and sealed again (gitmem.publish.sealed). It happens once per
repository, and only in that race; measured here with the push itself: the fetch, the rebase, the check of the
replayed commit (the seal: every volume read for secrets), and the push to a local bare origin.

Measured (CPU of the process, one run each, a loaded 2-core machine): 10x 2.17 s before each tree was joined once,
1.41 s after; 100x 22.6 s and 734 MiB before, 13.9 s and 658 MiB after.

Run:  .venv/bin/pytest benchmarks/bench_seal_race.py --benchmark-only -s    (GITMEM_BENCH_SCALES=10)
"""
from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from datetime import UTC, datetime
from pathlib import Path

from pytest_benchmark.fixture import BenchmarkFixture

from gitmem import gitio
from gitmem.memory import log, positions
from gitmem.memory.timestamps import Timestamp
from gitmem.publish.push import PushStatus, publish
from tests.support.sealing import seal_committed
from tests.support.synth import SynthInfo, default_cache_dir
from tests.support.synth_copy import working_copy

WHO = {"GIT_AUTHOR_NAME": "Dana", "GIT_AUTHOR_EMAIL": "dana@example.com", "GIT_COMMITTER_NAME": "Dana",
       "GIT_COMMITTER_EMAIL": "dana@example.com"}


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, env={**os.environ, **WHO}, check=True, capture_output=True)


def _raced(synth: SynthInfo, home: Path) -> gitio.Repo:
    """A copy whose remote got a human's entry, and which then sealed its old LOG (the first cycle's seal)."""
    root = working_copy(synth, home / "runner")
    _git(home, "clone", "-q", "--bare", str(root), "origin.git")
    _git(root, "remote", "add", "origin", str(home / "origin.git"))
    _git(root, "fetch", "-q", "origin")
    _git(root, "branch", "-q", "-u", "origin/main", "main")
    _git(home, "clone", "-q", "origin.git", "human")
    human = home / "human" / "LOG.md"
    entry = log.make_entry(Timestamp.from_datetime(datetime(2027, 1, 1, 9, tzinfo=UTC)),
                           cycle=positions.last_cycle(human.read_bytes()) + 1, outcome="built",
                           fields={"Task": "a human's session", "Result": "done"})
    human.write_text(human.read_text(encoding="utf-8") + f"\n{entry.render()}\n", encoding="utf-8")
    _git(home / "human", "commit", "-qam", "session", "--no-verify")
    _git(home / "human", "push", "-q", "origin", "main")
    seal_committed(root)
    return gitio.open_repo(root)


def test_push_racing_the_first_seal(benchmark: BenchmarkFixture, synth: SynthInfo) -> None:
    home = Path(tempfile.mkdtemp(prefix="seal-race-", dir=default_cache_dir()))
    try:
        rounds = iter(range(1000))

        def setup() -> tuple[tuple[gitio.Repo], dict[str, object]]:
            place = home / str(next(rounds))
            place.mkdir()
            return (_raced(synth, place),), {}

        result = benchmark.pedantic(lambda repo: publish(repo, conflict_branch="gitmem/race", tries=1),
                                    setup=setup, rounds=1)
        assert result.status == PushStatus.PUSHED, result.messages
    finally:
        shutil.rmtree(home, ignore_errors=True)
