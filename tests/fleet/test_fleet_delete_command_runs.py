"""The fleet's "answered No; delete it: …" command is one that deletes the branch where it is: for an agent read
in place, a branch of its own clone is deleted there (`git branch -D`); before, the fleet said `git push origin
--delete` for it, which deletes nothing there (and fails where the clone has no such remote, or the branch was
never pushed). A branch only a remote has, or a fetched copy's (the remote's), is deleted on that remote."""
from __future__ import annotations

import shlex
import subprocess
from pathlib import Path
from typing import Any

from tests.support.gitcli import git
from tests.support.helpers import declined_proposal_repo

BRANCH = "gitmem/proposal/cycle-7"


def test_the_suggested_delete_command_deletes_the_local_branch(tmp_path: Path, git_env: None, cli: Any) -> None:
    agent = declined_proposal_repo(tmp_path / "agent", BRANCH)
    git(agent.path, "branch", BRANCH)
    (tmp_path / "fleet.yaml").write_text("agents:\n  - name: agent\n    repo: agent\n", encoding="utf-8")
    line = next(line for line in cli(["fleet", "status"], cwd=tmp_path).out.splitlines()
                if "answered No; delete it: " in line)
    command = line.split("delete it: ", 1)[1]
    done = subprocess.run(shlex.split(command), cwd=agent.path, capture_output=True, text=True)
    assert done.returncode == 0, (command, done.stderr)
    assert git(agent.path, "branch", "--list", BRANCH).strip() == ""
