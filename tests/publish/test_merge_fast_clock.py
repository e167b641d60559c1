"""`gitmem merge` of a branch a laptop 3 h fast wrote, run on a right clock (another machine, or the Action
bringing main's new commits into its memory branch, which merges the same way): the laptop dated its entry and its
commit ahead alike, so the branch passes `verify` by its commits' dates, and the merge lands it. `verify` by its own
clock (the required check) still names the fast entry (GM309); the merge is not the place to refuse it, for no one
could then land the branch without a hand edit. Real git, a real bare origin, the real CLI under libfaketime."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from gitmem.cycle.runner import Settings, run_cycle
from gitmem.errors import ExitCode
from gitmem.memory import log
from tests.cycle.test_two_writers import session
from tests.support.cycle_support import WritingBackend, built, clone, origin_and_clone
from tests.support.gitcli import git, isolated_env
from tests.support.helpers import DANA, GitRepo


def _on_the_laptop(repo: GitRepo, *argv: str) -> None:
    """A command in the laptop's clone, its whole process 3 h fast (libfaketime): gitmem's times and git's."""
    env = isolated_env(who=DANA)
    env.pop("GITMEM_CYCLE", None)
    subprocess.run(["faketime", "-f", "+3h", *argv], cwd=repo.path, env=env, check=True, capture_output=True)


def test_a_branch_written_on_a_fast_clock_merges_on_a_right_one(tmp_path: Path, memrepo: GitRepo) -> None:
    origin = origin_and_clone(tmp_path, memrepo)
    laptop = clone(origin, tmp_path / "laptop", DANA)
    git(laptop.path, "switch", "-q", "-c", "laptop", who=DANA)
    gitmem = [sys.executable, "-m", "gitmem"]
    _on_the_laptop(laptop, *gitmem, "log", "add", "--task", "by hand", "--outcome", "built", "--result", "done")
    _on_the_laptop(laptop, *gitmem, "now", "add", "--did", "by hand", "--human", "nothing", "--next", "more")
    _on_the_laptop(laptop, "git", "commit", "-qam", "session on the laptop")
    git(laptop.path, "push", "-q", "origin", "laptop", who=DANA)
    report = run_cycle(memrepo.ws(), WritingBackend(built("the Action's")),
                       settings=Settings(push=True, sleep=lambda s: None))
    assert report.exit_code == ExitCode.OK
    git(memrepo.path, "fetch", "-q", "origin", who=DANA)
    before = memrepo.head()

    merged = session(memrepo, "merge", "origin/laptop", check=False)

    assert merged.returncode == 0, merged.stdout + merged.stderr
    landed = [(e.cycle, e.get("Task")) for e in log.parse(memrepo.read("LOG.md")).entries]
    assert landed == [(1, "the Action's"), (2, "by hand")]
    checked = session(memrepo, "verify", "--range", f"{before}..HEAD", check=False)
    assert [line.split(": ")[1].split()[0] for line in checked.stdout.splitlines()] == ["GM309", "GM309"]
    assert "the clock that wrote it and committed it ran fast" in checked.stdout


def test_a_merge_on_a_fast_clock_dates_what_it_brings_in_by_the_histories_not_by_itself(
        tmp_path: Path, memrepo: GitRepo) -> None:
    """The other way round: the laptop 3 h fast merges main, where the Action dated its cycle right. The Action's
    entry lands after the laptop's and is dated again to keep LOG in order; that date is the latest one the
    laptop's history holds, never the laptop's clock, so the merge adds no time of its own that a right clock
    (the required check) finds ahead. The laptop's own entry is the laptop's to answer for, in its own commit."""
    origin = origin_and_clone(tmp_path, memrepo)
    laptop = clone(origin, tmp_path / "laptop", DANA)
    report = run_cycle(memrepo.ws(), WritingBackend(built("the Action's")),
                       settings=Settings(push=True, sleep=lambda s: None))
    assert report.exit_code == ExitCode.OK
    gitmem = [sys.executable, "-m", "gitmem"]
    _on_the_laptop(laptop, *gitmem, "log", "add", "--task", "by hand", "--outcome", "built", "--result", "done")
    _on_the_laptop(laptop, *gitmem, "now", "add", "--did", "by hand", "--human", "nothing", "--next", "more")
    _on_the_laptop(laptop, "git", "commit", "-qam", "session on the laptop")
    git(laptop.path, "fetch", "-q", "origin", who=DANA)
    session_commit = laptop.head()

    merged = session(laptop, "merge", "origin/main", check=False, shift="+4h")     # an hour on, still 3 h fast

    assert merged.returncode == 0, merged.stdout + merged.stderr
    entries = log.parse(laptop.read("LOG.md")).entries
    assert [(e.cycle, e.get("Task")) for e in entries] == [(1, "by hand"), (2, "the Action's")]
    assert str(entries[1].when) == str(entries[0].when)          # the laptop's last time, which its parent holds
    assert entries[1].get("Merged") is not None                  # its own heading, kept
    checked = session(laptop, "verify", "--range", f"{session_commit}..HEAD", check=False)
    assert checked.returncode == 0, checked.stdout + checked.stderr
