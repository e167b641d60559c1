"""A session whose SessionStart hook fires while a cycle or a close runs in the same checkout (another process holds
the real cycle lock): its start is the committed tree for the paths that run may change, so its Stop after the run
ends sees exactly the session's changes, never the run's uncommitted files it started beside, nor the agent's commit
the guard moved off the branch."""
from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pygit2
import pytest

from gitmem import gitio
from gitmem.cycle import killed
from gitmem.errors import ExitCode
from gitmem.memory_writer import MemoryWriter
from gitmem.workspace import cyclelock
from tests.sessions.test_sessions_hooks import LOG_ADD
from tests.support.helpers import AGENT, CliResult, GitRepo, script_command, with_command_backend
from tests.support.sessions import GITMEM, hook

CYCLE_COMMIT = "gitmem: cycle 1 · built · ship app.py\n\nGitmem-Cycle: 1\nGitmem-Phase: cycle\n"
CLOSE_COMMIT = "gitmem: close 2026-12-07\n\nclosed\n\nGitmem-Phase: close\n"


def agent_works(memrepo: GitRepo) -> None:
    """What a cycle's agent leaves uncommitted in the work tree: a new file, an edit, and its LOG entry and NOW
    block (the runner's process writes them, holding the lock)."""
    memrepo.write("src/app.py", "print('the agent')\n")
    memrepo.append("README.md", "\nThe agent's line.\n")
    memory = MemoryWriter(memrepo.ws(), author_email=AGENT[1])
    memory.add_log_entry(**LOG_ADD, cycle=1)
    memory.add_now_block(did="shipped app.py", human="nothing", next="its tests", cycle=1)


def runner_commits(memrepo: GitRepo, message: str = CYCLE_COMMIT) -> None:
    """The runner's one commit, as the agent, of every path the work tree changed."""
    memrepo.stage(*[path for path, _ in gitio.dirty_files(memrepo.handle)])
    memrepo.commit(message, author=AGENT)


def test_a_session_started_while_a_cycle_runs_starts_from_the_committed_tree(memrepo: GitRepo) -> None:
    """The session recorded the cycle's uncommitted files as its starting point: once the runner committed them,
    they read as changed by the session, which was told to log the agent's work as its own."""
    with cyclelock.acquire(gitio.state_dir(memrepo.handle)):
        agent_works(memrepo)
        started = hook("session-start", memrepo.path)
        assert "this session continues cycle 1" not in started.context, "cycle 1 is the runner's, not the session's"
        assert hook("stop", memrepo.path).output is None, "the cycle's files are its agent's while it runs"
        runner_commits(memrepo)

    assert gitio.dirty_files(memrepo.handle) == []
    quiet = hook("stop", memrepo.path)
    assert quiet.output is None and "changed no files" in quiet.err, quiet.err

    memrepo.write("src/mine.py", "print('the session')\n")
    memrepo.append("README.md", "The session's line.\n")
    stopped = hook("stop", memrepo.path).output
    assert stopped is not None and stopped["decision"] == "block"
    assert "changed files (README.md, src/mine.py) but wrote no LOG entry" in stopped["reason"], stopped["reason"]
    assert "log it as cycle 2" in stopped["reason"]


def test_what_the_session_changes_after_the_runners_commit_while_the_lock_is_held_is_the_sessions(
        memrepo: GitRepo) -> None:
    """The runner still holds the lock after its commit (its push): an edit the session makes then is left in the
    work tree, and is the session's."""
    with cyclelock.acquire(gitio.state_dir(memrepo.handle)):
        agent_works(memrepo)
        hook("session-start", memrepo.path)
        runner_commits(memrepo)
        memrepo.write("notes/session.md", "the session's notes\n")

    stopped = hook("stop", memrepo.path).output
    assert stopped is not None and "changed files (notes/session.md) but" in stopped["reason"], stopped
    MemoryWriter(memrepo.ws()).add_log_entry(**LOG_ADD, interactive=True)      # the session logs: cycle 2
    assert hook("stop", memrepo.path, session="s-1").output is None


