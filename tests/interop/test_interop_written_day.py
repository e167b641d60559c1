"""The day an imported fact was written in its source (its file's time) is a day of the memory's time zone, as
every other day in memory is: a fact written on the evening of Feb 28 in Los Angeles was not written on Mar 1."""
from __future__ import annotations

import json
import os
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import pytest

from tests.interop.test_interop_import import put
from tests.support.helpers import CliResult, GitRepo

Cli = Callable[..., CliResult]


@pytest.mark.parametrize(("zone", "instant", "day"), [
    ("America/Los_Angeles", "2026-03-01T05:00:00", "2026-02-28"),      # 21:00 on Feb 28 there
    ("Pacific/Kiritimati", "2025-12-31T12:00:00", "2026-01-01"),       # 02:00 on New Year's Day there (UTC+14)
    ("UTC", "2026-03-01T05:00:00", "2026-03-01"),
])
def test_a_source_files_day_is_the_memorys_time_zone_day(memrepo: GitRepo, cli: Cli, tmp_path: Path, zone: str,
                                                         instant: str, day: str) -> None:
    memrepo.commit_files({"gitmem.yaml": memrepo.read("gitmem.yaml").replace("timezone: UTC", f"timezone: {zone}")},
                         "the team's time zone")
    put(tmp_path / "codex", {"raw_memories.md": "- Rebase before every push\n"})
    moment = datetime.fromisoformat(instant).replace(tzinfo=UTC).timestamp()
    os.utime(tmp_path / "codex" / "raw_memories.md", (moment, moment))
    done = cli(["import", "codex", "--from", str(tmp_path / "codex"), "--json"], cwd=memrepo.path)
    assert done.code == 0, done.err
    lesson = json.loads(done.out)["lessons"][0]
    assert lesson["written"] == day and f"written {day}" in lesson["origin"]
    assert f"written {day}" in memrepo.read("LESSONS.md")
