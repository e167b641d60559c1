"""Real Qwen Code (the npm package, pinned in agent-cli/qwen-code) against a loopback fake of the Chat Completions
API, in a repository set up by `gitmem init --agent qwen`:
- an interactive `qwen -p` session, started from a plain shell (no gitmem on PATH) after the approval step init
  printed: AGENTS.md's protocol reaches the model, and its calls of gitmem's MCP `log_entry` and `now_block` land an
  interactive entry and a NOW block, with the committed settings left as init wrote them;
- a scheduled `gitmem cycle` with the command backend running Qwen Code in the bubblewrap box: the fake gets the
  key, the CLI holds a placeholder, the model runs a dump of everything the agent can see through Qwen Code's shell
  tool and logs through the MCP server, no dump, commit or output holds the key, and the cycle's tokens are the
  fake's, read from Qwen Code's JSON result.
Skipped, loudly, only where npm cannot install Qwen Code or bwrap cannot make namespaces."""
from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from gitmem.scaffold.agent_clis import QWEN_APPROVE_STEP
from tests.e2e.test_key_proxy_agent_clis import assert_no_key_anywhere, plant_dump
from tests.support import fake_chat_completions as fc
from tests.support import qwen_cli as qw
from tests.support.claude_cycle import commit_config, entries, make_project, pass_env, use_command
from tests.support.gitcli import git
from tests.support.nobody import bwrap_works
from tests.support.sessions import GITMEM

pytestmark = pytest.mark.slow
PLAIN = "/usr/local/bin:/usr/bin:/bin"
SESSION_CALLS = (("log_entry", {"task": "answer from Qwen Code", "outcome": "no-build",
                                "result": "no build: only answered a question"}),
                 ("now_block", {"did": "answered from Qwen Code", "human": "nothing", "next": "more"}))


def test_qwen_code_started_outside_the_venv_writes_memory_through_gitmems_mcp_tools(tmp_path: Path,
                                                                                     git_env: None) -> None:
    qwen = qw.qwen_or_skip()
    root, home = make_project(tmp_path, agent="qwen")
    (root / ".venv").symlink_to(Path(sys.prefix), target_is_directory=True)    # the venv the template makes
    assert shutil.which("gitmem", path=PLAIN) is None, "this test needs a PATH without gitmem"
    path = f"{qwen.parent}{os.pathsep}{PLAIN}"
    fake = fc.FakeChatAPI(fc.script(*SESSION_CALLS))
    with fake.serve() as url:
        env = qw.qwen_env(home, url, path)
        approve = shlex.split(re.search(r"`(qwen mcp approve [^`]+)`", QWEN_APPROVE_STEP).group(1))  # type: ignore[union-attr]
        approved = subprocess.run(approve, cwd=root, env=env, capture_output=True, text=True, timeout=120)
        assert approved.returncode == 0 and 'Approved MCP server "gitmem"' in approved.stdout, approved
        done = subprocess.run([str(qwen), "-p", "What did the last cycle do?", "--output-format", "json"],
                              cwd=root, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "## Memory: gitmem" in json.dumps(fake.requests[0]), "AGENTS.md is among Qwen Code's context files"
    assert "mcp__gitmem__log_entry" in fc.tool_names(fake.requests[0]), "the memory tools are declared, not deferred"
    assert "LOG.md: appended" in json.dumps(fc.tool_results(fake.requests[-1]))
    assert {h.get("authorization") for h in fake.headers} == {f"Bearer {qw.KEY}"}
    last = entries(root)[-1]
    assert (last.cycle, last.get("Task"), last.interactive) == (2, "answer from Qwen Code", True)
    assert "answered from Qwen Code" in (root / "NOW.md").read_text()
    assert git(root, "status", "--porcelain", "--", ".qwen", "AGENTS.md") == "", "the settings stay as init wrote them"


@pytest.mark.skipif(not bwrap_works([]), reason="bwrap is not installed or cannot create namespaces here "
                                                "(.ci/run installs bubblewrap)")
def test_a_scheduled_cycle_runs_qwen_code_in_the_box_with_a_placeholder_for_the_key(tmp_path: Path,
                                                                                   git_env: None) -> None:
    qwen = qw.qwen_or_skip()
    root, home = make_project(tmp_path, "qwen")
    plant_dump(root)
    use_command(root, f"{qwen.parent}/{qw.CYCLE_COMMAND}", sandbox="bubblewrap")
    pass_env(root, *qw.PASS_ENV)
    commit_config(root)
    calls = (("run_shell_command", {"command": "sh dump.sh"}),
             ("log_entry", {"task": "dump", "outcome": "built", "result": "dumped", "evidence": "sh dump.sh"}))
    fake = fc.FakeChatAPI(fc.script(*calls))
    with fake.serve() as url:
        env = qw.qwen_env(home, url, f"{GITMEM.parent}{os.pathsep}{PLAIN}")
        done = subprocess.run([str(GITMEM), "cycle", "--json"], cwd=root, env=env, capture_output=True, text=True,
                              timeout=300)
    assert done.returncode == 0, (done.stderr[-3000:], done.stdout[-3000:])
    report = json.loads(done.stdout)
    assert (report["outcome"], report["task"]) == ("built", "dump"), (report, done.stderr[-3000:])
    assert fake.headers and {h.get("authorization") for h in fake.headers} == {f"Bearer {qw.KEY}"}
    assert "model key: the agent holds a placeholder for OPENAI_API_KEY" in done.stderr
    assert "0000" in json.dumps([fc.tool_results(body) for body in fake.requests]), "the model read the dump"
    assert_no_key_anywhere(root, qw.KEY, json.dumps(fake.requests), done.stderr, done.stdout)
    assert entries(root)[-1].cycle == 2 and not entries(root)[-1].interactive
    turns = len(fake.requests) + len(fake.side_requests)     # Qwen Code's JSON result sums every model call
    assert (report["tokens"]["input_tokens"], report["tokens"]["output_tokens"]) == (
        fc.USAGE["prompt_tokens"] * turns, fc.USAGE["completion_tokens"] * turns), report["tokens"]
