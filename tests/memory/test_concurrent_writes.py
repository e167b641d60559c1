"""Concurrent memory writers: every write holds the repository's write lock (gitmem.workspace.writelock).

N real `gitmem` processes started at once either all land, with distinct ids, or the ones that could not get
the lock in time exit non-zero saying memory is busy: an exit 0 always means the entry is in the file. The
lock is not the cycle lock: an agent writing memory while the runner holds the cycle lock is never stuck.
"""
from __future__ import annotations

import fcntl
import json
import os
import subprocess
import threading
import time
from pathlib import Path

import pytest

from gitmem.errors import ExitCode
from gitmem.memory import decisions, lessons, log, now
from gitmem.workspace import writelock
from gitmem.workspace.writelock import WritesBusy
from tests.support.helpers import GitRepo
from tests.support.hostile import GITMEM, command_agent, no_traceback

COMMANDS = {
    "lesson": lambda n: ["lesson", "add", "--title", f"lesson {n}", "--happened", "h", "--why", "w", "--change", "c"],
    "decision": lambda n: ["decision", "ask", "--title", f"question {n}?", "--recommendation", "yes"],
    "log": lambda n: ["log", "add", "--task", f"task {n}", "--outcome", "built", "--result", "r"],
    "now": lambda n: ["now", "add", "--did", f"did {n}", "--human", "nothing", "--next", "n"],
}


def _env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k != "GITMEM_CYCLE"}


def _at_once(repo: GitRepo, argvs: list[list[str]]) -> list[subprocess.CompletedProcess[str]]:
    """Start every command before any is waited for."""
    started = [subprocess.Popen([str(GITMEM), *argv], cwd=repo.path, env=_env(), stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True) for argv in argvs]
    done = []
    for argv, process in zip(argvs, started, strict=True):
        out, err = process.communicate(timeout=120)
        done.append(subprocess.CompletedProcess(argv, process.returncode, out, err))
    return done


def _landed(repo: GitRepo, kind: str) -> list[str]:
    """The titles (or tasks, or Did lines) of the entries in the file, in file order."""
    if kind == "lesson":
        return [item.title for item in lessons.parse(repo.read("LESSONS.md")).lessons]
    if kind == "decision":
        return [item.title for item in decisions.parse(repo.read("DECISIONS.md")).all]
    if kind == "log":
        return [entry.get("Task") or "" for entry in log.parse(repo.read("LOG.md")).entries]
    blocks = now.parse(repo.read("NOW.md")).blocks
    return [next((f.value for f in block.fields if f.key == "Did"), "") for block in blocks]


def _ids(repo: GitRepo, kind: str) -> list[str]:
    if kind == "lesson":
        return [item.id for item in lessons.parse(repo.read("LESSONS.md")).lessons]
    if kind == "decision":
        return [item.id for item in decisions.parse(repo.read("DECISIONS.md")).all]
    if kind == "log":
        return [str(entry.cycle) for entry in log.parse(repo.read("LOG.md")).entries if entry.cycle is not None]
    return [str(block.cycle) for block in now.parse(repo.read("NOW.md")).blocks if block.cycle is not None]


@pytest.mark.parametrize(("kind", "count"), [("lesson", 8), ("lesson", 16), ("decision", 8), ("log", 8),
                                             ("now", 8)])
def test_parallel_writers_all_land_with_distinct_ids_or_say_busy(memrepo: GitRepo, kind: str, count: int) -> None:
    before_ids = _ids(memrepo, kind)
    results = _at_once(memrepo, [COMMANDS[kind](n) for n in range(count)])

    landed = _landed(memrepo, kind)
    for n, result in enumerate(results):
        title = COMMANDS[kind](n)[3]
        assert no_traceback(result.stderr)
        if result.returncode == ExitCode.OK:
            assert landed.count(title) == 1, (n, result.stderr, landed)
        elif kind == "now" and result.returncode == ExitCode.VIOLATIONS:
            # One NOW block per cycle: the others are refused by the numbering rule, saying so (GM105).
            assert "NOW already has the block for cycle" in result.stderr, result.stderr
            assert title not in landed
        elif kind == "log" and result.returncode == ExitCode.VIOLATIONS:
            # One LOG entry per session, until it is committed (MemoryWriter._require_first_entry).
            assert "this session already wrote its LOG entry" in result.stderr, result.stderr
            assert title not in landed
        else:       # never silently lost: a refusal says memory was busy, on one line, with the lock's exit code
            assert result.returncode == ExitCode.DIRTY and "memory is busy" in result.stderr, result.stderr
            assert len(result.stderr.strip().splitlines()) == 1
            assert title not in landed
    ids = _ids(memrepo, kind)
    assert len(ids) == len(set(ids)), ids
    assert len(ids) - len(before_ids) == sum(r.returncode == ExitCode.OK for r in results)
    # 10 s is plenty for a queue of 16; NOW takes one block for the cycle LOG opens next (Workspace.cycle_for).
    assert sum(r.returncode == ExitCode.OK for r in results) == (1 if kind in ("now", "log") else count)


