"""Hostile agents, resources: a file's size is what it claims, not what it costs to make. `truncate -s 4T` makes
a sparse file in an instant (holes take no disk); the runner holds a file that big out of its commit and masks
secrets in what it holds, and reading four terabytes of holes took hours, past any job's timeout, leaving a
tree the next cycle refuses as dirty. Holes hold no bytes and no secret: only the data is read."""
from __future__ import annotations

from pathlib import Path

from gitmem import secrets
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


TOKEN = "ghp_" + "a1B2c3D4e5" * 3 + "f6G7h8"       # GitHub-shaped: masked wherever it is written
MIDDLE = 1 << 30


def _held(repo: GitRepo, name: str) -> Path:
    return next((repo.path / ".git" / "gitmem" / "held").rglob(f"{name}*"))


def _allocated(path: Path) -> int:
    return path.stat().st_blocks * 512


def test_a_secret_in_a_sparse_file_is_masked_without_reading_or_writing_its_holes(memrepo: GitRepo) -> None:
    """Failed before: the rewrite that masks the secret read every zero of the holes and wrote them all into a
    non-sparse `.scrub` copy (hours, and a full disk)."""
    read_edge = MIDDLE + secrets.CHUNK      # where the first read of the run of data at MIDDLE ends

    def grow(root: Path, memory, request) -> None:
        with (root / "disk.img").open("wb") as image:
            image.write(b"header\n")
            image.seek(MIDDLE)              # a secret cut in two by the reads: the overlap keeps it whole
            image.write(b"x" * (secrets.CHUNK - 20) + b" " + TOKEN.encode() + b" tail\n")
            image.seek(SIZE - 200)
            image.write(f"key {TOKEN}\n".encode())       # `truncate -s 4T f; echo "$SECRET" >> f`

    with deadline(60):
        report = cycle(memrepo, grow, clock=FixedClock())
    assert report.exit_code == ExitCode.OK, report.error
    kept = _held(memrepo, "disk.img")
    assert kept.name == "disk.img" and not list(kept.parent.glob("*.scrub")), "no copy is left beside it"
    assert _allocated(kept) < 64 << 20, f"the held copy stays sparse: {_allocated(kept)} bytes allocated"
    shrink = len(TOKEN) - len(secrets.MASK)          # each masked secret; the holes keep their length
    assert kept.stat().st_size == SIZE - 200 + len(f"key {TOKEN}\n") - 2 * shrink
    with kept.open("rb") as image:
        assert image.read(7) == b"header\n"
        image.seek(read_edge - 4096)
        around_edge = image.read(8192)
        image.seek(SIZE - 200 - shrink)
        tail = image.read()
    assert TOKEN.encode() not in around_edge and b" *** tail\n" in around_edge
    assert tail == f"key {secrets.MASK}\n".encode()


def test_a_wide_text_marker_before_a_hole_does_not_make_the_scrub_read_the_file_whole(memrepo: GitRepo) -> None:
    """Failed before: two bytes of a byte order mark made the scrub decode the file as UTF-16/32 text, read whole
    at its apparent size: a MemoryError the cycle did not expect, or terabytes read where memory allowed."""
    wide = TOKEN.encode("utf-32-le")        # `\xff\xfe` and the hole's zeros read as UTF-32's byte order mark

    def grow(root: Path, memory, request) -> None:
        with (root / "notes.txt").open("wb") as notes:
            notes.write(b"\xff\xfe")
            notes.seek(MIDDLE)              # the secret cut in two by the reads, as text and as bytes
            notes.write(("x" * (secrets.CHUNK // 4 - 10) + " ").encode("utf-32-le") + wide)
            notes.write(" tail\n".encode("utf-32-le"))
            notes.truncate(SIZE)

    with deadline(60):
        report = cycle(memrepo, grow, clock=FixedClock())
    assert report.exit_code == ExitCode.OK, report.error
    kept = _held(memrepo, "notes.txt")
    assert _allocated(kept) < 64 << 20, f"the held copy stays sparse: {_allocated(kept)} bytes allocated"
    with kept.open("rb") as notes:
        assert notes.read(4) == b"\xff\xfe\0\0"
        notes.seek(MIDDLE + secrets.CHUNK - 4096)
        middle = notes.read(8192)
    assert wide not in middle
    assert f"x {secrets.MASK} tail\n".encode("utf-32-le") in middle


KEY_LINES = [f"MIIEv{index:02d}QIBADANBgkqhkiG9w0BAQEFAASCBKgwggSk{index:02d}" for index in range(20)]


def test_a_private_key_with_a_hole_inside_it_is_masked_whole(tmp_path: Path) -> None:
    """A private key is masked from its BEGIN line to its END line. Each run of a sparse file's data is masked on its
    own (the holes are never read), so a key whose middle is a hole had its first half masked and its second half,
    base64 lines and END line, kept as written. The run that ends inside a key block now passes it on."""
    from gitmem.cycle.scrub import scrub_held

    held = tmp_path / "disk.img"
    with held.open("wb") as image:
        image.write(("-----BEGIN PRIVATE KEY-----\n" + "\n".join(KEY_LINES[:10]) + "\n").encode())
        image.seek(1 << 20)                 # a hole of about a MiB: two runs of data
        image.write(("\n".join(KEY_LINES[10:]) + "\n-----END PRIVATE KEY-----\nafter the key\n").encode())
    with deadline(30):
        assert scrub_held(held, ".git") is True
    with held.open("rb") as image:
        data = b"".join(image.read(4096) for _ in range(300)) + image.read()
    assert [line for line in KEY_LINES if line.encode() in data] == []
    assert b"after the key\n" in data and b"-----END PRIVATE KEY-----" not in data


def test_a_fifo_in_a_held_files_place_holds_no_one(tmp_path: Path) -> None:
    """The agent swaps a held file for a FIFO between the look at it and its open: the open does not wait for a
    writer that never comes."""
    import os

    from gitmem.cycle import scrub

    fifo = tmp_path / "notes.txt"
    os.mkfifo(fifo)
    with deadline(10):
        assert scrub._scrub_file(fifo, [], 0o644) is False
