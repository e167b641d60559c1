"""A sparse file read as its runs of data: what the held-file scrub reads and writes, and nothing of the holes."""
from __future__ import annotations

import os
from pathlib import Path

from gitmem.cycle import holes

GIB = 1 << 30


def _ranges(path: Path) -> list[tuple[int, int]]:
    fd = os.open(path, os.O_RDONLY)
    try:
        return list(holes.data_ranges(fd, os.fstat(fd).st_size))
    finally:
        os.close(fd)


def test_a_sparse_file_reads_as_its_runs_of_data_and_an_empty_one_as_none(tmp_path: Path) -> None:
    sparse = tmp_path / "sparse.img"
    with sparse.open("wb") as image:
        image.write(b"head")
        image.seek(GIB)
        image.write(b"middle")
        image.truncate(4 * GIB)
    found = _ranges(sparse)
    assert [start for start, _ in found] == [0, GIB], found
    assert all(stop - start <= 1 << 20 for start, stop in found), "a run is what was written, not the holes"
    (tmp_path / "empty").write_bytes(b"")
    assert _ranges(tmp_path / "empty") == []


def test_a_file_written_whole_is_one_run_however_it_was_written(tmp_path: Path) -> None:
    whole = tmp_path / "whole.bin"
    with whole.open("wb") as out:
        for _ in range(8):
            out.write(os.urandom(1 << 18))
            out.flush()
    assert _ranges(whole) == [(0, 8 << 18)]


def test_a_range_reader_gives_no_byte_past_its_run(tmp_path: Path) -> None:
    path = tmp_path / "data"
    path.write_bytes(b"0123456789")
    fd = os.open(path, os.O_RDONLY)
    try:
        reader = holes.RangeReader(fd, 2, 7)
        assert [reader.read(3), reader.read(3), reader.read(3)] == [b"234", b"56", b""]
    finally:
        os.close(fd)
