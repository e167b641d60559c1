"""Hostile agents, resources: a file's size is what it claims, not what it costs to make. `truncate -s 4T` makes
a sparse file in an instant (holes take no disk); the runner holds a file that big out of its commit and masks
secrets in what it holds, and reading four terabytes of holes took hours, past any job's timeout, leaving a
tree the next cycle refuses as dirty. Holes hold no bytes and no secret: only the data is read."""
from __future__ import annotations

from pathlib import Path

from gitmem.errors import ExitCode
from tests.support.cycle_support import is_clean
from tests.support.helpers import GitRepo
from tests.support.hostile import FixedClock, cycle, deadline

SIZE = 4 << 40          # 4 TiB: ext4 and xfs allow it; the disk gives it no block


def test_a_huge_sparse_file_is_held_out_without_reading_its_holes(memrepo: GitRepo, monkeypatch) -> None:
    def grow(root: Path, memory, request) -> None:
        with (root / "disk.img").open("wb") as image:
            image.write(b"header tok-zzzz\n")
            image.seek(1 << 30)
            image.write(b"middle\n")
            image.truncate(SIZE)

    with deadline(120):     # pytest.fail: a file loop's `except OSError` never takes it
        report = cycle(memrepo, grow, clock=FixedClock())
    assert report.exit_code == ExitCode.OK, report.error
    assert any("disk.img" in message and "held" in message for message in report.messages), report.messages
    kept = next((memrepo.path / ".git" / "gitmem" / "held").rglob("disk.img*"))
    assert kept.stat().st_size == SIZE, "the human gets the file as the agent left it"
    with kept.open("rb") as image:
        assert image.read(12) == b"header tok-z", "its data is kept as written"
    assert not (memrepo.path / "disk.img").exists() and is_clean(memrepo)