def test_a_session_started_while_the_agent_may_act_is_recorded_at_its_first_stop_after_the_guard(
        memrepo: GitRepo) -> None:
    """The agent committed on the branch while its window was open, and the session started then, on the agent's
    commit. The guard puts `.git/gitmem` back after the agent (a record written then would go, as the agent's
    change) and moves the agent's commit off the branch: the session's start is recorded at its first Stop after
    the window, from the cycle's start. Recorded on the agent's commit, the session read the branch as rewritten
    ("commits since") and was told to log."""
    repo = memrepo.handle
    start = memrepo.head()
    branch = gitio.current_branch(repo) or "main"
    record = memrepo.path / ".git" / "gitmem" / "sessions" / "s-1.json"
    with cyclelock.acquire(gitio.state_dir(repo)):
        killed.open_window(repo, start=start, branch=branch)
        memrepo.commit_files({"src/app.py": "print('the agent')\n"}, "the agent's own commit", author=AGENT)
        agents = memrepo.head()
        started = hook("session-start", memrepo.path)
        assert "## Proven rules (RULES.md)" in started.context and "recorded at its first Stop" in started.err
        assert not record.exists(), "the guard would remove it, and report it as the agent's"
        memrepo.repo.branches.local.create("gitmem/local/cycle-1", memrepo.repo[agents].peel(pygit2.Commit))
        memrepo.repo.references[f"refs/heads/{branch}"].set_target(start)       # the guard: back to the start
        killed.close_window(repo)
        assert hook("stop", memrepo.path).output is None and record.is_file(), "recorded after the window"
        MemoryWriter(memrepo.ws(), author_email=AGENT[1]).add_log_entry(**LOG_ADD, cycle=1)
        runner_commits(memrepo)

    assert gitio.is_ancestor(repo, start, memrepo.head()) and not gitio.is_ancestor(repo, agents, memrepo.head())
    quiet = hook("stop", memrepo.path)
    assert quiet.output is None and "changed no files" in quiet.err, quiet.err


def test_a_session_started_while_a_close_runs_keeps_the_humans_own_uncommitted_files(memrepo: GitRepo) -> None:
    """A close may run beside the human's uncommitted files and writes only memory: those files stay the session's
    starting point (an edit of them is the session's, leaving them is nothing), the close's memory files are not."""
    memrepo.write("draft.md", "the human's draft\n")
    with cyclelock.acquire(gitio.state_dir(memrepo.handle), what="close"):
        MemoryWriter(memrepo.ws(), author_email=AGENT[1]).add_now_block(did="closed the day", human="nothing",
                                                                        next="tomorrow", cycle=1)
        hook("session-start", memrepo.path)
        memrepo.stage("NOW.md")
        memrepo.commit(CLOSE_COMMIT, author=AGENT)

    assert [path for path, _ in gitio.dirty_files(memrepo.handle)] == ["draft.md"]
    quiet = hook("stop", memrepo.path)
    assert quiet.output is None and "changed no files" in quiet.err, quiet.err
    memrepo.append("draft.md", "the session's line\n")
    stopped = hook("stop", memrepo.path).output
    assert stopped is not None and "changed files (draft.md) but" in stopped["reason"], stopped


