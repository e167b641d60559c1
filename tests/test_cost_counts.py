"""What a cycle costs is counted, not timed (issue 31): the work that grows with history (hashing a file git
already knows, walking commits already checked) is held to what the cycle reads, so it can't creep back."""
from __future__ import annotations

import subprocess

from gitmem import gitio
from gitmem.agents.command import CommandBackend
from gitmem.cycle.runner import run_cycle
from gitmem.workspace import Workspace
from tests.support.helpers import GitRepo


def stat_dirty(root: str) -> list[str]:
    """The tracked files whose index entry lacks the work tree's stat data: every status hashes them whole
    again (`git diff-files` compares stat data only, and lists them)."""
    out = subprocess.run(["git", "diff-files", "--name-only"], cwd=root, check=True, capture_output=True, text=True)
    return out.stdout.split()


def test_a_commit_leaves_the_index_knowing_the_files_it_committed(memrepo: GitRepo) -> None:
    ws = memrepo.ws()
    memrepo.append("LOG.md", "\nsome words a cycle wrote\n")
    gitio.commit_worktree(ws.repo, ["LOG.md"], "a cycle's commit", author=gitio.Identity("A", "a@example.com"))
    assert stat_dirty(str(memrepo.path)) == []
    assert subprocess.run(["git", "status", "--porcelain"], cwd=memrepo.path, capture_output=True, text=True,
                          check=True).stdout == ""


def test_a_commit_never_stages_what_the_work_tree_holds_instead(memrepo: GitRepo) -> None:
    """The stat refresh only records that a file holds its entry's bytes: bytes committed from elsewhere than
    the work tree leave the work tree's file modified, and the index equal to HEAD."""
    ws = memrepo.ws()
    memrepo.append("LOG.md", "\nthe human's unsaved words\n")
    log_bytes = (memrepo.path / "LOG.md").read_bytes()
    gitio.commit_files(ws.repo, {"LOG.md": log_bytes + b"\nonly in the commit\n"}, "a commit",
                       author=gitio.Identity("A", "a@example.com"))
    assert stat_dirty(str(memrepo.path)) == ["LOG.md"]
    diff = subprocess.run(["git", "diff", "--cached", "--name-only"], cwd=memrepo.path, capture_output=True,
                          text=True, check=True).stdout
    assert diff == ""


def test_a_cycle_leaves_no_file_for_the_next_one_to_hash_again(memrepo: GitRepo) -> None:
    from tests.support.cycle_support import WritingBackend, built

    assert run_cycle(memrepo.ws(), WritingBackend(built("first"))).commit
    assert stat_dirty(str(memrepo.path)) == []
