"""A memory write where the system refuses writes says so (issue 22: inside `codex -s read-only`, gitmem said
"free some space or repair the file system"). Real read-only places: bubblewrap's `--ro-bind` of the whole
repository (gitmem's state directory missing, then present) and of LOG.md alone."""
from __future__ import annotations

import errno
import subprocess
import sys
from pathlib import Path

import pytest

from gitmem.confined import files
from tests.support.helpers import GitRepo
from tests.support.nobody import BWRAP, bwrap_works

GITMEM = Path(sys.executable).parent / "gitmem"
READ_ONLY = "the file system is read-only here (a read-only sandbox or mount)"
LOG_ADD = ["log", "add", "--task", "answer a question", "--outcome", "no-build", "--result", "no build: a question"]

pytestmark = pytest.mark.skipif(not bwrap_works([]), reason="bwrap cannot run here")


def in_box(root: Path, read_only: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """`gitmem ARGS` in `root`, with everything as it is but `read_only`, bound read-only over itself."""
    assert BWRAP is not None
    return subprocess.run([BWRAP, "--bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
                           "--ro-bind", str(read_only), str(read_only), str(GITMEM), *args],
                          cwd=root, capture_output=True, text=True, timeout=60)


@pytest.mark.parametrize("state", ["missing", "present"])
def test_a_read_only_repository_says_so_and_changes_nothing(memrepo: GitRepo, state: str) -> None:
    state_dir = memrepo.path / ".git" / "gitmem"
    if state == "missing":
        assert not state_dir.exists()
    else:
        assert subprocess.run([str(GITMEM), "log", "add", "--task", "first", "--outcome", "no-build", "--result",
                               "no build: first"], cwd=memrepo.path, capture_output=True).returncode == 0
        assert (state_dir / "write.lock").exists()
    before = memrepo.read("LOG.md")
    done = in_box(memrepo.path, memrepo.path, *LOG_ADD)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.count("\n") == 1 and done.stderr.startswith(f"gitmem: {state_dir}"), done.stderr
    assert READ_ONLY in done.stderr and "`-s workspace-write`" in done.stderr
    assert "free some space" not in done.stderr and "rm -r" not in done.stderr
    assert memrepo.read("LOG.md") == before


def test_a_read_only_memory_file_is_named_with_the_same_cause(memrepo: GitRepo) -> None:
    before = memrepo.read("LOG.md")
    done = in_box(memrepo.path, memrepo.path / "LOG.md", *LOG_ADD)
    assert done.returncode == 2
    assert done.stderr == f"gitmem: LOG.md cannot be opened: {READ_ONLY}; nothing was changed; {files.READ_ONLY_FIX}\n"
    assert memrepo.read("LOG.md") == before


def test_each_cause_has_its_own_words() -> None:
    """The errno map's other causes, which no test here can make for real (a full disk, a Landlock refusal)."""
    def said(code: int, *, mode_allows: bool = False) -> str:
        found = files.os_reason(OSError(code, "x"), mode_allows=mode_allows)
        return found[0] if found else ""

    assert said(errno.ENOSPC).startswith("no space is left") and said(errno.EDQUOT).startswith("no space")
    assert "sandbox or security policy" in said(errno.EACCES, mode_allows=True)
    assert said(errno.EACCES) == "" and said(errno.EIO) == "", "left to the caller: chmod, or repair the disk"
