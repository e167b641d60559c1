"""A cycle killed (SIGKILL: a job timeout, a reboot, the OOM killer) while its agent ran, and the next cycle on the
same disk: the killed cycle's agent, still running, is ended, and what it committed on the branch never lands as
anyone's word.

Real processes: `gitmem cycle --push` with a `command` agent, a bare origin, the kill sent to the cycle's process
group as a runner's supervisor sends it.
"""
from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from gitmem.cycle import killed
from gitmem.cycle.runner import CycleRefused, preflight
from gitmem.errors import ExitCode
from gitmem.memory import log
from gitmem.workspace import Workspace
from tests.support.cycle_support import origin_and_clone
from tests.support.gitcli import git, isolated_env
from tests.support.helpers import AGENT, GitRepo, make_repo
from tests.support.hostile import GITMEM, command_agent

# The first run commits a workflow on the branch under the human's name, then hangs until it is killed; every later
# run does an honest cycle's work.
_FIRST_RUN_COMMITS_AND_HANGS = """
marker = os.environ['KILLED_ONCE']
if not os.path.exists(marker):
    with open(marker, 'w') as handle:
        handle.write(str(os.getpid()))
    os.makedirs(os.path.join(root, '.github', 'workflows'), exist_ok=True)
    with open(os.path.join(root, '.github', 'workflows', 'evil.yml'), 'w') as handle:
        handle.write('on: push\\n')
    plain = {k: v for k, v in os.environ.items() if not k.startswith(('GIT_AUTHOR', 'GIT_COMMITTER'))}
    subprocess.run(['git', 'add', '-A'], cwd=root, check=True)
    subprocess.run(['git', '-c', 'user.name=Dana Human', '-c', 'user.email=dana@example.com', 'commit', '-qm',
                    'a workflow, says Dana'], cwd=root, env=plain, check=True)
    import time
    time.sleep(600)
"""


