"""A repository the agent makes in the tree is held in a form that runs nothing (gitmem.cycle.oversize `inert`),
with the real bwrap box and without it: git where the runner's note sends the human, and in the clone the note
says to make, never runs the agent's core.fsmonitor or hooks."""
from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

from gitmem.cycle.oversize import INERT_GIT
from gitmem.errors import ExitCode
from tests.support.helpers import GitRepo
from tests.support.hostile import command_agent, evidence
from tests.support.nobody import bwrap_works

MODES = ["none", pytest.param("bubblewrap", marks=pytest.mark.skipif(
    not bwrap_works([]), reason="bwrap is not installed or cannot create namespaces here"))]


def _agent(monitor: Path) -> str:
    return f'''
sub = os.path.join(root, "vendored")
os.makedirs(sub)
run = lambda *argv: subprocess.run(["git", "-C", sub, *argv], check=True, capture_output=True)
run("init", "-q")
with open(os.path.join(sub, "f.txt"), "w") as handle:
    handle.write("the agent's project\\n")
run("add", "f.txt")
run("-c", "user.name=a", "-c", "user.email=a@b.invalid", "commit", "-qm", "its history")
run("config", "core.fsmonitor", {str(monitor)!r})
hook = os.path.join(sub, ".git", "hooks", "post-checkout")
with open(hook, "w") as handle:
    handle.write("#!/bin/sh\\n{monitor} hook\\n")
os.chmod(hook, 0o755)
'''


@pytest.mark.parametrize("sandbox", MODES)
def test_following_the_note_runs_nothing_of_the_agents(tmp_path: Path, memrepo: GitRepo, cli, sandbox: str) -> None:
    marker = tmp_path / "agent-ran"
    monitor = tmp_path / "monitor.sh"         # the human's machine has it: only the agent's config names it
    monitor.write_text(f"#!/bin/sh\necho \"$*\" >> {marker}\n", encoding="utf-8")
    monitor.chmod(0o755)
    command_agent(tmp_path, memrepo, _agent(monitor), sandbox=sandbox)
    result = cli(["cycle", "--json"], cwd=memrepo.path)
    assert result.code == ExitCode.OK, result.err
    assert [v["code"] for v in json.loads(result.out)["violations"]] == ["GM720"]
    note = evidence(memrepo)
    kept = re.search(r"moved to (\S+), its \.git renamed", note)
    clone = re.search(r"`git clone (\S+) <new directory>`", note)
    assert kept is not None and clone is not None, note
    place = memrepo.path / kept.group(1)
    for argv in (["status"], ["log", "-1"], ["checkout", "-q", "HEAD"]):
        subprocess.run(["git", *argv], cwd=place, capture_output=True)
    copy = tmp_path / "look"
    subprocess.run(["git", "clone", "-q", clone.group(1), str(copy)], cwd=memrepo.path, check=True,
                   capture_output=True)
    for argv in (["status"], ["log", "-1"], ["checkout", "-q", "HEAD"]):
        subprocess.run(["git", *argv], cwd=copy, check=True, capture_output=True)
    assert (copy / "f.txt").read_text(encoding="utf-8") == "the agent's project\n"
    assert not marker.exists(), marker.read_text(encoding="utf-8")
    # Kept whole, config and hooks too, where no git command looks: nothing is lost.
    assert "fsmonitor" in (place / INERT_GIT / "config").read_text(encoding="utf-8")
    assert (place / INERT_GIT / "hooks" / "post-checkout").exists()
