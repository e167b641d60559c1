"""The close seals LOG and keeps NOW short too (rules 6, gitmem.sealing): in its one commit, and never half-way."""
from __future__ import annotations

import errno
import os
from datetime import timedelta

import pytest

from gitmem import gitio
from gitmem.confined import files
from gitmem.memory import now, volumes
from gitmem.memory.timestamps import Timestamp
from tests.support.long_log import entry_count, with_history
from tests.support.world import World, at, d


def test_the_close_whose_entry_makes_400_seals_in_its_own_commit_and_trims_now(world: World) -> None:
    with_history(world.git, entries=398, blocks=120)
    world.cycle(at(10, 9))                                   # entry 399
    before = world.git.head()
    result = world.close(d(10), at(10, 23))                  # its entry is the 400th
    assert result.status == "closed" and result.commit == world.git.head()
    commit = world.git.repo[result.commit]
    changed = {delta.delta.new_file.path for delta in world.git.repo.diff(commit.parents[0], commit)}
    assert changed == {"LOG.md", "NOW.md", "history/LOG-0001.md"}
    volume = gitio.file_at(world.git.handle, result.commit, "history/LOG-0001.md") or b""
    assert entry_count(volume[len(volumes.title("LOG.md", 1)):]) == 200
    live = world.read("LOG.md")
    assert entry_count(live.encode()) == 200 and "- Day: 2026-11-10" in live.rsplit("\n## ", 1)[-1]
    blocks = now.parse(world.read("NOW.md")).blocks
    assert len(blocks) == volumes.NOW_BLOCKS_KEPT and blocks[0].kind == "plan"
    world.assert_valid(before)


def test_a_close_whose_seal_cannot_be_written_leaves_no_volume_and_nothing_changed(
        world: World, monkeypatch: pytest.MonkeyPatch) -> None:
    """The disk fills while LOG.md is rewritten, after volume 1 was written: the seal puts the volume back, the
    close restores what it wrote, and the work tree and index are as HEAD has them."""
    with_history(world.git, entries=398, blocks=3)
    world.cycle(at(10, 9))
    head = world.git.head()
    real_open, failed = os.open, []

    def full_disk(path, flags, mode=0o777, *, dir_fd=None):   # type: ignore[no-untyped-def]
        """The first write of LOG.md after volume 1 was written finds the disk full (room is freed after)."""
        if isinstance(path, str) and path.startswith(".LOG.md.") and flags & os.O_CREAT and not failed \
                and (world.git.path / "history" / "LOG-0001.md").exists():
            failed.append(path)
            raise OSError(errno.ENOSPC, "No space left on device")
        return real_open(path, flags, mode, dir_fd=dir_fd)

    monkeypatch.setattr(files.os, "open", full_disk)
    with pytest.raises(files.FileRefused, match="LOG.md"):
        world.close(d(10), at(10, 23))
    assert failed
    assert world.git.head() == head
    assert not (world.git.path / "history").exists()
    assert gitio.dirty_files(world.git.handle) == []


def test_a_lesson_whose_confirmations_were_sealed_away_is_promoted_without_reading_old_logs_whole(
        world: World, monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """The close asks whether the commit that added a Confirmed line logged its cycle. After a seal LOG.md no
    longer starts with every older LOG.md: a LOG from before the first seal starts the unsealed history (the
    volumes, then LOG.md), and is cut from it, never read and parsed whole (75 MB a commit at 100x)."""
    from gitmem.close import backing
    from gitmem.memory import log

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))         # no verdict kept from another run
    world.cycle(at(10, 8))
    lesson = world.lesson(at(10, 8, 10), "Sealed lesson", rule="Check what was sealed.")
    world.cycle(at(10, 9))
    world.confirm(at(10, 9, 10), lesson)
    filler = "".join(f"\n{log.make_entry(Timestamp.from_datetime(at(10, 11) + timedelta(minutes=n)), cycle=n, outcome='built', fields={'Task': f't{n}', 'Result': f'r{n}'}).render()}\n"  # noqa: E501
                     for n in range(3, 403))
    world.git.commit_files({"LOG.md": world.read("LOG.md") + filler}, "a long day of cycles")
    first = world.close(d(10), at(10, 23))
    assert first.promoted == [] and (world.git.path / "history" / "LOG-0001.md").exists()   # cycles 1-2 sealed
    world.cycle(at(11, 9))
    world.confirm(at(11, 9, 10), lesson)
    parsed: list[int] = []
    real = backing.cycle_numbers
    monkeypatch.setattr(backing, "cycle_numbers", lambda text: parsed.append(len(text)) or real(text))

    second = world.close(d(11), at(11, 23))

    assert [p["lesson"] for p in second.promoted] == [lesson]
    assert parsed == []


def test_a_close_judges_the_history_folder_its_commit_holds_not_the_work_trees(world: World) -> None:
    """The close commits its own files on HEAD's tree: a file left beside the volumes in the work tree, named as
    the next one, is not in that commit, so its check does not take it for a seal that moved nothing (GM315) and
    refuse the day's close."""
    with_history(world.git, entries=398, blocks=3)
    world.cycle(at(10, 9))
    (world.git.path / "history").mkdir()
    (world.git.path / "history" / "LOG-0002.md").write_text("# LOG, volume 2\n\nplanted\n", encoding="utf-8")
    result = world.close(d(10), at(10, 23))
    assert result.status == "closed" and result.commit == world.git.head()
    commit = world.git.repo[result.commit]
    changed = {delta.delta.new_file.path for delta in world.git.repo.diff(commit.parents[0], commit)}
    assert changed == {"LOG.md", "NOW.md", "history/LOG-0001.md"}
    assert (world.git.path / "history" / "LOG-0002.md").read_text(encoding="utf-8").endswith("planted\n")
