"""Real Gemini CLI (the npm package, pinned in agent-cli/gemini-cli) against a loopback fake of the Gemini API, in a
repository set up by `gitmem init --agent gemini` and started from a plain shell (no gitmem on PATH): GEMINI.md's
protocol reaches the model, and its calls of gitmem's MCP `log_entry` and `now_block` land an interactive entry
and a NOW block. Skipped, loudly, only where npm cannot install Gemini CLI."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.support import gemini_cli as gc
from tests.support.claude_cycle import entries, make_project

pytestmark = pytest.mark.slow
PLAIN = "/usr/local/bin:/usr/bin:/bin"


def test_gemini_started_outside_the_venv_writes_memory_through_gitmems_mcp_tools(tmp_path: Path, git_env) -> None:
    gemini = gc.gemini_or_skip()
    root, home = make_project(tmp_path, agent="gemini")
    (root / ".venv").symlink_to(Path(sys.prefix), target_is_directory=True)    # the venv the template makes
    assert shutil.which("gitmem", path=PLAIN) is None, "this test needs a PATH without gitmem"
    calls = [("mcp_gitmem_log_entry", {"task": "answer from Gemini CLI", "outcome": "no-build",
                                       "result": "no build: only answered a question"}),
             ("mcp_gitmem_now_block", {"did": "answered from Gemini CLI", "human": "nothing", "next": "more"})]

    def respond(body: dict[str, Any]) -> list[dict[str, Any]]:
        step = len(gc.responses(body))
        if step < len(calls) and calls[step][0] in gc.declared(body):
            return [{"functionCall": {"name": calls[step][0], "args": calls[step][1]}}]
        return [{"text": "done"}]

    fake = gc.FakeGeminiAPI(respond)
    with fake.serve() as url:
        done = subprocess.run([str(gemini), "-p", "What did the last cycle do?", "--output-format", "json"],
                              cwd=root, env=gc.gemini_env(gc.gemini_home(home), url, PLAIN), capture_output=True,
                              text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    model_calls = [body for path, body in fake.requests if ":streamGenerateContent" in path]
    assert "## Memory: gitmem" in json.dumps(model_calls[0]), "GEMINI.md is Gemini CLI's context file"
    answered = [r["response"] for r in gc.responses(model_calls[-1])]
    assert "LOG.md: appended" in json.dumps(answered)
    last = entries(root)[-1]
    assert (last.cycle, last.get("Task"), last.interactive) == (2, "answer from Gemini CLI", True)
    assert "answered from Gemini CLI" in (root / "NOW.md").read_text()
