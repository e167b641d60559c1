"""Hostile agents and the paths gitmem owns (GM908, gitmem.checks.owned_paths): an agent that turns `history/`,
where the runner seals LOG's volumes, into a link or a file never gets it onto the branch, even where the folder is
no protected path (a project that keeps files of its own there): the change goes to the proposal branch with the
GM908 line that says why, and the rest of the cycle's work is committed. A link committed before this rule stops
the next cycle with the fix named, where the runner used to skip every seal for good."""
from __future__ import annotations

import os
from pathlib import Path

import pygit2
import pytest

from gitmem.errors import ExitCode
from tests.support.cycle_support import file_at, is_clean
from tests.support.gitcli import git
from tests.support.helpers import GitRepo
from tests.support.hostile import FixedClock, cycle

OWN = "history/2019-migration.md"
OWN_TEXT = "# The 2019 migration\n"
SCRIPT = """\
cycles:
  1:
    - tool: run_command
      input: {{command: "{command}"}}
    - tool: write_file
      input: {{path: notes.md, content: "sound work\\n"}}
    - tool: log_entry
      input: {{task: write notes.md, outcome: built, result: notes.md holds the notes}}
    - tool: now_block
      input: {{did: wrote notes.md, human: nothing, next: more notes}}
"""


def _mode_at_head(repo: GitRepo, path: str) -> int | None:
    tree = repo.repo.revparse_single("HEAD").peel(pygit2.Commit).tree
    try:
        return int(tree[path].filemode)
    except KeyError:
        return None


def _scripted(repo: GitRepo, command: str) -> None:
    """The scripted agent, with its shell (no sandbox: the guard and the checks are what is under test)."""
    agent = "  backend: scripted\n  script: agent-script.yaml\n  shell:\n    enabled: true\n    allow: [sh]"
    config = repo.read("gitmem.yaml").replace("  # backend: anthropic", agent)
    repo.commit_files({"agent-script.yaml": SCRIPT.format(command=command),
                       "gitmem.yaml": config.replace("    mode: auto", "    mode: none")}, "use the scripted agent")


@pytest.mark.parametrize("command", ["sh -c 'rm -r history && ln -s /tmp history'",
                                     "sh -c 'rm -r history && echo not a folder > history'"], ids=["link", "file"])
def test_a_scripted_agent_cannot_make_the_volume_folder_a_link_or_a_file_and_its_sound_work_lands(
        memrepo: GitRepo, cli, command: str) -> None:
    """The project keeps a file of its own in `history/`, so only volume names there are protected paths: the
    folder itself turned into a link or a file used to be committed, and no seal could be written after it."""
    memrepo.commit_files({OWN: OWN_TEXT}, "the project's own history")
    _scripted(memrepo, command)
    result = cli(["cycle"], cwd=memrepo.path)
    assert result.code == ExitCode.OK, result.err
    assert "history:1: GM908 history is a" in result.err and "it must be a plain folder" in result.err
    assert "gitmem/proposal/cycle-1" in result.err
    # Not on the branch, and the work tree has the project's folder back; the sound work is committed.
    assert _mode_at_head(memrepo, "history") == pygit2.GIT_FILEMODE_TREE
    assert file_at(memrepo.repo, "HEAD", OWN) == OWN_TEXT
    assert file_at(memrepo.repo, "HEAD", "notes.md") == "sound work\n"
    assert "write notes.md" in (file_at(memrepo.repo, "HEAD", "LOG.md") or "")
    assert not (memrepo.path / "history").is_symlink() and memrepo.read(OWN) == OWN_TEXT
    # The proposal branch holds the agent's change, for the human to look at.
    assert _mode_at_head_of(memrepo, "gitmem/proposal/cycle-1", "history") != pygit2.GIT_FILEMODE_TREE
    assert is_clean(memrepo)


def _mode_at_head_of(repo: GitRepo, branch: str, path: str) -> int | None:
    tree = repo.repo.revparse_single(branch).peel(pygit2.Commit).tree
    return int(tree[path].filemode) if path in tree else None


def test_a_volume_folder_committed_as_a_link_stops_the_cycle_naming_the_fix(
        memrepo: GitRepo, tmp_path: Path) -> None:
    """Committed before GM908 judged it (by an older cycle, or with --no-verify): the cycle refuses to start, says
    which path and how to put it right, and follows nothing."""
    outside = tmp_path / "outside"
    outside.mkdir()
    os.symlink(outside, memrepo.path / "history")
    git(memrepo.path, "add", "history")
    git(memrepo.path, "commit", "-q", "--no-verify", "-m", "history as a link")
    with pytest.raises(Exception) as refused:
        cycle(memrepo, lambda root, memory, request: None, clock=FixedClock())
    said = str(refused.value)
    assert getattr(refused.value, "exit_code", None) == ExitCode.DIRTY
    assert "history:1: GM908 history is a symbolic link; gitmem writes LOG's sealed volumes there" in said
    assert "git rm --cached history" in said
    assert os.listdir(outside) == []
    # The fix it names works: the next cycle runs.
    git(memrepo.path, "rm", "-q", "--cached", "history")
    (memrepo.path / "history").unlink()
    git(memrepo.path, "commit", "-q", "-m", "history is gitmem's folder again")
    report = cycle(memrepo, lambda root, memory, request: None, clock=FixedClock())
    assert report.exit_code == ExitCode.OK, report.error
