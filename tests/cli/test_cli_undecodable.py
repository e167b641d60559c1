"""A CLI argument that is not UTF-8 (the shell passes any bytes; Python hands them over as lone surrogates) is
a usage error naming the argument, for every command, before any of them runs: never a traceback, never a
half-written memory file."""
from __future__ import annotations

import subprocess
import sys

import pytest

from gitmem.errors import ExitCode
from tests.support.helpers import GitRepo

BAD = b"t\xff".decode("utf-8", "surrogateescape")


@pytest.mark.parametrize("argv", [
    ["log", "add", "--task", BAD, "--outcome", "built", "--result", "r"],
    ["now", "add", "--did", BAD, "--human", "h", "--next", "n"],
    ["decision", "ask", "--title", BAD, "--recommendation", "r"],
    ["lesson", "add", "--title", "t", "--happened", BAD, "--why", "w", "--change", "c"],
    ["recall", BAD],
], ids=["log add", "now add", "decision ask", "lesson add", "recall"])
def test_a_non_utf8_argument_is_a_usage_error(cli, memrepo: GitRepo, argv: list[str]) -> None:
    before = {name: memrepo.read(name) for name in ("LOG.md", "NOW.md", "DECISIONS.md", "LESSONS.md")}
    result = cli(argv, cwd=memrepo.path)
    assert result.code == ExitCode.USAGE, result.err
    position = argv.index(BAD) + 1
    assert result.err == f"gitmem: argument {position} is not UTF-8 text: 't\\xff'; gitmem reads and writes " \
                         "UTF-8 only\n"
    assert {name: memrepo.read(name) for name in before} == before


def test_from_the_shell_too(memrepo: GitRepo) -> None:
    gitmem = [sys.executable, "-m", "gitmem"]
    done = subprocess.run([*gitmem, "log", "add", "--task", b"t\xff", "--outcome", "built", "--result", "r"],
                          cwd=memrepo.path, capture_output=True)
    assert done.returncode == ExitCode.USAGE
    assert b"Traceback" not in done.stderr and b"argument 4 is not UTF-8 text" in done.stderr
