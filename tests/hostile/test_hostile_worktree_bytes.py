"""Hostile agents and other people's repositories: what the runner commits from the work tree is what `git add`
would store. A link target that is not UTF-8 is committed as its bytes (no traceback, nothing left dirty)."""
from __future__ import annotations

import os

import pygit2

from gitmem.errors import ExitCode
from tests.support.cycle_support import is_clean
from tests.support.helpers import GitRepo
from tests.support.hostile import cycle


def _blob(repo: GitRepo, rel: str) -> tuple[bytes, int]:
    entry = repo.repo.head.peel(pygit2.Commit).tree[rel]
    return repo.repo[entry.id].peel(pygit2.Blob).data, int(entry.filemode)


def test_a_link_whose_target_is_not_utf8_is_committed_as_its_bytes(memrepo: GitRepo) -> None:
    target = b"tar\xffget"
    report = cycle(memrepo, lambda root, memory, request: os.symlink(target, os.fsencode(root / "odd-link")))
    assert report.exit_code == ExitCode.OK, report.error
    assert _blob(memrepo, "odd-link") == (target, pygit2.enums.FileMode.LINK)
    assert is_clean(memrepo)
