"""One read of a large, settled file per process (`confined.files.read_bytes`): the bytes object kept answers
again only while the file's stat is the one read, and a file changed just before it was read is read again."""
from __future__ import annotations

import os
import time
from pathlib import Path

from gitmem.confined import files

LARGE = b"## entry\n" * ((files._SettledReads.FROM // 9) + 1)


def settled(path: Path, data: bytes) -> None:
    """Write `data` and wait until its change is older than the settling time, as a file untouched since the
    last cycle is."""
    path.write_bytes(data)
    time.sleep(files.SETTLED_NS / 1e9 + 0.05)


def test_a_settled_large_file_is_read_once(tmp_path: Path) -> None:
    settled(tmp_path / "LOG.md", LARGE)
    first = files.read_bytes(tmp_path, "LOG.md")
    assert first == LARGE
    assert files.read_bytes(tmp_path, "LOG.md") is first


def test_a_file_written_since_is_read_again_even_with_its_old_size_and_times(tmp_path: Path) -> None:
    log = tmp_path / "LOG.md"
    settled(log, LARGE)
    first = files.read_bytes(tmp_path, "LOG.md")
    before = os.stat(log)
    with open(log, "r+b") as handle:           # in place: the same inode and size
        handle.write(b"## ENTRY")
    os.utime(log, ns=(before.st_atime_ns, before.st_mtime_ns))   # mtime set back; ctime can't be
    again = files.read_bytes(tmp_path, "LOG.md")
    assert again is not first
    assert again is not None and again.startswith(b"## ENTRY")


def test_a_file_changed_just_before_it_was_read_is_read_again(tmp_path: Path) -> None:
    (tmp_path / "LOG.md").write_bytes(LARGE)
    first = files.read_bytes(tmp_path, "LOG.md")
    again = files.read_bytes(tmp_path, "LOG.md")
    assert first == again == LARGE
    assert again is not first


def test_a_file_replaced_by_another_is_read_again(tmp_path: Path) -> None:
    settled(tmp_path / "LOG.md", LARGE)
    first = files.read_bytes(tmp_path, "LOG.md")
    (tmp_path / "new").write_bytes(LARGE.replace(b"entry", b"ENTRY"))
    os.replace(tmp_path / "new", tmp_path / "LOG.md")
    again = files.read_bytes(tmp_path, "LOG.md")
    assert again is not None and b"ENTRY" in again and again is not first


def test_a_small_file_is_always_read(tmp_path: Path) -> None:
    settled(tmp_path / "NOW.md", b"# NOW\n")
    first = files.read_bytes(tmp_path, "NOW.md")
    assert files.read_bytes(tmp_path, "NOW.md") == first == b"# NOW\n"
    assert files.read_bytes(tmp_path, "NOW.md") is not first
