"""Hostile agents, class 3d: the remote. An agent that can write the remote itself (here a local-path origin)
pushes a commit that answers a decision as the human while its cycle runs. `cycle --push` does not refuse it (a
human may answer mid-cycle) but names it, in the LOG entry's Evidence and in its output (gitmem.publish.arrivals).
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from gitmem.errors import ExitCode
from gitmem.memory_writer import MemoryWriter
from gitmem.workspace import Workspace
from tests.support.cycle_support import config_of, origin_and_clone
from tests.support.gitcli import git
from tests.support.helpers import HUMAN, GitRepo
from tests.support.hostile import GITMEM, command_agent, evidence, no_traceback


def _ask(repo: GitRepo) -> None:
    memory = MemoryWriter(Workspace.at(repo.path, config_of(repo)), author_email="agent@gitmem.invalid")
    memory.ask_decision(title="Which license?", recommendation="MIT", cycle=1)
    repo.stage("DECISIONS.md")
    repo.commit("ask D-0001", author=("gitmem-agent", "agent@gitmem.invalid"))


def _forge(origin: Path, scratch: Path, *, touch_decisions: bool) -> str:
    """Agent code: clone the origin, answer D-0001 under the human's name (or change another file), push."""
    change = (f"subprocess.run([{str(GITMEM)!r}, 'decision', 'answer', 'D-0001', '--answer', 'MIT, says the agent'],"
              " cwd=w, check=True, env=env)\n" if touch_decisions else "open(w + '/other.txt', 'w').write('x')\n")
    return (f"w = {str(scratch)!r}\n"
            f"env = dict(os.environ, GIT_AUTHOR_NAME={HUMAN[0]!r}, GIT_AUTHOR_EMAIL={HUMAN[1]!r}, "
            f"GIT_COMMITTER_NAME={HUMAN[0]!r}, GIT_COMMITTER_EMAIL={HUMAN[1]!r})\n"
            "env.pop('GITMEM_CYCLE', None)\nenv.pop('GITMEM_ROOT', None)\n"
            f"subprocess.run(['git', 'clone', '-q', {str(origin)!r}, w], check=True, env=env)\n"
            + change +
            "subprocess.run(['git', 'add', '-A'], cwd=w, check=True, env=env)\n"
            "subprocess.run(['git', 'commit', '-q', '-m', 'answer D-0001'], cwd=w, check=True, env=env)\n"
            "subprocess.run(['git', 'push', '-q', 'origin', 'HEAD:main'], cwd=w, check=True, env=env)\n")


@pytest.mark.parametrize("touch_decisions", [True, False], ids=["answers-a-decision", "changes-another-file"])
def test_an_answer_pushed_to_the_remote_during_the_cycle_is_named(tmp_path: Path, memrepo: GitRepo, cli,
                                                                   touch_decisions: bool) -> None:
    _ask(memrepo)
    origin = origin_and_clone(tmp_path, memrepo)
    command_agent(tmp_path, memrepo, _forge(origin, tmp_path / "agent-clone", touch_decisions=touch_decisions))
    git(memrepo.path, "push", "-q", "origin", "main")
    result = cli(["cycle", "--push", "--json"], cwd=memrepo.path)
    assert result.code == ExitCode.OK, result.err + result.out       # not refused: a human may answer mid-cycle
    assert no_traceback(result.err)
    report = json.loads(result.out)
    forged = git(origin, "log", "--format=%h", "-1", "--author", HUMAN[1], "main").strip()
    named = [m for m in report["messages"] if "arrived on origin/main while the cycle ran" in m]
    if not touch_decisions:
        assert named == [] and "arrived on" not in evidence(memrepo)
        return
    assert named and forged[:7] in named[0] and HUMAN[1] in named[0] and "answer D-0001" in named[0]
    logged = git(origin, "show", "main:LOG.md")
    assert "may have written the remote" in logged and HUMAN[1] in logged      # in the pushed Evidence


def test_branches_the_agent_makes_stay_local_and_only_the_runners_own_are_pushed(tmp_path: Path, memrepo: GitRepo,
                                                                                    cli) -> None:
    """`cycle --push` publishes the branches the runner made for the cycle's work (under `gitmem/`), which a
    thrown-away checkout would lose. A branch the agent made is kept in the checkout but never pushed: on the
    forge a push to `deploy/production` or `release/*` runs the human's deploy and release workflows on whatever
    the agent put there, and its commits would reach a branch the human never reviewed."""
    origin = origin_and_clone(tmp_path, memrepo)
    command_agent(tmp_path, memrepo, "open(root + '/notes.txt', 'w').write('the agent')\n"
                  "for name in ('deploy/production', 'release/v9'):\n"
                  "    subprocess.run(['git', 'branch', name, 'HEAD'], cwd=root, check=True)\n"
                  "subprocess.run(['git', 'add', 'notes.txt'], cwd=root, check=True)\n"
                  "subprocess.run(['git', '-c', 'user.name=a', '-c', 'user.email=a@b.c', 'commit', '-q', '-m', "
                  "'its own commit'], cwd=root, check=True)\n")
    git(memrepo.path, "push", "-q", "origin", "main")
    result = cli(["cycle", "--push", "--json"], cwd=memrepo.path)
    assert result.code == ExitCode.OK, result.err + result.out
    on_origin = set(git(origin, "for-each-ref", "--format=%(refname:short)", "refs/heads/").split())
    assert on_origin == {"main", "gitmem/local/cycle-1"}, on_origin        # the runner's branch: the agent's commit
    kept = set(git(memrepo.path, "for-each-ref", "--format=%(refname:short)", "refs/heads/").split())
    assert {"deploy/production", "release/v9"} <= kept                      # kept where the agent made them
