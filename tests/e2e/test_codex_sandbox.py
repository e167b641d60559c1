"""Real Codex in gitmem's bubblewrap box: the scheduled cycles of tests/e2e/test_codex.py with `agent.sandbox:
bubblewrap`. The recipe runs Codex without its own sandbox (`--sandbox danger-full-access`): gitmem's box is the
sandbox, and Codex's cannot start inside it (it will not put its helper under a CODEX_HOME in a temporary
directory, and the box's HOME is in its private /tmp). The human's CODEX_HOME, where the endpoint is set, is
named in agent.sandbox.writable; Codex's state stays out of the runner's HOME otherwise.

Skipped, loudly, only where npm cannot install Codex or bwrap cannot make namespaces."""
from __future__ import annotations

from pathlib import Path

import pytest

from tests.e2e.test_codex import MCP_CALLS, SHELL_CALLS, assert_built, cycle
from tests.support import codex_cli as cx
from tests.support.claude_cycle import entries, make_project
from tests.support.nobody import bwrap_works

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(not bwrap_works([]), reason="bwrap is not installed or cannot create namespaces "
                                                             "here (.ci/run installs bubblewrap)")]


@pytest.fixture(scope="module")
def codex() -> Path:
    return cx.codex_or_skip()


@pytest.mark.parametrize("calls", [SHELL_CALLS, MCP_CALLS], ids=["shell", "mcp"])
def test_a_codex_cycle_in_the_box_is_built(codex: Path, tmp_path: Path, git_env: None, calls) -> None:
    root, home = make_project(tmp_path, "codex")
    report, fake, _ = cycle(root, home, codex, cx.script(*calls), sandbox="bubblewrap")
    assert_built(root, report, fake)
    assert "sandbox: bubblewrap" in (entries(root)[-1].get("Evidence") or "")


def test_a_codex_cycle_in_the_box_without_the_key_names_it(codex: Path, tmp_path: Path, git_env: None) -> None:
    root, home = make_project(tmp_path, "codex")
    report, fake, _ = cycle(root, home, codex, cx.script(*SHELL_CALLS), key=False, sandbox="bubblewrap")
    assert report["outcome"] == "no-build" and fake.requests == []
    assert "Missing environment variable: `OPENAI_API_KEY`" in " ".join(entries(root)[-1].render().split())
