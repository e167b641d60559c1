"""Real GitHub Copilot CLI (the npm package, pinned in agent-cli/copilot) against a loopback fake of its model
provider (tests.support.copilot_cli), in a repository set up by `gitmem init --agent copilot`:
- the files init writes are the ones Copilot CLI reads, as its own `copilot mcp list --json` and `copilot
  instruction list` report them (the workspace `.mcp.json`, once the folder is trusted, and AGENTS.md), and its
  hooks (`.github/hooks/gitmem.json`) give the session the memory and hold it to Rule 0;
- started from a plain shell (no gitmem on PATH), a prompt-mode session gets AGENTS.md's protocol and writes an
  interactive LOG entry and a NOW block through gitmem's MCP tools;
- a scheduled `gitmem cycle` runs it with the command backend in the bubblewrap box, holding a placeholder for
  its provider key while the fake gets the real one.
Skipped, loudly, only where npm cannot install Copilot CLI (or bwrap cannot make namespaces, for the box)."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from gitmem.scaffold.agent_clis import SERVER_SPEC
from gitmem.scaffold.copilot_recipe import COPILOT_CYCLE_COMMAND, COPILOT_PASS_ENV
from tests.e2e.test_codex import GITMEM
from tests.e2e.test_key_proxy_agent_clis import LOG_ADD, assert_no_key_anywhere, plant_dump
from tests.support import copilot_cli as cp
from tests.support import fake_openai as fo
from tests.support.claude_cycle import MARKER, commit_config, entries, make_project, pass_env, use_command
from tests.support.nobody import bwrap_works

pytestmark = pytest.mark.slow
PLAIN = "/usr/local/bin:/usr/bin:/bin"


@pytest.fixture(scope="module")
def copilot() -> Path:
    return cp.copilot_or_skip()


def _plain_project(tmp_path: Path) -> tuple[Path, Path]:
    root, home = make_project(tmp_path, agent="copilot")
    (root / ".venv").symlink_to(Path(sys.prefix), target_is_directory=True)    # the venv the template makes
    assert shutil.which("gitmem", path=PLAIN) is None, "this test needs a PATH without gitmem"
    return root, home


def test_copilot_reads_the_mcp_server_and_the_instructions_init_writes(copilot: Path, tmp_path: Path,
                                                                       git_env: None) -> None:
    root, home = _plain_project(tmp_path)
    env = cp.copilot_env(home, "http://127.0.0.1:9/v1", PLAIN)
    untrusted = subprocess.run([str(copilot), "mcp", "list", "--json"], cwd=root, env=env, capture_output=True,
                               text=True, timeout=120)
    assert "gitmem" not in untrusted.stdout, "an untrusted folder's servers do not load: the trust step says so"
    trusted = subprocess.run([str(copilot), "mcp", "list", "--json"], cwd=root,
                             env={**env, "COPILOT_ALLOW_ALL": "true"}, capture_output=True, text=True, timeout=120)
    assert trusted.returncode == 0, trusted.stderr
    server = json.loads(trusted.stdout)["mcpServers"]["gitmem"]
    assert (server["command"], server["args"]) == (SERVER_SPEC["command"], SERVER_SPEC["args"])
    assert (server["source"], Path(server["sourcePath"]).name, server["enabled"]) == ("workspace", ".mcp.json", True)
    listed = subprocess.run([str(copilot), "instruction", "list"], cwd=root, env=env, capture_output=True, text=True,
                            timeout=120)
    assert "AGENTS.md" in listed.stdout, listed.stdout + listed.stderr


def test_copilot_started_outside_the_venv_writes_memory_through_gitmems_mcp_tools(copilot: Path, tmp_path: Path,
                                                                                  git_env: None) -> None:
    root, home = _plain_project(tmp_path)
    fake = fo.FakeResponsesAPI(cp.script(
        ("gitmem-log_entry", {"task": "answer from Copilot CLI", "outcome": "no-build",
                              "result": "no build: only answered a question"}),
        ("gitmem-now_block", {"did": "answered from Copilot CLI", "human": "nothing", "next": "more"})))
    with fake.serve() as url:
        done = subprocess.run([str(copilot), "-p", "What did the last cycle do?", "--trust-folder",
                               "--allow-all-tools", "--no-auto-update"], cwd=root, env=cp.copilot_env(home, url, PLAIN),
                              capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert fake.requests, "Copilot CLI asked the fake, not GitHub"
    assert "## Memory: gitmem" in cp.instructions(fake.requests[0]), "AGENTS.md reaches the model"
    answered = fo.outputs(fake.requests[-1])
    assert "LOG.md: appended" in json.dumps(answered), answered
    last = entries(root)[-1]
    assert (last.cycle, last.get("Task"), last.interactive) == (2, "answer from Copilot CLI", True)
    assert "answered from Copilot CLI" in (root / "NOW.md").read_text()
    assert {h.get("authorization") for h in fake.headers} == {f"Bearer {cp.KEY}"}


def test_copilots_hooks_give_the_memory_at_start_and_hold_the_session_to_rule_0_at_stop(
        copilot: Path, tmp_path: Path, git_env: None) -> None:
    """`.github/hooks/gitmem.json`: the sessionStart hook's context (the NOW block make_project planted) reaches
    the model; the session changes a file without logging, the agentStop hook blocks once with the reason, and
    the model logs through MCP."""
    root, home = _plain_project(tmp_path)

    def respond(body: dict[str, Any]) -> list[fo.Item]:
        done = fo.outputs(body)
        if not done:
            return [fo.function_call("bash", {"command": "echo hi > notes.txt", "description": "note"}, "call_0")]
        if "gitmem Rule 0" in fo.request_text(body) and len(done) == 1:
            return [fo.function_call("gitmem-log_entry", {"task": "wrote notes.txt", "outcome": "built",
                                                          "result": "notes.txt says hi"}, "call_1")]
        return [fo.message("done")]

    fake = fo.FakeResponsesAPI(respond)
    with fake.serve() as url:
        done = subprocess.run([str(copilot), "-p", "Write a note.", "--trust-folder", "--allow-all-tools",
                               "--no-auto-update"], cwd=root, env=cp.copilot_env(home, url, PLAIN),
                              capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert MARKER in fo.request_text(fake.requests[0]), "the session-start hook's memory reached the model"
    told = [body for body in fake.requests if "gitmem Rule 0" in fo.request_text(body)]
    assert told and "notes.txt" in fo.request_text(told[0]), "the stop hook blocked once, naming the change"
    last = entries(root)[-1]
    assert (last.get("Task"), last.interactive) == ("wrote notes.txt", True)


@pytest.mark.skipif(not bwrap_works([]), reason="bwrap is not installed or cannot create namespaces here (.ci/run "
                                                "installs bubblewrap)")
def test_a_scheduled_copilot_cycle_in_the_box_holds_a_placeholder_and_the_provider_gets_the_key(
        copilot: Path, tmp_path: Path, git_env: None) -> None:
    """The command init's step names, in the box: the provider's key goes through the runner's loopback endpoint
    (COPILOT_PROVIDER_BASE_URL points there), the model has Copilot CLI run a dump of every environment it can
    see, then `gitmem log add` in its shell, then `gitmem-now_block` through MCP."""
    root, home = make_project(tmp_path, agent="copilot")
    plant_dump(root)
    use_command(root, f"{copilot.parent / 'copilot'} {COPILOT_CYCLE_COMMAND.removeprefix('copilot ')}",
                sandbox="bubblewrap")
    pass_env(root, *COPILOT_PASS_ENV, "COPILOT_AUTO_UPDATE", "CI")
    commit_config(root)
    fake = fo.FakeResponsesAPI(cp.script(
        ("bash", {"command": "sh dump.sh", "description": "dump"}),
        ("bash", {"command": LOG_ADD, "description": "log"}),
        ("gitmem-now_block", {"did": "dumped from a Copilot cycle", "human": "nothing", "next": "more"})))
    with fake.serve() as url:
        env = cp.copilot_env(home, url, f"{GITMEM.parent}{os.pathsep}{PLAIN}")
        done = subprocess.run([str(GITMEM), "cycle", "--json"], cwd=root, env=env, capture_output=True, text=True,
                              timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout)
    assert (report["outcome"], report["task"]) == ("built", "dump"), (report, done.stderr[-3000:])
    assert "model key: the agent holds a placeholder for COPILOT_PROVIDER_API_KEY" in done.stderr
    assert fake.headers and {h.get("authorization") for h in fake.headers} == {f"Bearer {cp.KEY}"}
    assert "0000" in json.dumps([fo.outputs(body) for body in fake.requests]), "the model read the dump"
    assert "dumped from a Copilot cycle" in (root / "NOW.md").read_text()
    assert "sandbox: bubblewrap" in (entries(root)[-1].get("Evidence") or "")
    assert_no_key_anywhere(root, cp.KEY, json.dumps(fake.requests), done.stderr, done.stdout)
