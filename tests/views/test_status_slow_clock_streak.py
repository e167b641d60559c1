"""`gitmem status` counts a Rule 0 streak in LOG's order, whatever the entries' clocks: an interactive session is a
cycle too (docs/format.md), so its built entry ends the streak and its no-build entry continues it, even when a
slow laptop dated it before the cycles it follows (GM310)."""
from __future__ import annotations

import json

import pytest

from gitmem.errors import ExitCode
from tests.support.helpers import GitRepo


def _log(session_outcome: str) -> str:
    text = "\n## 2026-12-05 08:00 UTC · cycle 1 · built\n- Task: t1\n- Result: r\n"
    text += "".join(f"\n## 2026-12-05 {8 + n}:00 UTC · cycle {n} · no-build\n- Task: t{n}\n"
                    f"- Result: no build: waiting on the release token\n" for n in range(2, 6))
    return text + (f"\n## 2026-12-04 23:00 UTC · cycle 6 · {session_outcome}\n- Task: from a slow laptop\n"
                   "- Result: no build: still no token\n- Session: interactive\n")


@pytest.mark.parametrize(("session_outcome", "streak"), [
    ("built", {"length": 0, "first": None, "last": None, "problem": False}),
    ("no-build", {"length": 5, "first": 2, "last": 6, "problem": True}),
])
def test_a_slow_clocks_session_entry_ends_or_continues_the_streak_by_its_place(
        memrepo: GitRepo, cli, session_outcome: str, streak: dict[str, object]) -> None:
    memrepo.commit_files({"LOG.md": memrepo.read("LOG.md") + _log(session_outcome)}, "a streak, then a session")
    done = cli(["status", "--json"], cwd=memrepo.path)
    assert done.code == ExitCode.OK, done.out + done.err
    assert json.loads(done.out)["streak"] == streak
