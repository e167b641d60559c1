"""Shared checks for the hostile-input suites: the contract every hostile case asserts.

Exit code as documented, no traceback, nothing outside the work tree (or inside `.git`) touched, nothing of the
human's lost. Files are compared by content, so a test can take a picture before and after.
"""
from __future__ import annotations

from pathlib import Path

from tests.support.helpers import CliResult


def picture(root: Path, *, skip: tuple[str, ...] = (".git/objects", ".git/gitmem", ".git/logs")) -> dict[str, bytes]:
    """Every regular file under `root` (relative path -> bytes), minus the parts git and gitmem rewrite freely."""
    found: dict[str, bytes] = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root).as_posix()
        if path.is_file() and not path.is_symlink() and not rel.startswith(skip):
            found[rel] = path.read_bytes()
    return found


def changed(before: dict[str, bytes], after: dict[str, bytes]) -> set[str]:
    return {rel for rel in before.keys() | after.keys() if before.get(rel) != after.get(rel)}


def refused(result: CliResult, code: int) -> CliResult:
    """The command failed the documented way: exit `code`, a message, and no traceback anywhere."""
    assert result.code == code, f"exit {result.code}, not {code}:\n{result.out}{result.err}"
    assert "Traceback" not in result.out + result.err, result.err
    assert (result.out + result.err).strip(), "a refusal must say why"
    return result


def one_line_error(result: CliResult, code: int = 2) -> str:
    """A usage or config error: exit `code`, nothing on stdout, one `gitmem: …` line on stderr."""
    refused(result, code)
    lines = [line for line in result.err.splitlines() if line.strip()]
    assert result.out == "" and len(lines) == 1 and lines[0].startswith("gitmem: "), result.err
    return lines[0]
