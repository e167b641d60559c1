"""A cycle of a named workspace, run by the `command` agent that does just what its prompt says.

The prompt teaches `gitmem log add ...` and `gitmem now add ...`, run in the repository root, with no
`--workspace`: the runner tells the agent's `gitmem` which workspace its cycle is (GITMEM_WORKSPACE, as
GITMEM_CYCLE tells it the cycle), so the entry lands in that workspace's memory, with the box and without it.
Before, it landed in the default workspace's, the runner put that back (a cycle writes only its own memory),
and every cycle of the workspace was a no-build.
"""
from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from gitmem.errors import ExitCode
from gitmem.memory import log
from tests.support.helpers import GitRepo, fill_in_rules, with_command_backend
from tests.support.hostile import no_traceback
from tests.support.nobody import bwrap_works

VENV_BIN = str(Path(sys.executable).parent)
# Runs the two write commands exactly as the prompt lists them (the first word after `- `), with values.
PROMPT_FOLLOWER = """#!/bin/sh
prompt=$(cat)
case "$prompt" in *"- gitmem log add --task"*) ;; *) echo "the prompt teaches no gitmem log add" >&2; exit 9 ;; esac
gitmem log add --task "as the prompt says" --outcome built --result "wrote through the plain command"
gitmem now add --did "as the prompt says" --human nothing --next more
"""


@pytest.fixture
def ops(memrepo: GitRepo, cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> GitRepo:
    """The template with a second workspace `ops` whose agent is PROMPT_FOLLOWER."""
    memrepo.write("gitmem.yaml", memrepo.read("gitmem.yaml") + "\nworkspaces:\n  ops:\n    memory_dir: ops\n")
    made = cli(["init", "."], cwd=memrepo.path)
    assert made.code == ExitCode.OK, made.err
    fill_in_rules(memrepo.path)
    script = tmp_path / "agent.sh"
    script.write_text(PROMPT_FOLLOWER, encoding="utf-8")
    script.chmod(0o755)
    monkeypatch.setenv("PATH", f"{VENV_BIN}{os.pathsep}/usr/bin:/bin")
    return memrepo


def _use(repo: GitRepo, script: Path, sandbox: str) -> None:
    repo.write("gitmem.yaml", with_command_backend(repo.read("gitmem.yaml"), str(script), sandbox=sandbox))
    repo.stage(*[p.relative_to(repo.path).as_posix() for p in repo.path.rglob("*")
                 if p.is_file() and ".git" not in p.relative_to(repo.path).parts])
    repo.commit("a second workspace, ops, and a command agent")


@pytest.mark.parametrize("sandbox", ["none", "bubblewrap"])
def test_a_workspace_cycle_agent_writes_its_own_memory_with_the_commands_its_prompt_gives(
        ops: GitRepo, cli, tmp_path: Path, sandbox: str) -> None:
    if sandbox == "bubblewrap" and not bwrap_works([]):
        pytest.skip("bwrap cannot make its namespaces here")
    _use(ops, tmp_path / "agent.sh", sandbox)
    default_log = ops.read("LOG.md")

    result = cli(["cycle", "--json", "--workspace", "ops"], cwd=ops.path)

    assert result.code == ExitCode.OK, result.err
    assert no_traceback(result.err), result.err
    entry = log.parse(ops.read("ops/LOG.md")).entries[-1]
    assert entry.get("Task") == "as the prompt says", (result.out, result.err)
    assert entry.outcome == "built"
    assert ops.read("LOG.md") == default_log
    assert "reverted the agent's edit" not in (entry.get("Evidence") or "")


def test_recall_of_every_workspace_works_inside_a_workspace_cycle(ops: GitRepo, cli,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GITMEM_WORKSPACE", "ops")
    result = cli(["recall", "--all-workspaces", "anything"], cwd=ops.path)
    assert result.code in (ExitCode.OK, ExitCode.VIOLATIONS), result.err
    assert "not both" not in result.err
