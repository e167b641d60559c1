"""Hostile agents, deep folders: libgit2 lists no folder nested 100 levels down ("directory nesting too deep"),
so an agent that made one (`mkdir -p` of 120 levels, with or without a file at the bottom) ended its cycle with
exit 2, its LOG entry and NOW block uncommitted in a dirty tree, no salvage branch and no no-build entry, and
every later cycle failed the same way. Git itself lists such a tree. The deep folder is held whole (moved to
.git/gitmem/held/cycle-N/, GM775), the rest of the cycle's work is committed, and the tree is left clean.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from gitmem import codes
from gitmem.errors import ExitCode
from tests.support.cycle_support import file_at, is_clean
from tests.support.helpers import GitRepo
from tests.support.hostile import command_agent, cycle, evidence

LEVELS = 120


def _deep(root: Path, *, with_file: bool) -> Path:
    bottom = root.joinpath("src", *(["d"] * LEVELS))
    bottom.mkdir(parents=True)
    if with_file:
        (bottom / "deep.txt").write_text("at the bottom\n", encoding="utf-8")
    return bottom


@pytest.mark.parametrize("with_file", [True, False], ids=["a file at the bottom", "empty folders"])
@pytest.mark.parametrize("fail", [None, "the model went away"], ids=["built", "salvaged"])
def test_a_folder_nested_past_what_libgit2_lists_is_held_and_the_cycle_commits_the_rest(
        memrepo: GitRepo, with_file: bool, fail: str | None) -> None:
    # Folders git ignores are not listed, so libgit2 never goes down them: a deep one there stays where it is.
    memrepo.commit_files({".gitignore": memrepo.read(".gitignore") + "build/\n"}, "ignore build output")
    ignored = memrepo.path.joinpath("build", *(["d"] * LEVELS), "out.o")

    def act(root: Path, memory, request) -> None:
        _deep(root, with_file=with_file)
        (root / "src" / "notes.txt").write_text("the agent's real work\n", encoding="utf-8")
        ignored.parent.mkdir(parents=True)
        ignored.write_text("built\n", encoding="utf-8")

    report = cycle(memrepo, act, fail=fail)
    assert report.exit_code == (ExitCode.OK if fail is None else ExitCode.SALVAGED), report.error
    branch = "HEAD" if fail is None else report.salvage_branch
    assert branch is not None and file_at(memrepo.repo, branch, "src/notes.txt") == "the agent's real work\n"
    assert is_clean(memrepo)           # the next cycle starts: libgit2 lists the tree again
    held = memrepo.path / ".git" / "gitmem" / "held" / "cycle-1"
    assert held.joinpath("src", *(["d"] * (LEVELS - 1))).is_dir()     # held whole, nothing lost
    if with_file:
        assert held.joinpath("src", *(["d"] * LEVELS), "deep.txt").read_text(encoding="utf-8") == "at the bottom\n"
    assert not (memrepo.path / "src" / "d").exists()
    assert ignored.read_text(encoding="utf-8") == "built\n" and not (held / "build").exists()
    if fail is None:
        assert [v.code for v in report.violations] == [codes.CYCLE_PATH_HELD.code]
        assert "nest" in evidence(memrepo) and ".git/gitmem/held/cycle-1/src/d/" in evidence(memrepo)



def test_a_deep_folder_already_in_the_tree_is_named_as_the_cause_before_the_cycle_starts(tmp_path: Path,
                                                                                          memrepo: GitRepo,
                                                                                          cli) -> None:
    """One the human made (not the agent: nothing is moved): the refusal said "`git status` shows what is wrong",
    where git's status shows nothing wrong at all."""
    command_agent(tmp_path, memrepo, "")
    _deep(memrepo.path, with_file=True)
    head = memrepo.head()
    result = cli(["cycle", "--json"], cwd=memrepo.path)
    assert result.code == ExitCode.USAGE, (result.out, result.err)
    assert "a folder lies 100 levels or more below its top" in result.err and "git status" not in result.err
    assert memrepo.head() == head and memrepo.path.joinpath("src", *(["d"] * LEVELS), "deep.txt").is_file()
