"""Proofs kept under the user's cache folder (gitmem.workspace.proofs) are read as the project reads a trusted
file: never through a FIFO or a device, which would block the reader or feed it forever, and never past the bound
the writer can produce."""
from __future__ import annotations

import os
import subprocess
import sys
import tracemalloc
from pathlib import Path

import pytest

from gitmem.workspace import proofs


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    return tmp_path / "cache"


def test_a_fifo_at_the_proofs_path_is_no_proof_and_does_not_block(tmp_path: Path, cache: Path) -> None:
    where = proofs.proofs_file(tmp_path, "memo")
    where.parent.mkdir(parents=True)
    os.mkfifo(where)
    reader = ("from pathlib import Path; from gitmem.workspace import proofs; "
              f"print(proofs.read_proofs(Path({str(tmp_path)!r}), 'memo', max_bytes=1024))")
    done = subprocess.run([sys.executable, "-c", reader], env={**os.environ, "XDG_CACHE_HOME": str(cache)},
                          capture_output=True, text=True, timeout=30)
    assert done.returncode == 0 and done.stdout == "{}\n", done.stdout + done.stderr


def test_a_proofs_file_past_its_bound_is_no_proof_and_is_not_read_whole(tmp_path: Path, cache: Path) -> None:
    proofs.keep_proofs(tmp_path, "memo", {"a": "b"})
    assert proofs.read_proofs(tmp_path, "memo", max_bytes=1024) == {"a": "b"}
    where = proofs.proofs_file(tmp_path, "memo")
    with where.open("r+b") as grown:
        grown.truncate(64 << 20)                 # sparse: 64 MB on paper, nothing on disk
    tracemalloc.start()
    try:
        found = proofs.read_proofs(tmp_path, "memo", max_bytes=1024)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert found == {} and peak < 1 << 20, peak
