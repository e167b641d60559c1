"""`close --push` in a checkout where the human is at work: the close refuses only dirty memory files, so it
committed, then its push rebased the branch onto what the remote added and moved the work tree there with a hard
reset. The human's unstaged edit and staged new file were gone (a dangling blob was all that was left). A push
that may rebase needs a clean tree, as a cycle does: the close with --push refuses to start in a dirty one, before
it writes anything, and says how to keep the changes."""
from __future__ import annotations

from pathlib import Path

import pytest

from gitmem import gitio
from gitmem.close import CloseError
from gitmem.errors import ExitCode
from tests.support.cycle_support import clone, origin_and_clone
from tests.support.gitcli import git
from tests.support.helpers import HUMAN, GitRepo
from tests.support.world import World, at, d


def test_uncommitted_work_is_never_rebased_away(memrepo: GitRepo, tmp_path: Path) -> None:
    world = World(memrepo)
    memrepo.commit_files({"work.txt": "one\n"}, "work", author=HUMAN)
    origin = origin_and_clone(tmp_path, memrepo)
    world.cycle(at(10, 9))
    gitio.run_git(memrepo.handle, "push", "--quiet", "origin", "main")
    other = clone(origin, tmp_path / "other")                      # the remote moves on
    other.commit_files({"other.txt": "theirs\n"}, "other work", author=HUMAN)
    git(other.path, "push", "--quiet", "origin", "main")
    memrepo.commit_files({"mine.txt": "mine\n"}, "a local commit: the push must rebase", author=HUMAN)
    memrepo.write("work.txt", "one\nunsaved edit\n")
    memrepo.write("new.txt", "staged, never committed\n")
    git(memrepo.path, "add", "new.txt")
    head, log_before = memrepo.head(), world.read("LOG.md")
    with pytest.raises(CloseError, match=r"uncommitted changes.*new\.txt.*work\.txt.*--push") as refused:
        world.close(d(10), at(10, 23), push=True)
    assert refused.value.exit_code == ExitCode.DIRTY
    assert memrepo.read("work.txt") == "one\nunsaved edit\n" and memrepo.read("new.txt") == "staged, never committed\n"
    assert memrepo.head() == head and world.read("LOG.md") == log_before
    assert git(memrepo.path, "diff", "--cached", "--name-only").split() == ["new.txt"]
    world.close(d(10), at(10, 23))                                   # without --push, the close runs as before
    assert memrepo.read("work.txt") == "one\nunsaved edit\n"
