"""Every path gitmem reaches in the work tree is reached one way (gitmem.confined.files: one component at a time
from the root, O_NOFOLLOW, by directory fds): also putting paths back as HEAD has them (gitio.restore_paths, which
walked with lstat and then used the path, so a link swapped in between was followed) and writing a report page
(`gitmem report`, which truncated the file in place, so a hard link the agent made there took the page too)."""
from __future__ import annotations

import os
import threading
import time
from pathlib import Path

from gitmem import gitio
from gitmem.confined import files
from tests.support.helpers import GitRepo


def _flip(folder: Path, real: Path, outside: Path, stop: threading.Event) -> None:
    """Swap `folder` between a real directory of the tree and a link to `outside`, as fast as it goes."""
    while not stop.is_set():
        try:
            os.rename(folder, real)
            folder.symlink_to(outside)
            os.unlink(folder)
            os.rename(real, folder)
        except OSError:
            continue


def test_a_link_swapped_in_on_the_way_is_never_followed_when_paths_are_put_back(memrepo: GitRepo,
                                                                                tmp_path: Path) -> None:
    """Failed before (a race, lost within a second here): `no_link_on_the_way` saw a folder, then the agent's
    link stood there when the path was removed, and the file outside the tree went. A put-back that finds the
    folder gone or replaced mid-way may fail (an OSError, as any file operation raced by another process); what
    must hold is that nothing outside the tree is written or removed."""
    outside = tmp_path / "outside"
    outside.mkdir()
    memrepo.write("notes/kept.txt", "committed\n")
    memrepo.stage("notes/kept.txt")
    memrepo.commit("notes")
    repo = memrepo.handle
    stop = threading.Event()
    flipper = threading.Thread(target=_flip, args=(memrepo.path / "notes", memrepo.path / "notes.real", outside,
                                                   stop), daemon=True)
    flipper.start()
    try:
        deadline = time.monotonic() + 1.5
        while time.monotonic() < deadline:
            (outside / "victim.txt").write_text("the human's\n")
            (outside / "kept.txt").write_text("the human's\n")
            try:
                gitio.restore_paths(repo, ["notes/victim.txt", "notes/kept.txt"])
            except OSError:
                pass        # the folder was swapped mid-way and the put-back refused: it never goes through the link
            assert (outside / "victim.txt").read_text() == "the human's\n"
            assert (outside / "kept.txt").read_text() == "the human's\n"
    finally:
        stop.set()
        flipper.join()


def test_putting_back_replaces_a_planted_link_or_file_on_the_way(memrepo: GitRepo, tmp_path: Path) -> None:
    """As before (the lstat walk did this too, when nothing moved meanwhile)."""
    outside = tmp_path / "outside"
    outside.mkdir()
    memrepo.write("a/b/c.txt", "c\n")
    memrepo.write("d/e.txt", "e\n")
    memrepo.stage("a/b/c.txt", "d/e.txt")
    memrepo.commit("tree")
    for rel in ("a/b/c.txt", "d/e.txt"):
        os.unlink(memrepo.path / rel)
    os.rmdir(memrepo.path / "a" / "b")
    (memrepo.path / "a" / "b").symlink_to(outside)
    os.rmdir(memrepo.path / "d")
    (memrepo.path / "d").write_text("a file where a folder was\n")
    gitio.restore_paths(memrepo.handle, ["a/b/c.txt", "d/e.txt"])
    assert (memrepo.path / "a/b/c.txt").read_text() == "c\n" and not (memrepo.path / "a/b").is_symlink()
    assert (memrepo.path / "d/e.txt").read_text() == "e\n"
    assert list(outside.iterdir()) == []


def test_a_plain_way_is_judged_by_the_same_walk(memrepo: GitRepo, tmp_path: Path) -> None:
    """The check the cycle's ignore-file and secret-name steps make (a planted link or file on the way)."""
    memrepo.write("a/b/c.txt", "c\n")
    assert files.plain_way(memrepo.path, "a/b/c.txt") and files.plain_way(memrepo.path, "x/y/z")
    (memrepo.path / "link").symlink_to(tmp_path)
    (memrepo.path / "file").write_text("f\n")
    assert not files.plain_way(memrepo.path, "link/z") and not files.plain_way(memrepo.path, "file/z")


def test_the_report_page_replaces_a_hard_link_instead_of_writing_through_it(memrepo: GitRepo, cli,
                                                                            tmp_path: Path) -> None:
    """Failed before: the page was truncated and written in place, so a hard link to a file of the human's
    (an agent can make one at .git/gitmem/report.html's place) took the page's bytes."""
    theirs = memrepo.path / "human.txt"
    theirs.write_text("the human's own file\n")
    page = memrepo.path / "page.html"
    os.link(theirs, page)
    done = cli(["report", "--out", str(page)], cwd=memrepo.path)
    assert done.code == 0, done.err
    assert theirs.read_text() == "the human's own file\n"
    assert "<html" in page.read_text().lower() and os.stat(page).st_nlink == 1
    page.unlink()
    page.symlink_to(theirs)
    refused = cli(["report", "--out", str(page)], cwd=memrepo.path)
    assert refused.code == 2 and "a link is in the way" in refused.err
    assert theirs.read_text() == "the human's own file\n"
