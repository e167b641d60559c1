"""A second `close --push` after the first one's push failed: the day is closed already, and the close commit is
only on this machine's disk ("push it before this checkout is thrown away"). Running the close again is how a
person retries; it said "already closed; nothing changed" and exit 0, and pushed nothing."""
from __future__ import annotations

from pathlib import Path

from gitmem import gitio
from gitmem.errors import ExitCode
from tests.support.cycle_support import origin_and_clone
from tests.support.helpers import GitRepo
from tests.support.world import World, at, d


def _origin_main(origin: Path) -> str:
    import pygit2

    return str(pygit2.Repository(str(origin)).revparse_single("main").id)


def test_closing_again_with_push_publishes_the_close_the_first_push_left_local(memrepo: GitRepo,
                                                                              tmp_path: Path) -> None:
    world = World(memrepo)
    origin = origin_and_clone(tmp_path, memrepo)
    world.cycle(at(10, 9))
    gitio.run_git(memrepo.handle, "push", "--quiet", "origin", "main")
    first = world.close(d(10), at(10, 23))                  # committed; its push did not happen (as after exit 6)
    assert first.status == "closed" and _origin_main(origin) != memrepo.head()
    again = world.close(d(10), at(10, 23, 30), push=True)
    assert again.status == "already-closed" and again.message.endswith("pushed what main held that the remote did not")
    assert again.push is not None and again.push.status.exit_code == ExitCode.OK
    assert _origin_main(origin) == memrepo.head() == first.commit


def test_closing_again_with_push_when_origin_has_the_close_pushes_nothing(memrepo: GitRepo, tmp_path: Path) -> None:
    world = World(memrepo)
    origin = origin_and_clone(tmp_path, memrepo)
    world.cycle(at(10, 9))
    world.close(d(10), at(10, 23), push=True)
    tip = _origin_main(origin)
    again = world.close(d(10), at(10, 23, 30), push=True)
    assert again.status == "already-closed" and again.push is None and again.violations == []
    assert _origin_main(origin) == tip == memrepo.head()
