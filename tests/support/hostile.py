"""Shared helpers of the hostile-input suites: odd things planted where gitmem expects a file, and the contract
every case asserts (an exit code, no traceback, one line naming the file, nothing outside the tree touched)."""
from __future__ import annotations

import hashlib
import os
import signal
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pygit2

from tests.support.helpers import CliResult

# What can stand where a regular file belongs. "outside" links point at a copy of the file outside the tree.
KINDS = ("link-outside", "link-inside", "link-loop", "link-dangling", "directory", "fifo", "submodule")


def plant(root: Path, rel: str, kind: str, outside: Path) -> None:
    """Replace `root/rel` by `kind`; a link-outside points at `outside/<name>`, a copy of the file."""
    target = root / rel
    target.parent.mkdir(parents=True, exist_ok=True)
    original = target.read_bytes() if target.is_file() and not target.is_symlink() else b"# planted\n"
    if os.path.lexists(target):
        target.unlink()
    if kind == "link-outside":
        outside.mkdir(parents=True, exist_ok=True)
        (outside / target.name).write_bytes(original)
        target.symlink_to(outside / target.name)
    elif kind == "link-inside":
        (root / f"copy-of-{target.name}").write_bytes(original)
        target.symlink_to(f"copy-of-{target.name}")
    elif kind == "link-loop":
        target.symlink_to(target.name)
    elif kind == "link-dangling":
        target.symlink_to(outside / "nothing-here" / target.name)
    elif kind == "directory":
        target.mkdir()
        (target / "inside.md").write_bytes(original)
    elif kind == "fifo":
        os.mkfifo(target)
    elif kind == "submodule":
        nested = pygit2.init_repository(str(target), initial_head="main")
        (target / "README.md").write_text("a nested repository\n", encoding="utf-8")
        assert nested is not None
    else:
        raise ValueError(kind)


def digest(path: Path) -> str:
    """A fingerprint of everything under `path` (names and bytes), to prove nothing outside the tree changed."""
    sha = hashlib.sha256()
    if not path.exists():
        return "absent"
    for item in sorted(path.rglob("*")):
        sha.update(str(item.relative_to(path)).encode())
        if item.is_file() and not item.is_symlink():
            sha.update(item.read_bytes())
    return sha.hexdigest()


def assert_clean_failure(result: CliResult, code: int, *names: str) -> None:
    """Exit `code`, no traceback anywhere, and (for exit 2) one stderr line naming every one of `names`."""
    both = result.out + result.err
    assert "Traceback" not in both, both
    assert result.code == code, both
    if code == 2:
        lines = [line for line in result.err.splitlines() if not line.startswith("warning:")]
        assert len(lines) == 1 and lines[0].startswith("gitmem: "), result.err
        assert all(name in lines[0] for name in names), result.err


@contextmanager
def deadline(seconds: int = 30) -> Iterator[None]:
    """Fail instead of hanging forever (a FIFO opened for reading blocks until a writer comes)."""
    def expired(signum: int, frame: object) -> None:
        raise TimeoutError(f"still running after {seconds}s: something blocked")

    previous = signal.signal(signal.SIGALRM, expired)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
