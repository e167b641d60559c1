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

import os
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


# Names that are not UTF-8 (a Latin-1 file name, a stray byte): pygit2 cannot name them, so the cycle's commit
# ended in a traceback (exit 70) with its LOG entry and NOW block left uncommitted, and every later cycle refused
# to start on the dirty tree; git would store them, and a clone on macOS or Windows could not check them out.
NOT_UTF8 = [b"bad-\xff.txt", b"caf\xe9/menu.txt", b"\xc3\x28.md"]


@pytest.mark.parametrize("name", NOT_UTF8, ids=["stray byte", "latin-1 folder", "broken sequence"])
@pytest.mark.parametrize("fail", [None, "the model went away"], ids=["built", "salvaged"])
def test_a_name_that_is_not_utf8_is_held_and_the_cycle_commits_the_rest(memrepo: GitRepo, name: bytes,
                                                                        fail: str | None) -> None:
    def act(root: Path, memory, request) -> None:
        place = os.path.join(bytes(root), name)
        os.makedirs(os.path.dirname(place), exist_ok=True)
        with open(place, "wb") as handle:
            handle.write(b"the agent's file\n")
        (root / "notes.txt").write_text("the agent's real work\n", encoding="utf-8")

    report = cycle(memrepo, act, fail=fail)
    assert report.exit_code == (ExitCode.OK if fail is None else ExitCode.SALVAGED), report.error
    branch = "HEAD" if fail is None else report.salvage_branch
    assert branch is not None and file_at(memrepo.repo, branch, "notes.txt") == "the agent's real work\n"
    assert not os.path.lexists(os.path.join(bytes(memrepo.path), name))
    assert is_clean(memrepo)
    held = os.path.join(bytes(memrepo.path), b".git/gitmem/held/cycle-1", name)
    assert open(held, "rb").read() == b"the agent's file\n"
    if fail is None:
        assert [v.code for v in report.violations] == [codes.CYCLE_PATH_HELD.code]
        assert name.decode("utf-8", "backslashreplace") in evidence(memrepo)


def test_an_escape_in_a_name_the_runner_quotes_is_shown_escaped_and_the_cycle_is_built(memrepo: GitRepo) -> None:
    """A protected path named with a terminal escape (OSC 52 writes the clipboard of many terminals): the
    runner quoted it raw in its LOG note, which its own check refused (GM920), and the cycle was a no-build."""
    rel = ".github/workflows/w\x1b]52;c;ZWNobyBwd25lZA==\x07.yml"

    def act(root: Path, memory, request) -> None:
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text("on: push\n", encoding="utf-8")

    report = cycle(memrepo, act)
    assert report.exit_code == ExitCode.OK, report.error
    assert report.proposal_branch is not None
    assert "\\u001b]52;c;ZWNobyBwd25lZA==\\u0007.yml" in evidence(memrepo)
    for text in (memrepo.read("LOG.md"), memrepo.read("DECISIONS.md"), *report.messages):
        assert "\x1b" not in text and "\x07" not in text


def test_a_salvaged_cycles_notes_show_an_escaped_name_too(memrepo: GitRepo) -> None:
    """The model went away mid-cycle, after the agent wrote a token into a file named with a terminal escape: the
    salvage's note that it removed the token quoted the name raw in the cycle's output."""
    rel = "w\x1b]52;c;ZWNobw==\x07.txt"

    def act(root: Path, memory, request) -> None:
        (root / rel).write_text("token = ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8" + "\n", encoding="utf-8")

    report = cycle(memrepo, act, fail="the model went away")
    assert report.exit_code == ExitCode.SALVAGED, report.error
    assert any("removed a secret value" in message for message in report.messages), report.messages
    for text in (memrepo.read("LOG.md"), *report.messages, report.error or ""):
        assert "\x1b" not in text and "\x07" not in text
