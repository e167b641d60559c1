"""What the reaper costs a cycle: it asks libc for prctl six times a cycle, and finds libc once per process."""
from __future__ import annotations

import ctypes.util
import sys

import pytest

from gitmem.cycle import reaper


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="prctl is Linux's")
def test_the_reaper_finds_libc_once_per_process(monkeypatch: pytest.MonkeyPatch) -> None:
    # ctypes.util.find_library runs `ldconfig -p` as a process on every call: six of them a cycle, before.
    looked_for: list[str] = []
    find_library = ctypes.util.find_library
    monkeypatch.setattr(ctypes.util, "find_library", lambda name: looked_for.append(name) or find_library(name))
    reaper._libc.cache_clear()
    for _ in range(2):
        guard = reaper.Reaper().start()
        assert guard.subreaper
        assert guard.finish() == []
    assert looked_for == ["c"]
