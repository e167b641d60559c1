"""Two clones of one bare origin: the agent's (running `gitmem cycle --push`) and a human's, at the same time.

The agent is the `command` backend: a small program that writes memory through the gitmem CLI, as an agent
CLI would, and, mid-cycle, makes the human's clone push. Everything runs as separate processes.
"""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from gitmem.memory import decisions, log, now
from tests.support.action_support import agent_repo, clean_env, origin_file, origin_log, project_bin
from tests.support.gitcli import git
from tests.support.helpers import AGENT, DANA

AGENT_PROGRAM = '''\
"""A stand-in agent CLI. MODE (env) says what the human does while it works."""
import os
import subprocess
from pathlib import Path

root, cycle, mode = Path(os.environ["GITMEM_ROOT"]), os.environ["GITMEM_CYCLE"], os.environ["MODE"]
human = os.environ["HUMAN_CLONE"]


HUMAN_ENV = {k: v for k, v in os.environ.items() if k != "GITMEM_CYCLE"}   # the human's own shell: no cycle


def run(*argv, cwd=root, env=None):
    subprocess.run(argv, cwd=cwd, check=True, capture_output=True, env=env)


def human_pushes(edit):
    run("git", "pull", "-q", "--ff-only", cwd=human)
    edit()
    run("git", "commit", "-q", "-am", f"human: {mode}", cwd=human)
    run("git", "push", "-q", "origin", "main", cwd=human)


def dana_wants():
    path = Path(human) / "NOW.md"
    path.write_text(path.read_text().replace("- Next: write more", "- Next: what Dana wants", 1))


(root / "hello.txt").write_text(f"hello from cycle {cycle}\\n")
if mode == "answer":
    run("gitmem", "decision", "ask", "--title", "Which CI?", "--recommendation", "GitHub Actions")
    human_pushes(lambda: run("gitmem", "decision", "answer", "D-0001", "--answer", "MIT it is", cwd=human,
                             env=HUMAN_ENV))
if mode == "conflict":
    human_pushes(dana_wants)
    now_md = root / "NOW.md"
    now_md.write_text(now_md.read_text().replace("- Next: write more", "- Next: what the agent wants", 1))
run("gitmem", "log", "add", "--task", f"write hello.txt ({mode})", "--outcome", "built",
    "--result", "hello.txt exists", "--evidence", "cat hello.txt")
run("gitmem", "now", "add", "--did", "wrote hello.txt", "--human", "nothing", "--next", "write more")
'''


@pytest.fixture
def clones(tmp_path: Path) -> tuple[Path, Path, Path]:
    """(origin, agent clone, human clone); D-0001 is asked and published before any cycle."""
    program = tmp_path / "agent.py"
    program.write_text(AGENT_PROGRAM, encoding="utf-8")
    origin = tmp_path / "origin.git"
    agent = agent_repo(tmp_path / "agent", origin,
                       backend=f"  backend: command\n  command: {sys.executable} {program}")
    done = subprocess.run([str(project_bin() / "gitmem"), "decision", "ask", "--title", "Which license?",
                           "--recommendation", "MIT"], cwd=agent, env=_env(tmp_path), capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    git(agent, "commit", "-q", "-am", "ask D-0001", who=AGENT)
    git(agent, "push", "-q", "origin", "main")
    human = tmp_path / "human"
    git(tmp_path, "clone", "-q", str(origin), str(human))
    git(human, "config", "user.name", DANA[0])
    git(human, "config", "user.email", DANA[1])
    return origin, agent, human


def _env(tmp_path: Path, **extra: str) -> dict[str, str]:
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    return {**clean_env(project_bin(), home), **extra}


def cycle(tmp_path: Path, agent: Path, human: Path, mode: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(project_bin() / "gitmem"), "cycle", "--push"], cwd=agent, capture_output=True,
                          text=True, env=_env(tmp_path, MODE=mode, HUMAN_CLONE=str(human)))


def gitmem(cwd: Path, tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(project_bin() / "gitmem"), *args], cwd=cwd, capture_output=True, text=True,
                          env=_env(tmp_path))


