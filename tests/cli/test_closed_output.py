"""A closed stdout (`gitmem demo | head -1`: the reader is gone) ends every command quietly with 141, as git and
coreutils end when SIGPIPE stops them; never click's silent exit 1, which means violations."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from gitmem.errors import ExitCode
from tests.support.helpers import GitRepo


def _into_a_closed_pipe(argv: list[str], cwd: Path) -> subprocess.CompletedProcess[bytes]:
    """`gitmem ARGV | head -0` made certain: the pipe's read end is closed before gitmem writes a byte."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        return subprocess.run([sys.executable, "-m", "gitmem", *argv], cwd=cwd, stdout=write_end,
                              stderr=subprocess.PIPE, check=False)
    finally:
        os.close(write_end)


@pytest.mark.parametrize("argv", [["demo", "{tmp}/demo"], ["status"], ["context"], ["check", "--json"],
                                  ["log", "--help"], ["--version"]],
                         ids=["demo", "status", "context", "check --json", "group help", "version"])
def test_a_closed_stdout_ends_the_command_quietly_with_141(memrepo: GitRepo, tmp_path: Path,
                                                           argv: list[str]) -> None:
    done = _into_a_closed_pipe([word.format(tmp=tmp_path) for word in argv], memrepo.path)
    assert done.returncode == ExitCode.OUTPUT_CLOSED == 141, done.stderr
    assert done.stderr == b""


def test_the_same_command_with_its_reader_there_still_ends_0(memrepo: GitRepo) -> None:
    done = subprocess.run([sys.executable, "-m", "gitmem", "status"], cwd=memrepo.path, capture_output=True)
    assert done.returncode == ExitCode.OK and done.stdout, done.stderr
