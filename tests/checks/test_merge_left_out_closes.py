"""`verify` of a merge that leaves out the other parent's stale close (gitmem.checks.merges): it accepts only what
`gitmem merge` leaves out, close entries of a day the first parent closed since the two parted, and the closes made
on them. A close's amendment (a human's correction of it) is no close: a merge that drops it drops history."""
from __future__ import annotations

from gitmem import codes
from gitmem.checks.merges import check_merge
from gitmem.gitio import Snapshot
from tests.support.helpers import GitRepo

CYCLE = "## 2026-11-14 09:00 UTC · cycle 1 · built\n- Task: ship it\n- Result: shipped\n\n"
OURS_CLOSE = "## 2026-11-14 23:52 UTC · close\n- Day: 2026-11-14\n- Done: cycle 1 · built · ship it — shipped\n\n"
STALE_CLOSE = "## 2026-11-14 23:47 UTC · close\n- Day: 2026-11-14\n- Done: cycle 1 · built · ship it — shipped\n\n"


def _dropped(memrepo: GitRepo, theirs_tail: str) -> list[str]:
    head = memrepo.read("LOG.md")
    base = head + CYCLE
    ours = base + OURS_CLOSE
    theirs = base + theirs_tail
    config = memrepo.ws().config
    found = check_merge(config, Snapshot("ours", {"LOG.md": ours.encode()}.get),
                        [("abc1234", Snapshot("theirs", {"LOG.md": theirs.encode()}.get))],
                        Snapshot("merge", {"LOG.md": ours.encode()}.get))
    return [v.message for v in found if v.code == codes.LOG_NOT_APPEND_ONLY.code]


def test_a_stale_close_of_a_day_the_first_parent_closed_may_be_left_out(memrepo: GitRepo) -> None:
    assert _dropped(memrepo, STALE_CLOSE) == []


def test_a_merge_that_drops_a_humans_correction_of_a_close_is_refused(memrepo: GitRepo) -> None:
    lines = (memrepo.read("LOG.md") + CYCLE).count("\n")
    amendment = (f"## 2026-11-15 08:00 UTC · amends line {lines + 1} · close\n- Day: 2026-11-14\n"
                 "- Done: cycle 1 · built · ship it — shipped, and the human's correction\n\n")
    dropped = _dropped(memrepo, STALE_CLOSE + amendment)
    assert len(dropped) == 1 and "amends line" in dropped[0], dropped
