"""The package type-checks with mypy (configured in pyproject.toml), so CI catches type drift."""
from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.untraced import untraced_environ

ROOT = Path(__file__).resolve().parents[2]
CHECKOUT_CACHE = ROOT / ".mypy_cache"       # where `.ci/lint`'s mypy (run before the tests in CI) keeps its cache


@pytest.mark.slow
def test_mypy_finds_no_errors_in_the_package(tmp_path: Path) -> None:
    pytest.importorskip("mypy")
    # A copy of the checkout's cache, when there is one: mypy re-checks what changed since (its incremental mode
    # keys each module by its source's hash), so the verdict is a cold run's, without type-checking the whole
    # package a second time after `.ci/lint` (about 23 s of CPU); the checkout's own cache is left as it was.
    cache = tmp_path / "cache"
    if CHECKOUT_CACHE.is_dir():
        shutil.copytree(CHECKOUT_CACHE, cache, symlinks=True)
    # Untraced by coverage: mypy reads gitmem's source and runs none of it.
    done = subprocess.run([sys.executable, "-m", "mypy", "gitmem", "--cache-dir", str(cache)],
                          cwd=ROOT, env=untraced_environ(), capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Success: no issues found" in done.stdout