def test_a_human_answer_pushed_mid_cycle_is_rebased_onto_and_both_land(tmp_path: Path, clones) -> None:
    origin, agent, human = clones
    start = git(origin, "rev-parse", "main").strip()

    done = cycle(tmp_path, agent, human, "answer")

    assert done.returncode == 0, done.stderr
    assert "rebased 1 commit(s) onto origin/main" in done.stderr
    assert origin_log(origin)[:3] == ["gitmem: cycle 1 · built · write hello.txt (answer)", "human: answer",
                                      "ask D-0001"]
    assert git(origin, "log", "-1", "--format=%an", "main~1").strip() == DANA[0]
    on_origin = decisions.parse(origin_file(origin, "main", "DECISIONS.md"))
    answered = {d.id: d for d in on_origin.settled}
    assert list(answered) == ["D-0001"] and answered["D-0001"].get("Answer") == "MIT it is"
    assert [(d.id, d.title) for d in on_origin.awaiting] == [("D-0002", "Which CI?")]
    assert [e.cycle for e in log.parse(origin_file(origin, "main", "LOG.md")).entries] == [1]
    assert origin_file(origin, "main", "hello.txt") == "hello from cycle 1\n"
    assert git(agent, "rev-parse", "HEAD").strip() == git(origin, "rev-parse", "main").strip()
    assert git(agent, "status", "--porcelain") == ""
    verified = gitmem(agent, tmp_path, "verify", "--range", f"{start}..origin/main")
    assert verified.returncode == 0, verified.stdout + verified.stderr


def test_a_conflicting_edit_of_the_same_now_block_goes_to_a_branch_and_nothing_is_lost(tmp_path: Path,
                                                                                       clones) -> None:
    origin, agent, human = clones
    assert cycle(tmp_path, agent, human, "plain").returncode == 0

    done = cycle(tmp_path, agent, human, "conflict")

    assert done.returncode == 4, done.stdout + done.stderr
    assert "conflicts in NOW.md" in done.stderr and "gitmem/cycle-2" in done.stdout + done.stderr
    branches = git(origin, "for-each-ref", "--format=%(refname:short)", "refs/heads").split()
    assert sorted(branches) == ["gitmem/cycle-2", "main"]
    # Both versions of the block are on origin: the human's on main, the agent's on its cycle branch.
    assert "- Next: what Dana wants" in origin_file(origin, "main", "NOW.md")
    assert "- Next: what the agent wants" in origin_file(origin, "gitmem/cycle-2", "NOW.md")
    assert origin_log(origin, "gitmem/cycle-2")[0] == "gitmem: cycle 2 · built · write hello.txt (conflict)"
    assert origin_log(origin)[0] == "human: conflict"
    saved = now.parse(origin_file(origin, "gitmem/cycle-2", "NOW.md")).blocks
    assert saved[0].fields[0].value == "wrote hello.txt"
    # The agent's clone is back on origin's main, clean, ready for the next cycle.
    assert git(agent, "rev-parse", "HEAD").strip() == git(origin, "rev-parse", "main").strip()
    assert git(agent, "status", "--porcelain") == ""


def _rewrite_old_entry(path: Path) -> None:
    text = (path / "LOG.md").read_text(encoding="utf-8")
    (path / "LOG.md").write_text(text.replace("- Result: hello.txt exists", "- Result: something grander", 1),
                                 encoding="utf-8")


def test_a_force_pushed_log_rewrite_is_caught_by_verify(tmp_path: Path, clones) -> None:
    origin, agent, human = clones
    for _ in range(2):
        assert cycle(tmp_path, agent, human, "plain").returncode == 0
    old = git(origin, "rev-parse", "main").strip()
    git(human, "pull", "-q", "--ff-only")
    git(human, "reset", "-q", "--hard", "HEAD~1")        # drop cycle 2 and rewrite cycle 1's entry
    _rewrite_old_entry(human)
    git(human, "commit", "-q", "--amend", "-am", "gitmem: cycle 1 · built · rewritten", who=DANA)
    git(human, "push", "-q", "--force", "origin", "main")
    new = git(origin, "rev-parse", "main").strip()
    git(agent, "fetch", "-q", "origin")

    done = gitmem(agent, tmp_path, "verify", "--range", f"{old}..{new}")

    assert done.returncode == 5, done.stdout + done.stderr
    assert "GM906" in done.stdout and "history was rewritten" in done.stdout


def test_a_log_edit_that_keeps_descent_fails_with_gm301_on_its_line(tmp_path: Path, clones) -> None:
    origin, agent, human = clones
    assert cycle(tmp_path, agent, human, "plain").returncode == 0
    old = git(origin, "rev-parse", "main").strip()
    git(human, "pull", "-q", "--ff-only")
    _rewrite_old_entry(human)
    line = next(n for n, text in enumerate((human / "LOG.md").read_text().splitlines(), 1)
                if text == "- Result: something grander")
    git(human, "commit", "-q", "-am", "polish the log", who=DANA)
    git(human, "push", "-q", "origin", "main")
    git(agent, "fetch", "-q", "origin")

    done = gitmem(agent, tmp_path, "verify", "--range", f"{old}..origin/main")

    assert done.returncode == 1, done.stdout + done.stderr
    assert f"LOG.md:{line}: GM301" in done.stdout
    assert "GM906" not in done.stdout
