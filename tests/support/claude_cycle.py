"""Real Claude Code driven by a script, in a repository from `gitmem init --agent claude`: the project, the
scripted model (`tool_script`), and a `gitmem cycle` run with the `command` backend against the loopback fake
(`run_cycle`, as the test's user or, given `nobody_bin`, as `nobody`). tests/e2e/test_claude_code.py and
tests/e2e/test_claude_code_sandbox.py share them."""
from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

from gitmem.memory import log
from gitmem.memory_writer import MemoryWriter
from gitmem.scaffold.init import init
from gitmem.workspace import Workspace
from tests.support import claude_code as cc
from tests.support.gitcli import git
from tests.support.helpers import AGENT, fill_in_rules, with_command_backend
from tests.support.nobody import NOBODY
from tests.support.sessions import GITMEM

MARKER = "planted-by-the-test-zebra-42"
CYCLE_CALLS = ({"name": "Bash", "input": {"command": 'gitmem log add --task "write notes.md" --outcome built '
                                                     '--result "notes.md written" --evidence "cat notes.md"',
                                          "description": "log"}},
               {"name": "Bash", "input": {"command": 'gitmem now add --did "notes.md" --human "nothing" '
                                                     '--next "more notes"', "description": "now"}})


def make_project(place: Path, agent: str = "claude") -> tuple[Path, Path]:
    """A memory repository from `gitmem init --agent AGENT` in `place/agent`, committed by its human, with a
    cycle behind it; and the agent CLI's HOME, `place/home`."""
    root, home = place / "agent", place / "home"
    home.mkdir()
    assert init(root, [agent]).problems == []
    fill_in_rules(root)
    memory = MemoryWriter(Workspace.at(root), author_email=AGENT[1])
    memory.add_log_entry(task="ship hello.py", outcome="built", result="hello.py prints hi", cycle=1)
    memory.add_now_block(did=f"shipped hello.py ({MARKER})", human="nothing", next="tests", cycle=1)
    memory.ask_decision(title="Publish to PyPI?", recommendation="yes", cycle=1)
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", f"memory from gitmem init --agent {agent}")
    return root, home


def tool_script(*calls: dict[str, Any], finish: str = "done") -> cc.Responder:
    """A model that makes `calls` in order, one per turn, then finishes. A call answered "still connecting" (the
    MCP server is starting), or refused as no such tool (Claude Code had not connected the server yet: a loaded
    machine), is retried after WaitForMcpServers, as the error tells the model to do."""
    def respond(body: dict[str, Any]) -> dict[str, Any]:
        last, turn = cc.last_result(body), len(body.get("messages", []))
        step = 0
        if last is not None:
            kind, number = last[0].split("_")[1:3]
            step = int(number) + (kind == "call")
            if kind == "call" and ("still connecting" in last[1] or "No such tool available: mcp__" in last[1]):
                return cc.tool_use("WaitForMcpServers", {}, f"toolu_wait_{step - 1}_{turn}")
        if step < len(calls):
            return cc.tool_use(calls[step]["name"], calls[step]["input"], f"toolu_call_{step}_{turn}")
        return cc.text(finish)
    return respond


def entries(root: Path) -> list[log.LogEntry]:
    return list(log.parse((root / "LOG.md").read_text()).entries)


def use_command(root: Path, command: str, *, sandbox: str = "none") -> None:
    config = root / "gitmem.yaml"
    config.write_text(with_command_backend(config.read_text(), command, sandbox=sandbox))


def pass_env(root: Path, *names: str) -> None:
    """Name `names` in the repository's agent.pass_env, as a user does in gitmem.yaml."""
    config = root / "gitmem.yaml"
    listed = "".join(f"    - {name}\n" for name in names)
    config.write_text(config.read_text().replace("  pass_env:\n", f"  pass_env:\n{listed}", 1))


def commit_config(root: Path) -> None:
    git(root, "commit", "-q", "-am", "use Claude Code for cycles")


def run_cycle(root: Path, home: Path, claude: Path, respond: cc.Responder, *,
              nobody_bin: Path | None = None) -> tuple[dict[str, Any], Any]:
    """`gitmem cycle --json` with `claude` on PATH against a fake API answering `respond`; (its report, (the
    fake, its stderr)). As the test's user it commits the config first; as `nobody` (`nobody_bin`: the bin
    directory of `venv_for_nobody`, first on PATH) the caller has committed it before handing the tree over."""
    fake = cc.FakeClaudeAPI(respond)
    with fake.serve() as url:
        env = cc.claude_env(home, url)
        env["PATH"] = os.pathsep.join([*([str(nobody_bin)] if nobody_bin else []), str(claude.parent), env["PATH"]])
        if nobody_bin is None:
            commit_config(root)
        argv = [*NOBODY, str(nobody_bin / "gitmem")] if nobody_bin else [str(GITMEM)]
        done = subprocess.run([*argv, "cycle", "--json"], cwd=root, env=env, capture_output=True, text=True,
                              timeout=300)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout), (fake, done.stderr)
