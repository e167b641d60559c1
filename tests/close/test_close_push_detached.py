"""`close --push` on a detached HEAD (a checkout of a tag or of a pull request's merge commit): it committed the
close on the detached HEAD, then the push refused ("HEAD is detached"), exit 2, and the close was a commit no
branch holds, named nowhere. A close that cannot push is refused before it writes anything, as a cycle is."""
from __future__ import annotations

from pathlib import Path

import pytest

from gitmem import gitio
from gitmem.close import CloseError
from gitmem.errors import ExitCode
from tests.support.cycle_support import origin_and_clone
from tests.support.helpers import GitRepo
from tests.support.world import World, at, d


def test_a_close_that_would_push_from_a_detached_head_is_refused_before_it_writes(memrepo: GitRepo,
                                                                                 tmp_path: Path) -> None:
    world = World(memrepo)
    origin_and_clone(tmp_path, memrepo)
    world.cycle(at(10, 9))
    gitio.run_git(memrepo.handle, "push", "--quiet", "origin", "main")
    gitio.run_git(memrepo.handle, "checkout", "--quiet", "--detach")
    head, log_before = memrepo.head(), world.read("LOG.md")
    with pytest.raises(CloseError, match=r"HEAD is detached at [0-9a-f]{10}; `close --push` publishes a branch: "
                                         r"`git switch main`") as refused:
        world.close(d(10), at(10, 23), push=True)
    assert refused.value.exit_code == ExitCode.DIRTY
    assert memrepo.head() == head and world.read("LOG.md") == log_before


def test_the_cli_says_so_with_its_code(memrepo: GitRepo, cli) -> None:
    gitio.run_git(memrepo.handle, "checkout", "--quiet", "--detach")
    result = cli(["close", "--no-llm", "--push"], cwd=memrepo.path)
    assert result.code == ExitCode.DIRTY
    assert result.err.startswith("gitmem: HEAD is detached at ")
