"""Hostile agents and other people's repositories: what the runner commits from the work tree is what `git add`
would store. A link target that is not UTF-8 is committed as its bytes (no traceback, nothing left dirty); in a
repository whose attributes check text out with CRLF (`eol=crlf`, or `core.autocrlf`), the blobs get git's clean
conversion, a `.gitignore` checked out that way is not taken for the agent's edit of a protected path, and
`check --worktree` (and the cycle's own check before it starts) reads memory checked out with CRLF as git would
commit it, not as a rewrite of LOG."""
from __future__ import annotations

import os
from pathlib import Path

import pygit2

from gitmem.errors import ExitCode
from tests.support.cycle_support import is_clean
from tests.support.gitcli import git
from tests.support.helpers import GitRepo
from tests.support.hostile import cycle, evidence


def _blob(repo: GitRepo, rel: str) -> tuple[bytes, int]:
    entry = repo.repo.head.peel(pygit2.Commit).tree[rel]
    return repo.repo[entry.id].peel(pygit2.Blob).data, int(entry.filemode)


def test_a_link_whose_target_is_not_utf8_is_committed_as_its_bytes(memrepo: GitRepo) -> None:
    target = b"tar\xffget"
    report = cycle(memrepo, lambda root, memory, request: os.symlink(target, os.fsencode(root / "odd-link")))
    assert report.exit_code == ExitCode.OK, report.error
    assert _blob(memrepo, "odd-link") == (target, pygit2.enums.FileMode.LINK)
    assert is_clean(memrepo)


def _crlf_checkout(repo: GitRepo) -> None:
    """The human's repository says its text files are checked out with CRLF (the memory files are left LF: that
    is `check --worktree`'s question); the work tree is checked out again that way."""
    repo.write(".gitattributes", ".gitignore text eol=crlf\n*.txt text eol=crlf\n")
    repo.write("notes.txt", "one\ntwo\n")
    git(repo.path, "add", "-A")
    git(repo.path, "commit", "-q", "-m", "text checks out with CRLF")
    git(repo.path, "rm", "-q", "-r", "--cached", ".")
    git(repo.path, "reset", "-q", "--hard")
    assert (repo.path / ".gitignore").read_bytes().count(b"\r\n") > 0


def test_a_crlf_checkout_is_committed_as_git_add_would_store_it(memrepo: GitRepo) -> None:
    _crlf_checkout(memrepo)

    def act(root: Path, memory: object, request: object) -> None:
        with open(root / "notes.txt", "ab") as handle:
            handle.write(b"three\r\n")
        (root / "added.txt").write_bytes(b"new\r\nfile\r\n")

    report = cycle(memrepo, act)
    assert report.exit_code == ExitCode.OK, report.error
    assert _blob(memrepo, "notes.txt")[0] == b"one\ntwo\nthree\n"
    assert _blob(memrepo, "added.txt")[0] == b"new\nfile\n"
    assert is_clean(memrepo)


def test_a_gitignore_checked_out_with_crlf_is_not_the_agents_edit(memrepo: GitRepo) -> None:
    _crlf_checkout(memrepo)
    report = cycle(memrepo, lambda root, memory, request: None)
    assert report.exit_code == ExitCode.OK, report.error
    assert report.proposal_branch is None and report.proposal_decision is None
    assert "protected paths" not in evidence(memrepo)
    assert not [name for name in memrepo.repo.branches.local if name.startswith("gitmem/proposal/")]


def _crlf_memory(repo: GitRepo) -> None:
    """Every text file, memory included, checked out with CRLF (as `core.autocrlf=true` does on Windows)."""
    repo.write(".gitattributes", "* text eol=crlf\n")
    git(repo.path, "add", "-A")
    git(repo.path, "commit", "-q", "-m", "text checks out with CRLF")
    git(repo.path, "rm", "-q", "-r", "--cached", ".")
    git(repo.path, "reset", "-q", "--hard")
    assert b"\r\n" in (repo.path / "LOG.md").read_bytes()


def test_check_worktree_reads_a_crlf_checkout_as_git_would_commit_it(memrepo: GitRepo, cli) -> None:
    _crlf_memory(memrepo)
    result = cli(["check", "--worktree"], cwd=memrepo.path)
    assert result.code == 0, result.out + result.err
    assert "GM301" not in result.out and "GM905" not in result.out


def test_a_cycle_starts_in_a_crlf_checkout(memrepo: GitRepo) -> None:
    _crlf_memory(memrepo)
    (memrepo.path / "LOG.md").touch()          # racy: status must hash it through git's conversion or ours
    report = cycle(memrepo, lambda root, memory, request: None)
    assert report.exit_code == ExitCode.OK, report.error
    assert is_clean(memrepo)


def test_a_binary_file_under_autocrlf_is_committed_whole(memrepo: GitRepo) -> None:
    git(memrepo.path, "config", "core.autocrlf", "true")
    data = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\r\n" + bytes(range(256)) * 4
    report = cycle(memrepo, lambda root, memory, request: (root / "image.png").write_bytes(data))
    assert report.exit_code == ExitCode.OK, report.error
    assert _blob(memrepo, "image.png")[0] == data
