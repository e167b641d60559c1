"""The commands `gitmem status` and `gitmem fleet status` give for a kept branch (read it, merge it, delete it)
name the branch as git lists it, and a branch name may hold what a shell reads as syntax (`;`, `$`, `|`, a
backquote): an agent outside the box, or anyone who can write refs, names a branch
`gitmem/proposal/x;touch${IFS}pwned`, and the human who pastes the suggested `git branch -D …` runs `touch`.
Each name (and remote) is quoted for the shell, so a pasted command acts on that one branch; a plain name reads
as before."""
from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any

from tests.support.gitcli import git
from tests.support.helpers import declined_proposal_repo

HOSTILE = "gitmem/proposal/x;touch${IFS}pwned"
SALVAGE = "gitmem/salvage/y|touch${IFS}pwned2"


def _branch(path: Path, name: str) -> None:
    tip = git(path, "commit-tree", "-p", "HEAD", "-m", "kept work", "HEAD^{tree}").strip()
    git(path, "update-ref", f"refs/heads/{name}", tip)


def _runs_only_git_on(command: str, name: str) -> bool:
    """Whether `command`, as a shell splits it, is one git command whose arguments hold `name` whole."""
    words = shlex.split(command)
    return words[0] == "git" and any(name in word for word in words) and \
        not any(mark in command.replace(shlex.quote(name), "") for mark in (";", "|", "$"))


def test_status_and_the_fleet_quote_the_branch_in_every_command(tmp_path: Path, git_env: None, cli: Any) -> None:
    agent = declined_proposal_repo(tmp_path / "agent", HOSTILE)
    _branch(agent.path, HOSTILE)
    _branch(agent.path, SALVAGE)
    kept = {b["name"]: b for b in json.loads(cli(["status", "--json"], cwd=agent.path).out)["branches"]}
    delete = kept[HOSTILE]["hint"].split("delete it (", 1)[1].rstrip(")")
    assert _runs_only_git_on(delete, HOSTILE), delete
    read = kept[SALVAGE]["todo"].split("read it (", 1)[1].split(")", 1)[0]
    assert _runs_only_git_on(read, SALVAGE), read
    (tmp_path / "fleet.yaml").write_text("agents:\n  - name: agent\n    repo: agent\n", encoding="utf-8")
    text = cli(["fleet", "status"], cwd=tmp_path).out
    line = next(line for line in text.splitlines() if "answered No; delete it: " in line)
    assert _runs_only_git_on(line.split("delete it: ", 1)[1], HOSTILE), line