def test_a_writer_that_cannot_get_the_lock_in_time_fails_busy_and_writes_nothing(memrepo: GitRepo) -> None:
    state = memrepo.path / ".git" / "gitmem"
    path = writelock.lock_file(state)
    fd = os.open(path, os.O_RDWR)
    fcntl.flock(fd, fcntl.LOCK_EX)          # another process's hold, as the kernel sees it
    try:
        before = memrepo.read("LESSONS.md")
        with pytest.raises(WritesBusy, match="memory is busy"), writelock.held(state, wait=0.2):
            pass
        from gitmem.memory_writer import MemoryWriter

        writer = MemoryWriter(memrepo.ws())
        started = time.monotonic()
        with pytest.raises(WritesBusy) as caught:
            with writelock.held(state, wait=0.3):
                writer.add_lesson(title="t", happened="h", why="w", change="c")
        assert caught.value.exit_code == ExitCode.DIRTY and time.monotonic() - started < 5
        assert memrepo.read("LESSONS.md") == before
    finally:
        os.close(fd)


def test_the_cli_says_busy_in_one_line_after_the_bounded_wait(memrepo: GitRepo) -> None:
    path = writelock.lock_file(memrepo.path / ".git" / "gitmem")
    fd = os.open(path, os.O_RDWR)
    fcntl.flock(fd, fcntl.LOCK_EX)
    try:
        before = memrepo.read("LESSONS.md")
        started = time.monotonic()
        done = subprocess.run([str(GITMEM), *COMMANDS["lesson"](1)], cwd=memrepo.path, env=_env(),
                              capture_output=True, text=True, timeout=60)
        waited = time.monotonic() - started
    finally:
        os.close(fd)
    assert done.returncode == ExitCode.DIRTY
    assert done.stderr.strip().splitlines() == [done.stderr.strip()] and "memory is busy" in done.stderr
    assert writelock.WAIT_SECONDS <= waited < writelock.WAIT_SECONDS + 20
    assert memrepo.read("LESSONS.md") == before


def test_the_lock_is_reentrant_in_a_process_and_threads_take_turns(memrepo: GitRepo) -> None:
    state = memrepo.path / ".git" / "gitmem"
    order: list[str] = []
    with writelock.held(state), writelock.held(state):      # a write inside a write: no self-deadlock
        thread = threading.Thread(target=lambda: _hold_and_note(state, order))
        thread.start()
        time.sleep(0.2)
        order.append("main")
    thread.join(5)
    assert order == ["main", "thread"]


def _hold_and_note(state: Path, order: list[str]) -> None:
    with writelock.held(state):
        order.append("thread")


def test_a_killed_writer_leaves_no_lock_behind(memrepo: GitRepo) -> None:
    holder = subprocess.Popen(["python3", "-c", (
        "import fcntl, os, sys, time\n"
        f"fd = os.open({str(writelock.lock_file(memrepo.path / '.git' / 'gitmem'))!r}, os.O_RDWR)\n"
        "fcntl.flock(fd, fcntl.LOCK_EX); print('held', flush=True); time.sleep(60)\n")],
        stdout=subprocess.PIPE, text=True)
    assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
    holder.kill()
    holder.wait()
    with writelock.held(memrepo.path / ".git" / "gitmem", wait=1.0):
        pass


def test_an_agent_writing_in_parallel_during_a_cycle_is_not_stuck_behind_the_cycle_lock(
        tmp_path: Path, memrepo: GitRepo, cli) -> None:
    body = (f"procs = [subprocess.Popen([{str(GITMEM)!r}, 'lesson', 'add', '--title', f'parallel {{n}}', "
            "'--happened', 'h', '--why', 'w', '--change', 'c'], cwd=root) for n in range(6)]\n"
            "assert all(p.wait() == 0 for p in procs)\n")
    command_agent(tmp_path, memrepo, body)

    started = time.monotonic()
    result = cli(["cycle", "--json"], cwd=memrepo.path)

    assert result.code == ExitCode.OK, result.err
    assert json.loads(result.out)["outcome"] == "built"
    titles = [item.title for item in lessons.parse(memrepo.read("LESSONS.md")).lessons]
    assert sorted(t for t in titles if t.startswith("parallel")) == [f"parallel {n}" for n in range(6)]
    assert time.monotonic() - started < 60
