"""Hostile agents, odd names: a path that some file system takes for `.git` is never committed, nor does it stop
the cycle.

Git refuses such a path where it would be the repository itself: `.git.` and `.git ` (Windows drops trailing
dots and spaces), `GIT~1` (the 8.3 short name of `.git`), `.git::$INDEX_ALLOCATION` (an NTFS stream),
`.gi\\u200ct` (macOS ignores some code points). libgit2 refused some of them in the cycle's commit: the cycle
ended with exit 2, its LOG entry and NOW block left uncommitted in a dirty tree, no salvage and no no-build
entry, and every later cycle refused to start. It committed the others, and a clone on macOS or Windows then
fails to check the repository out. Such a file is held out of the commit (moved to .git/gitmem/held/, GM775),
the rest of the cycle's work is committed, and the tree is left clean.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from gitmem import codes
from gitmem.errors import ExitCode
from tests.support.cycle_support import file_at, is_clean
from tests.support.helpers import GitRepo
from tests.support.hostile import cycle, evidence

# (`.GIT` itself never reaches a commit: libgit2's status does not list it, and git refuses it everywhere.)
SPELLINGS = ["docs/git~1/config", "docs/GIT~1/hooks/post-checkout", ".git /config", "a/.git./config",
             "c/.gi\u200ct/config", "d/.git::$INDEX_ALLOCATION/config"]


@pytest.mark.parametrize("rel", SPELLINGS)
def test_a_path_some_file_system_takes_for_dot_git_is_held_and_the_cycle_commits_the_rest(memrepo: GitRepo,
                                                                                         rel: str) -> None:
    def act(root: Path, memory, request) -> None:
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text("[core]\n\tfsmonitor = evil\n", encoding="utf-8")
        (root / "notes.txt").write_text("the agent's real work\n", encoding="utf-8")

    report = cycle(memrepo, act)
    assert report.exit_code == ExitCode.OK, report.error
    assert file_at(memrepo.repo, "HEAD", "notes.txt") == "the agent's real work\n"
    assert file_at(memrepo.repo, "HEAD", rel) is None
    assert not (memrepo.path / rel).exists()
    assert is_clean(memrepo)
    assert [v.code for v in report.violations] == [codes.CYCLE_PATH_HELD.code]
    assert "kept" in evidence(memrepo) and ".git/gitmem/held/cycle-1/" in evidence(memrepo)
    assert (memrepo.path / ".git" / "gitmem" / "held" / "cycle-1" / rel).is_file()


def test_a_dot_git_spelling_in_a_failed_cycle_is_held_and_the_salvage_branch_holds_the_rest(memrepo: GitRepo) -> None:
    def act(root: Path, memory, request) -> None:
        (root / "docs" / "git~1").mkdir(parents=True)
        (root / "docs" / "git~1" / "config").write_text("x\n", encoding="utf-8")
        (root / "notes.txt").write_text("the agent's real work\n", encoding="utf-8")

    report = cycle(memrepo, act, fail="the model went away")
    assert report.exit_code == ExitCode.SALVAGED, report.error
    assert report.salvage_branch is not None
    assert file_at(memrepo.repo, report.salvage_branch, "notes.txt") == "the agent's real work\n"
    assert is_clean(memrepo)
