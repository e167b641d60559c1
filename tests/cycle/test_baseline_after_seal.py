"""The baseline of an entry without `Started` (an interactive session's) is the parent of the commit that added it,
found by LOG.md's sizes. A seal (rules 6) moves LOG.md's entries up, so an older LOG.md is larger than the entry's
offset now whether or not it holds the entry: the walk crosses a seal by finding the entry in the LOG.md the seal
started from, instead of walking all history and falling back to minute timestamps."""
from __future__ import annotations

from gitmem.cycle.baseline import _added_by
from gitmem.memory import log
from gitmem.workspace import Workspace
from tests.support.helpers import GitRepo
from tests.support.long_log import with_history
from tests.support.sealing import seal


def test_a_sessions_baseline_is_found_across_a_seal_after_it(memrepo: GitRepo) -> None:
    with_history(memrepo, entries=398, blocks=3)
    before = memrepo.head()
    session = "\n## 2026-12-01 08:00 UTC · cycle 399 · built\n- Task: a session\n- Result: done\n"
    memrepo.commit_files({"LOG.md": memrepo.read("LOG.md") + session}, "a session's entry")
    entry = log.parse(memrepo.read("LOG.md")).entries[-1]
    close = "\n## 2026-12-01 23:50 UTC · close\n- Day: 2026-12-01\n- Result: closed\n"
    memrepo.write("LOG.md", memrepo.read("LOG.md") + close)
    assert seal(memrepo, per_volume=200, seal_at=400) == ["history/LOG-0001.md", "LOG.md"]
    assert entry.heading() in memrepo.read("LOG.md")
    assert _added_by(Workspace.at(memrepo.path), memrepo.head(), entry) == before
