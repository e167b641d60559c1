"""`git pull --rebase` of a laptop that ran several cycles offline, one of which sealed LOG (rules 6), over the
Action's cycles: git replays the laptop's commits one by one, so the merge driver sees the sealing commit after the
ones before it were renumbered onto origin. Real runner cycles on both clones, a real bare origin, the driver that
`gitmem init` registers, and `verify` of everything pushed.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from gitmem.cycle.runner import Settings, run_cycle
from gitmem.errors import ExitCode
from gitmem.memory import log, volumes
from tests.cycle.test_two_writers import session
from tests.support.cycle_support import WritingBackend, built, clone, origin_and_clone
from tests.support.gitcli import git, isolated_env, run_git
from tests.support.helpers import DANA, GitRepo
from tests.support.long_log import with_history

VOLUME_1 = volumes.volume_path("LOG.md", 1)


def _cycle(repo: GitRepo, task: str, *, push: bool) -> None:
    """One runner cycle whose agent writes a file of its own (so only memory files meet in the rebase)."""
    report = run_cycle(repo.ws(), WritingBackend(built(task, {f"{task}.txt": f"{task}\n"})),
                       settings=Settings(push=push, sleep=lambda s: None))
    assert report.exit_code == ExitCode.OK, report.messages


@pytest.mark.parametrize(("entries", "origin_sealed"), [(397, False), (398, True)])
def test_a_pull_rebase_replaying_a_seal_after_commits_it_renumbered_lands_every_cycle_in_order(
        tmp_path: Path, memrepo: GitRepo, entries: int, origin_sealed: bool) -> None:
    """The laptop's third cycle seals at its 400th entry; the Action ran two cycles meanwhile, which sealed the
    same entries (398) or not yet (397). The rebase replays the laptop's cycles renumbered after the Action's, the
    seal among them, where the driver refused the seal's commit (GM319, then a rebase to abort and a `gitmem merge`
    by hand): its parent, the laptop's cycle before, no longer matched what the driver builds on."""
    session(memrepo, "init")
    run_git(memrepo.path, "add", "-A")
    run_git(memrepo.path, "commit", "-q", "--no-verify", "-m", "gitmem init")
    with_history(memrepo, entries=entries, blocks=100)
    origin = origin_and_clone(tmp_path, memrepo)
    start = memrepo.head()
    laptop = clone(origin, tmp_path / "laptop", DANA)
    session(laptop, "init")                                   # registers the merge driver in the clone
    laptop_tasks = ["laptop 1", "laptop 2", "laptop 3"]
    for task in laptop_tasks:
        _cycle(laptop, task, push=False)
    assert (laptop.path / VOLUME_1).is_file()                 # the laptop's last cycle sealed
    for task in ("action 1", "action 2"):
        _cycle(memrepo, task, push=True)
    assert (memrepo.path / VOLUME_1).is_file() is origin_sealed

    pulled = run_git(laptop.path, "pull", "--rebase", env=isolated_env(who=DANA), check=False)
    assert pulled.returncode == 0, pulled.stdout + pulled.stderr
    git(laptop.path, "push", "--quiet", "origin", "main", who=DANA)

    done = session(laptop, "verify", "--range", f"{start}..origin/main", check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    assert session(laptop, "check", check=False).returncode == 0
    landed = [(e.cycle, e.get("Task")) for e in log.parse(laptop.read("LOG.md")).entries if e.cycle]
    assert landed[-5:] == list(zip(range(entries + 1, entries + 6), ["action 1", "action 2", *laptop_tasks],
                                   strict=True))
    whole = volumes.unseal(laptop.read("LOG.md").encode(), "LOG.md", [(1, (laptop.path / VOLUME_1).read_bytes())])
    assert whole is not None
    cycles = [e.cycle for e in log.parse(whole.decode()).entries if e.cycle]
    assert cycles == list(range(1, entries + 6))              # every cycle once, none lost, none twice