def test_a_cycle_killed_while_the_session_ran_leaves_its_files_to_no_one(memrepo: GitRepo,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """The runner holding the lock is killed (kill -9) with its agent's work uncommitted: that work is neither
    committed nor the session's, so the session's start is taken again at its next Stop, and only what it changes
    from there is its own. While the cycle ran, the session was told so, not that it continues the cycle's entry."""
    holder = subprocess.Popen([sys.executable, "-c", HOLD_THE_LOCK, str(gitio.state_dir(memrepo.handle))],
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        with monkeypatch.context() as inside:
            inside.setenv("GITMEM_CYCLE", "1")          # the runner's agent: its writes are the cycle's
            agent_works(memrepo)
        context = hook("session-start", memrepo.path).context
        assert f"a cycle is running in this checkout (cycle pid {holder.pid} on " in context
        assert "this session continues cycle 1" not in context
    finally:
        holder.kill()
        holder.wait(30)

    killed = hook("stop", memrepo.path)
    assert killed.output is None and "ended without finishing" in killed.err, killed.err
    memrepo.write("src/mine.py", "print('the session')\n")
    stopped = hook("stop", memrepo.path).output
    assert stopped is not None and "this session changed files (src/mine.py)," in stopped["reason"], stopped


HOLD_THE_LOCK = """
import sys, time
from pathlib import Path
from gitmem.workspace import cyclelock
lock = cyclelock.acquire(Path(sys.argv[1]))
print("held", flush=True)
time.sleep(600)
"""


SESSION_STARTS_MID_CYCLE = """
import json, os, subprocess, sys
sys.stdin.read()
root = os.environ["GITMEM_ROOT"]
gitmem = sys.argv[1]
def run(*argv):
    subprocess.run(list(argv), check=True, cwd=root, capture_output=True)
with open(os.path.join(root, "committed.md"), "w") as handle:
    handle.write("the agent's commit\\n")
run("git", "add", "committed.md")
run("git", "-c", "user.name=agent", "-c", "user.email=agent@example.com", "commit", "-q", "-m", "mine")
with open(os.path.join(root, "report.md"), "w") as handle:
    handle.write("the agent's report\\n")
run(gitmem, "log", "add", "--task", "write report.md", "--outcome", "built", "--result", "written")
run(gitmem, "now", "add", "--did", "wrote report.md", "--human", "nothing", "--next", "extend it")
# The human's Claude Code session, started in the same checkout now: no GITMEM_* of the cycle's reaches it.
human = {key: value for key, value in os.environ.items() if not key.startswith("GITMEM_")}
started = subprocess.run([gitmem, "hook", "session-start"], cwd=root, env=human, capture_output=True, text=True,
                         input=json.dumps({"session_id": "s-1", "cwd": root, "hook_event_name": "SessionStart"}))
with open(sys.argv[2], "w") as handle:
    handle.write(started.stdout)
"""


def test_a_session_started_inside_a_real_cycle_is_judged_after_it_by_its_own_changes(
        tmp_path: Path, memrepo: GitRepo, cli: Callable[..., CliResult]) -> None:
    """`gitmem cycle` with a command agent that commits on the branch, leaves files and memory uncommitted, and
    meanwhile the human's session starts in the checkout. Its record, written there, was removed by the runner's
    guard and reported in the cycle's output as a change the agent made to `.git/gitmem/sessions`: now none is
    written while the agent may act, and after the runner's guard and commit the session's Stop finds nothing of
    the session's, and then exactly what the session changed."""
    script = tmp_path / "agent.py"
    script.write_text(SESSION_STARTS_MID_CYCLE)
    answer = tmp_path / "session-start.json"
    memrepo.commit_files({"gitmem.yaml": with_command_backend(memrepo.read("gitmem.yaml"),
                                                               script_command(script, str(GITMEM), str(answer)))},
                         "use a command agent")

    ran = cli(["cycle"], cwd=memrepo.path)

    assert ran.code == ExitCode.OK, ran.err
    assert "a cycle is running in this checkout" in json.loads(answer.read_text())["hookSpecificOutput"][
        "additionalContext"]
    assert "sessions" not in ran.out + ran.err, "the session's hook is no change of the agent's to put back"
    assert gitio.dirty_files(memrepo.handle) == []
    quiet = hook("stop", memrepo.path)
    assert quiet.output is None and "recorded the work tree now" in quiet.err, quiet.err
    memrepo.write("src/mine.py", "print('the session')\n")
    stopped = hook("stop", memrepo.path).output
    assert stopped is not None and "changed files (src/mine.py) but" in stopped["reason"], stopped
