"""Real OpenCode (the npm package, pinned in agent-cli/opencode) against a loopback fake of the Chat Completions API,
in a repository set up by `gitmem init --agent opencode`:
- an interactive `opencode run` session, started from a plain shell (no gitmem on PATH): AGENTS.md's protocol
  reaches the model, and its calls of gitmem's MCP `log_entry` and `now_block` (from `opencode.json`) land an
  interactive entry and a NOW block;
- a scheduled `gitmem cycle` with the command backend running OpenCode in the bubblewrap box: the fake gets the
  key, the CLI holds a placeholder, the model runs a dump of everything the agent can see through OpenCode's bash
  tool and logs through the MCP server, no dump, commit or output holds the key, and the cycle's tokens are the
  fake's, read from `opencode run --format json`.
The provider is the human's (OPENCODE_CONFIG_CONTENT, tests/support/opencode_cli.py); nothing is downloaded at run
time. Skipped, loudly, only where npm cannot install OpenCode or bwrap cannot make namespaces."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.e2e.test_key_proxy_agent_clis import assert_no_key_anywhere, plant_dump
from tests.support import fake_chat_completions as fc
from tests.support import opencode_cli as oc
from tests.support.claude_cycle import commit_config, entries, make_project, pass_env, use_command
from tests.support.gitcli import git
from tests.support.nobody import bwrap_works
from tests.support.sessions import GITMEM

pytestmark = pytest.mark.slow
PLAIN = "/usr/local/bin:/usr/bin:/bin"


def test_opencode_started_outside_the_venv_writes_memory_through_gitmems_mcp_tools(tmp_path: Path,
                                                                                   git_env: None) -> None:
    opencode = oc.opencode_or_skip()
    root, home = make_project(tmp_path, agent="opencode")
    (root / ".venv").symlink_to(Path(sys.prefix), target_is_directory=True)    # the venv the template makes
    assert shutil.which("gitmem", path=PLAIN) is None, "this test needs a PATH without gitmem"
    calls = (("log_entry", {"task": "answer from OpenCode", "outcome": "no-build",
                            "result": "no build: only answered a question"}),
             ("now_block", {"did": "answered from OpenCode", "human": "nothing", "next": "more"}))
    fake = fc.FakeChatAPI(fc.script(*calls))
    with fake.serve() as url:
        done = subprocess.run([str(opencode), "run", "What did the last cycle do?"], cwd=root,
                              env=oc.opencode_env(home, url, f"{opencode.parent}{os.pathsep}{PLAIN}"),
                              stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    turns = [body for body in fake.requests if fc.tool_names(body)]
    assert "## Memory: gitmem" in json.dumps(turns[0]), "AGENTS.md is OpenCode's project instructions"
    assert "gitmem_log_entry" in fc.tool_names(turns[0])
    assert "LOG.md: appended" in json.dumps(fc.tool_results(turns[-1]))
    assert {h.get("authorization") for h in fake.headers} == {f"Bearer {oc.KEY}"}
    last = entries(root)[-1]
    assert (last.cycle, last.get("Task"), last.interactive) == (2, "answer from OpenCode", True)
    assert "answered from OpenCode" in (root / "NOW.md").read_text()
    assert git(root, "status", "--porcelain", "--", "opencode.json", "AGENTS.md") == ""
    assert not list(home.rglob("node_modules")), "no provider or plugin was installed at run time"


@pytest.mark.skipif(not bwrap_works([]), reason="bwrap is not installed or cannot create namespaces here "
                                                "(.ci/run installs bubblewrap)")
def test_a_scheduled_cycle_runs_opencode_in_the_box_with_a_placeholder_for_the_key(tmp_path: Path,
                                                                                  git_env: None) -> None:
    opencode = oc.opencode_or_skip()
    root, home = make_project(tmp_path, "opencode")
    plant_dump(root)
    use_command(root, f"{opencode.parent}/{oc.CYCLE_COMMAND}", sandbox="bubblewrap")
    pass_env(root, *oc.PASS_ENV)
    commit_config(root)
    calls = (("bash", {"command": "sh dump.sh", "description": "dump"}),
             ("log_entry", {"task": "dump", "outcome": "built", "result": "dumped", "evidence": "sh dump.sh"}))
    fake = fc.FakeChatAPI(fc.script(*calls))
    with fake.serve() as url:
        env = oc.opencode_env(home, url, f"{GITMEM.parent}{os.pathsep}{PLAIN}")
        done = subprocess.run([str(GITMEM), "cycle", "--json"], cwd=root, env=env, capture_output=True, text=True,
                              timeout=300)
    assert done.returncode == 0, (done.stderr[-3000:], done.stdout[-3000:])
    report = json.loads(done.stdout)
    assert (report["outcome"], report["task"]) == ("built", "dump"), (report, done.stderr[-3000:])
    assert fake.headers and {h.get("authorization") for h in fake.headers} == {f"Bearer {oc.KEY}"}
    assert "model key: the agent holds a placeholder for OPENAI_API_KEY" in done.stderr
    assert "0000" in json.dumps([fc.tool_results(body) for body in fake.requests]), "the model read the dump"
    assert_no_key_anywhere(root, oc.KEY, json.dumps(fake.requests), done.stderr, done.stdout)
    assert entries(root)[-1].cycle == 2 and not entries(root)[-1].interactive
    steps = [body for body in fake.requests if fc.tool_names(body)]    # the session's title is not a step
    assert (report["tokens"]["input_tokens"], report["tokens"]["output_tokens"]) == (
        fc.USAGE["prompt_tokens"] * len(steps), fc.USAGE["completion_tokens"] * len(steps)), report["tokens"]
