"""An interactive session's start at 1x, 10x and 100x history, with RULES at its cap (issue 13).

The SessionStart hook prints the compact memory (gitmem.sessions.context); Claude Code replaces hook output over
about 10,000 characters with a 2 KB preview, so it must stay under 9,000 characters at any history size and
any RULES size. Measured: the library call, and the whole `gitmem hook session-start` process as Claude Code
runs it (JSON on stdin), in a working copy of each synthetic repository whose RULES is replaced by one at its
caps (200 lines, 30 proven rules of about 400 characters).

Run:  GITMEM_BENCH_SCALES=1,10,100 .venv/bin/pytest benchmarks/bench_session.py --benchmark-only -s
"""
from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from gitmem.sessions.context import LIMIT, session_context
from gitmem.workspace import Workspace
from tests.support.sessions import capped_rules
from tests.support.synth import SynthInfo
from tests.support.synth_copy import working_copy

GITMEM = Path(sys.executable).parent / "gitmem"


@pytest.fixture(scope="session")
def capped_copy(synth: SynthInfo, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    root = working_copy(synth, tmp_path_factory.mktemp(f"session-{synth.scale:g}x") / "repo")
    (root / "RULES.md").write_text(capped_rules(), encoding="utf-8")
    session_context(Workspace.open(root))       # warm: the one full LOG line count, then cached
    yield root


@pytest.mark.benchmark(group="session start: the compact context (library call)")
def test_session_context(benchmark, capped_copy: Path, synth: SynthInfo) -> None:
    text = benchmark(lambda: session_context(Workspace.open(capped_copy)))
    benchmark.extra_info.update(scale=synth.scale, characters=len(text))
    print(f"\n{synth.scale:g}x: session context {len(text)} characters (limit {LIMIT})")
    assert len(text) < LIMIT


@pytest.mark.benchmark(group="session start: `gitmem hook session-start`, whole process")
def test_session_start_hook_process(benchmark, capped_copy: Path, synth: SynthInfo) -> None:
    payload = json.dumps({"session_id": "bench", "cwd": str(capped_copy), "hook_event_name": "SessionStart",
                          "source": "startup"})

    def run() -> str:
        return subprocess.run([str(GITMEM), "hook", "session-start"], input=payload, cwd=capped_copy,
                              capture_output=True, text=True, check=True).stdout

    out = benchmark.pedantic(run, rounds=5, iterations=1)
    context = json.loads(out)["hookSpecificOutput"]["additionalContext"]
    benchmark.extra_info.update(scale=synth.scale, characters=len(context))
    assert len(context) < LIMIT
