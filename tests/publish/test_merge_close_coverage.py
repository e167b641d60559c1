"""A branch that holds a close, merged by memory rules over a base that gained cycles since they forked (`gitmem
merge`, the merge driver, pull-request mode's catch-up): every cycle is still in exactly one close report.

The base's new cycles land above the branch's close, which never read them: the close names them as arrived, so
the next close reports them. The branch's cycles that its close reported keep their times, so they stay in that
close's day instead of moving to the merge's day and being reported twice.
"""
from __future__ import annotations

import shutil
import subprocess
from datetime import UTC, datetime
from pathlib import Path

import pytest

from gitmem.errors import ExitCode
from gitmem.memory import log
from gitmem.memory_writer import MemoryWriter
from gitmem.publish.merge import merge_log
from gitmem.workspace import Workspace
from tests.support.gitcli import git, isolated_env
from tests.support.helpers import AGENT, GitRepo
from tests.support.hostile import GITMEM
from tests.support.world import Clock

FAKETIME = shutil.which("faketime")


def _at(when: datetime, cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    assert FAKETIME is not None
    env = isolated_env(who=AGENT) | {"TZ": "UTC"}
    env.pop("ANTHROPIC_API_KEY", None)
    return subprocess.run([FAKETIME, "-f", f"@{when:%Y-%m-%d %H:%M:%S}", str(GITMEM), *args], cwd=cwd, env=env,
                          capture_output=True, text=True, check=False)


def _cycle(repo: GitRepo, when: datetime, task: str) -> None:
    memory = MemoryWriter(Workspace.at(repo.path), clock=Clock(when), author_email=AGENT[1])
    memory.add_log_entry(task=task, outcome="built", result="done")
    memory.add_now_block(did=task, human="nothing", next="more")
    repo.stage("LOG.md", "NOW.md")
    repo.commit(f"gitmem: {task}", author=AGENT)


def _done(entry: log.LogEntry) -> str:
    return "\n".join([entry.get("Done") or "", *entry.body])


@pytest.mark.skipif(FAKETIME is None, reason="libfaketime's `faketime` is not installed")
def test_a_branch_with_a_close_merged_over_new_base_cycles_leaves_each_cycle_in_one_report(memrepo: GitRepo) -> None:
    day = datetime(2026, 11, 20, tzinfo=UTC)       # before the commits' real dates: nothing is ahead
    start = memrepo.head()
    git(memrepo.path, "switch", "-q", "-c", "memory")
    _cycle(memrepo, day.replace(hour=10), "the branch's cycle")
    closed = _at(day.replace(hour=23, minute=47), memrepo.path, "close", "--no-llm")
    assert closed.returncode == ExitCode.OK, closed.stdout + closed.stderr
    git(memrepo.path, "switch", "-q", "main")
    _cycle(memrepo, day.replace(hour=20), "the session")             # committed on main, after the fork
    merged = _at(day.replace(day=21, hour=10), memrepo.path, "merge", "memory")
    assert merged.returncode == ExitCode.OK, merged.stdout + merged.stderr
    _cycle(memrepo, day.replace(day=21, hour=12), "the next cycle")
    closed = _at(day.replace(day=21, hour=23, minute=47), memrepo.path, "close", "--no-llm")
    assert closed.returncode == ExitCode.OK, closed.stdout + closed.stderr

    entries = log.parse(memrepo.read("LOG.md")).entries
    first, second = [e for e in entries if e.cycle is None]
    assert "the branch's cycle" in _done(first) and "the session" not in _done(first)
    assert "the session" in _done(second) and "the next cycle" in _done(second)
    assert "the branch's cycle" not in _done(second)                  # reported once, by its own day's close
    assert first.get("Arrived") == "cycle 1"                           # the session, which it never read
    check = _at(day.replace(day=21, hour=23, minute=50), memrepo.path, "verify", "--range", f"{start}..HEAD")
    assert check.returncode == ExitCode.OK, check.stdout + check.stderr


def _entry(heading: str, *lines: str) -> str:
    return f"\n## {heading}\n" + "".join(f"- {line}\n" for line in lines)


def test_only_the_brought_in_entries_after_their_sides_last_close_are_dated_again_after_that_close() -> None:
    """Dated by the histories, not by a clock: the minute after the close above them, which reports its own
    minute, so the next close reports them."""
    base = "# LOG\n" + _entry("2026-12-29 09:00 UTC · cycle 1 · built", "Task: set up", "Result: ready")
    session = _entry("2026-12-30 20:00 UTC · cycle 2 · built", "Task: the session", "Result: done")
    branch = _entry("2026-12-30 10:00 UTC · cycle 2 · built", "Task: the branch's", "Result: done")
    close = _entry("2026-12-30 23:47 UTC · close", "Day: 2026-12-30", "Cycles: 1 cycle")
    late = _entry("2026-12-30 19:00 UTC · cycle 3 · built", "Task: after the close", "Result: done")
    merged = merge_log(base, base + session, base + branch + close + late, merging=True)
    assert merged is not None
    heads = [(e.cycle, str(e.when), e.get("Task"), e.get("Arrived")) for e in log.parse(merged).entries[1:]]
    assert heads == [(2, "2026-12-30 20:00 UTC", "the session", None),
                     (3, "2026-12-30 10:00 UTC", "the branch's", None),
                     (None, "2026-12-30 23:47 UTC", None, "cycle 2"),
                     (4, "2026-12-30 23:48 UTC", "after the close", None)]


def test_an_entry_brought_in_in_the_minute_of_the_close_above_it_is_dated_after_that_close() -> None:
    """A close reports every cycle dated in its own minute: a cycle merged in below it, dated that same minute,
    would count as reported by it and be in no report. It takes the minute after the close."""
    base = "# LOG\n" + _entry("2026-11-30 09:00 UTC · cycle 4 · built", "Task: t", "Result: r")
    close = _entry("2026-11-30 23:47 UTC · close", "Day: 2026-11-30", "Cycles: 1 cycle")
    same_minute = _entry("2026-11-30 23:47 UTC · cycle 5 · built", "Task: late", "Result: done")
    merged = merge_log(base, base + close, base + same_minute, merging=True)
    assert merged is not None
    last = log.parse(merged).entries[-1]
    assert (last.cycle, str(last.when)) == (5, "2026-11-30 23:48 UTC") and log.merged_from(last) is not None


def test_verify_refuses_a_merge_that_drops_a_close_entrys_arrived_cycles(memrepo: GitRepo) -> None:
    """The merge check accepts the `Arrived` line a merge adds to the other parent's close, not one it removes:
    the cycles it named would then be counted as reported by a report that does not hold them."""
    from gitmem.checks.check_and_verify import verify_range

    start = memrepo.head()
    git(memrepo.path, "switch", "-q", "-c", "side")
    closing = ("\n## 2026-11-20 23:47 UTC · close\n- Day: 2026-11-20\n- Cycles: 0 cycles\n- Problems: none\n"
               "- Arrived: cycle 7\n")
    memrepo.write("LOG.md", memrepo.read("LOG.md") + closing)
    memrepo.stage("LOG.md")
    memrepo.commit("gitmem: close 2026-11-20", author=AGENT)
    git(memrepo.path, "switch", "-q", "main")
    memrepo.write("notes.md", "a note\n")
    memrepo.stage("notes.md")
    memrepo.commit("notes")
    git(memrepo.path, "merge", "-q", "--no-ff", "--no-commit", "side")
    memrepo.write("LOG.md", memrepo.read("LOG.md").replace("- Arrived: cycle 7\n", ""))
    memrepo.stage("LOG.md")
    git(memrepo.path, "commit", "-q", "--no-verify", "-m", "merge side, dropping its Arrived line")
    found = [v for v in verify_range(Workspace.at(memrepo.path), start, "HEAD").violations if v.code == "GM301"]
    assert any("the merge drops the LOG entry `2026-11-20 23:47 UTC · close`" in v.message for v in found), found
