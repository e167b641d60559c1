"""An old day's close entry that a seal moved into a volume (rules 6) is named by the volume's path and its line
there (`LogHistory.where`), never by a LOG.md line that now holds another entry."""
from __future__ import annotations

from pathlib import Path

from gitmem.close.day import day_entries
from gitmem.workspace import log_history
from tests.support.helpers import make_repo
from tests.support.sealing import seal
from tests.support.world import World, at, d


def test_a_close_entry_read_back_from_a_volume_is_named_by_the_volumes_path_and_line(
        tmp_path: Path, git_env: None) -> None:
    world = World(make_repo(tmp_path / "repo"))
    for day in range(2, 6):
        for hour in (9, 12, 15):
            world.cycle(at(day, hour))
        assert world.close(d(day), at(day, 23)).status == "closed"
    assert seal(world.git, per_volume=8, seal_at=12)[0] == "history/LOG-0001.md"
    history = log_history.of(world.git.ws(world.config))
    closes = day_entries(history, d(2), world.config.tzinfo())[1]
    assert len(closes) == 1
    path, line = history.where(closes[0]).rsplit(":", 1)
    assert path == "history/LOG-0001.md"
    heading = world.read(path).splitlines()[int(line) - 1]
    assert heading.startswith("## 2026-11-02 23:00 UTC") and heading.endswith("· close")
    # An entry LOG.md still holds is named by LOG.md's line.
    last = day_entries(history, d(5), world.config.tzinfo())[1][0]
    assert history.where(last) == f"LOG.md:{last.line}"
    assert world.read("LOG.md").splitlines()[last.line - 1].endswith("· close")


def test_closing_a_day_whose_close_a_seal_moved_says_where_that_close_is(tmp_path: Path, git_env: None) -> None:
    world = World(make_repo(tmp_path / "repo"))
    for day in range(2, 6):
        for hour in (9, 12, 15):
            world.cycle(at(day, hour))
        assert world.close(d(day), at(day, 23)).status == "closed"
    seal(world.git, per_volume=8, seal_at=12)
    again = world.close(d(2), at(5, 23, 30))
    assert again.status == "already-closed"
    where = again.message.split("(", 1)[1].split(")", 1)[0]
    path, line = where.rsplit(":", 1)
    assert path == "history/LOG-0001.md", again.message
    assert world.read(path).splitlines()[int(line) - 1].startswith("## 2026-11-02 23:00 UTC")
