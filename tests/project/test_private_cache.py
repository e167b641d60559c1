"""Every test runs with gitmem's cache in a folder of its session (tests/conftest.py, `private_cache`): close and
status tests wrote their memos under the user's ~/.cache/gitmem."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from gitmem import gitio


def test_gitmem_s_cache_is_the_session_s_in_the_test_and_in_what_it_starts(private_cache: Path) -> None:
    user = Path.home() / ".cache" / "gitmem"
    here = gitio.cache_home(os.environ)
    started = subprocess.run([sys.executable, "-c", "import os; from gitmem import gitio; "
                              "print(gitio.cache_home(os.environ))"], capture_output=True, text=True, check=True)
    assert here == private_cache / "gitmem" and Path(started.stdout.strip()) == here
    assert not here.is_relative_to(user) and here != user