def _cycle(repo: GitRepo, marker: Path) -> subprocess.Popen[str]:
    env = isolated_env(who=AGENT) | {"KILLED_ONCE": str(marker)}
    env.pop("ANTHROPIC_API_KEY", None)
    return subprocess.Popen([str(GITMEM), "cycle", "--push"], cwd=repo.path, env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state not in ("Z", "X")


def _main_moved(repo: GitRepo, start: str, seconds: float = 60) -> bool:
    ends = time.monotonic() + seconds
    while time.monotonic() < ends:
        if git(repo.path, "rev-parse", "main").strip() != start:
            return True
        time.sleep(0.2)
    return False


def test_what_a_killed_cycles_agent_committed_is_kept_aside_and_never_pushed_as_landed(
        tmp_path: Path, git_env: None) -> None:
    runner = make_repo(tmp_path / "runner")
    command_agent(tmp_path, runner, _FIRST_RUN_COMMITS_AND_HANGS)
    origin = origin_and_clone(tmp_path, runner)
    start = git(runner.path, "rev-parse", "main").strip()
    marker = tmp_path / "killed-once"
    dying = _cycle(runner, marker)
    try:
        assert _main_moved(runner, start), "the agent never committed"
    finally:
        os.killpg(dying.pid, signal.SIGKILL)
        dying.communicate()
    forged = git(runner.path, "rev-parse", "main").strip()
    agent = int(marker.read_text(encoding="utf-8"))     # in a process group of its own: it outlives the runner
    try:
        assert _alive(agent)
        after = _cycle(runner, marker)
        out, err = after.communicate(timeout=300)
        assert after.returncode == ExitCode.OK, out + err
        # The next cycle ended the killed one's agent before anything else: it can write nothing more here.
        assert not _alive(agent)
        assert f"ended the agent process(es) a killed cycle left running in this work tree: pid {agent}" in err
    finally:
        if _alive(agent):
            os.kill(agent, signal.SIGKILL)
    kept = "gitmem/local/cycle-1"
    assert (f"a cycle killed while its agent ran left commits that never landed, kept on {kept}; main is back at "
            f"{start[:10]}, where that cycle started") in err
    # Nothing the killed agent committed is on the remote's main; all of it is on the remote, on the kept branch.
    landed = git(origin, "rev-list", "main").split()
    assert forged not in landed and start in landed
    assert git(origin, "log", "--format=%an", "main").split("\n").count("Dana Human") == 0
    assert git(origin, "rev-parse", kept).strip() == forged
    assert ".github/workflows/evil.yml" not in git(origin, "ls-tree", "-r", "--name-only", "main")
    # The cycle that found it ran from where the killed one started, and its LOG entry says what it set aside.
    entry = log.parse(git(origin, "show", "main:LOG.md")).entries[-1]
    assert (entry.cycle, entry.outcome, entry.get("Started")) == (1, "built", start[:12])
    assert f"kept on {kept}; main is back at {start[:10]}" in (entry.get("Evidence") or "")


@pytest.mark.parametrize("dirty", [False, True])
def test_a_window_left_open_sets_the_branch_back_and_keeps_uncommitted_files_for_the_refusal(
        tmp_path: Path, git_env: None, dirty: bool) -> None:
    """The same, in process: a mark left open and commits since its start. With nothing uncommitted the tree goes
    back too; with a file the kill left uncommitted, the cycle refuses (exit 3), naming the file and the branch, and
    the file is still there."""
    repo, start = _window_left_open(tmp_path)
    repo.commit_files({"agent.txt": "the agent's\n"}, "agent commit")
    tip = git(repo.path, "rev-parse", "main").strip()
    if dirty:
        (repo.path / "half.txt").write_text("half written\n", encoding="utf-8")
        with pytest.raises(CycleRefused) as refused:
            preflight(Workspace.at(repo.path))
        assert refused.value.exit_code == ExitCode.DIRTY
        assert "untracked: half.txt" in str(refused.value) and "kept on gitmem/local/cycle-1" in str(refused.value)
        assert (repo.path / "half.txt").read_text(encoding="utf-8") == "half written\n"
    else:
        held, left = preflight(Workspace.at(repo.path))
        held.release()
        assert left.aside is not None and (left.aside.kept, left.aside.start) == (("gitmem/local/cycle-1",), start)
        assert not (repo.path / "agent.txt").exists()
    assert git(repo.path, "rev-parse", "main").strip() == start
    assert git(repo.path, "rev-parse", "gitmem/local/cycle-1").strip() == tip
    if not dirty:      # the mark is gone: the next run undoes nothing again
        held, left = preflight(Workspace.at(repo.path))
        held.release()
        assert left.aside is None and left.notes() == []


@pytest.mark.parametrize("where", ["detached", "its own branch", "main deleted"])
def test_head_a_killed_agent_moved_goes_back_on_the_branch_with_its_commits_kept(tmp_path: Path, git_env: None,
                                                                                   where: str) -> None:
    """The agent detached HEAD, switched to a branch of its own or deleted main, committed, and was killed with its
    runner: the next cycle starts on main at the killed cycle's start (it used to refuse a detached HEAD, exit 3,
    and to run on the agent's branch), and the commit is on a branch."""
    repo, start = _window_left_open(tmp_path)
    if where == "detached":
        git(repo.path, "switch", "--quiet", "--detach")
    else:
        git(repo.path, "switch", "--quiet", "-c", "mine")
        if where == "main deleted":
            git(repo.path, "branch", "--quiet", "-D", "main")
    repo.commit_files({"agent.txt": "the agent's\n"}, "agent commit")
    made = git(repo.path, "rev-parse", "HEAD").strip()
    held, left = preflight(Workspace.at(repo.path))
    held.release()
    assert git(repo.path, "symbolic-ref", "HEAD").strip() == "refs/heads/main"
    assert git(repo.path, "rev-parse", "main").strip() == start and not (repo.path / "agent.txt").exists()
    keeping = "gitmem/local/cycle-1" if where == "detached" else "mine"
    assert git(repo.path, "rev-parse", keeping).strip() == made
    assert left.aside is not None and left.aside.strayed == (
        f"detached at {made[:10]}" if where == "detached" else "on branch mine")


def _window_left_open(tmp_path: Path) -> tuple[GitRepo, str]:
    """A memory repository whose last cycle was killed in its agent's window, started at main's tip."""
    repo = make_repo(tmp_path / "repo")
    start = git(repo.path, "rev-parse", "main").strip()
    killed.open_window(Workspace.at(repo.path).repo, start=start, branch="main")
    return repo, start


@pytest.mark.parametrize("planted", ["fifo", "folder", "link"])
def test_a_mark_the_agent_replaced_neither_blocks_nor_breaks_the_next_cycle(tmp_path: Path, git_env: None,
                                                                            planted: str) -> None:
    """The agent can write `.git/gitmem`: a FIFO at the mark blocked the next cycle's read forever, a folder there
    raised out of its clean-up. Read as a trusted file is, it is no window, and whatever stands there goes."""
    import threading

    repo = make_repo(tmp_path / "repo")
    mark = killed._mark(Workspace.at(repo.path).repo)
    mark.parent.mkdir(parents=True, exist_ok=True)
    if planted == "fifo":
        os.mkfifo(mark)
    elif planted == "folder":
        (mark / "inside").mkdir(parents=True)
    else:
        (tmp_path / "elsewhere.json").write_text('{"start": "x", "branch": "main"}', encoding="utf-8")
        mark.symlink_to(tmp_path / "elsewhere.json")
    found: list[object] = []

    def next_cycle() -> None:
        held, left = preflight(Workspace.at(repo.path))
        held.release()
        found.append(left.aside)

    thread = threading.Thread(target=next_cycle, daemon=True)
    thread.start()
    thread.join(20)
    assert found == [None]
    assert not os.path.lexists(mark)
    assert planted != "link" or (tmp_path / "elsewhere.json").exists()      # the link went, not what it names
