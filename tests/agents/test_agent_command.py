"""The `command` backend with real subprocess agents that write memory through the `gitmem` CLI."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

import pytest

from gitmem.agents.base import AgentError
from gitmem.agents.command import CommandBackend
from gitmem.config import Config, Sandbox, load_config
from gitmem.cycle.budget import build_request
from gitmem.errors import ExitCode
from gitmem.memory import log, now
from gitmem.workspace import Workspace
from tests.support.cycle_support import file_at, head_commit, is_clean
from tests.support.helpers import GitRepo, script_command, with_command_backend

GITMEM = Path(sys.executable).parent / "gitmem"

GOOD_AGENT = f"""
import os, subprocess, sys
prompt = sys.stdin.read()
assert "This is cycle " + os.environ["GITMEM_CYCLE"] in prompt, prompt[-400:]
root = os.environ["GITMEM_ROOT"]
with open(os.path.join(root, "report.md"), "w") as handle:
    handle.write("cycle " + os.environ["GITMEM_CYCLE"] + " at " + os.environ["GITMEM_TIMESTAMP"] + "\\n")
gitmem = {str(GITMEM)!r}
subprocess.run([gitmem, "log", "add", "--task", "write report.md", "--outcome", "built",
                "--result", "report.md written", "--evidence", "wc -l report.md"], check=True, cwd=root)
subprocess.run([gitmem, "now", "add", "--did", "wrote report.md", "--human", "nothing",
                "--next", "extend it"], check=True, cwd=root)
print("done: report.md")
"""

CRASHING_AGENT = """
import os, sys
sys.stdin.read()
with open(os.path.join(os.environ["GITMEM_ROOT"], "half.md"), "w") as handle:
    handle.write("half of it\\n")
sys.stderr.write("Traceback: something broke in the agent\\n")
sys.exit(3)
"""

SLEEPING_AGENT = """
import os, sys, time
sys.stdin.read()
with open(os.path.join(os.environ["GITMEM_ROOT"], "partial.md"), "w") as handle:
    handle.write("partial work of cycle " + os.environ["GITMEM_CYCLE"] + "\\n")
with open(sys.argv[1], "w") as handle:
    handle.write(str(os.getpid()))
time.sleep(60)
"""


def _agent(tmp_path: Path, repo: GitRepo, source: str, *args: str, timeout: int | None = None) -> Path:
    """Write the agent script outside the repo and point gitmem.yaml's command backend at it."""
    script = tmp_path / f"agent_{abs(hash(source))}.py"
    script.write_text(source)
    text = with_command_backend(repo.read("gitmem.yaml"), script_command(script, *args))
    if timeout is not None:
        text = text.replace("  max_context_tokens: 60000\n", f"  max_context_tokens: 60000\n  timeout: {timeout}\n")
    repo.commit_files({"gitmem.yaml": text}, "use a command agent")
    return script


def test_a_cli_agent_writes_memory_and_the_runner_commits_it(tmp_path, memrepo, cli) -> None:
    _agent(tmp_path, memrepo, GOOD_AGENT)
    result = cli(["cycle", "--json"], cwd=memrepo.path)
    assert result.code == ExitCode.OK, result.err
    report = json.loads(result.out)
    assert (report["cycle"], report["outcome"], report["task"]) == (1, "built", "write report.md")
    commit = head_commit(memrepo)
    assert str(commit.id) == report["commit"]
    assert commit.message.startswith("gitmem: cycle 1 · built · write report.md\n")
    assert file_at(memrepo.repo, "HEAD", "report.md").startswith("cycle 1 at ")
    entry = log.parse(memrepo.read("LOG.md")).entries[-1]
    assert entry.get("Evidence").startswith("wc -l report.md\nrunner: agent command")
    assert "its last output line: done: report.md" in entry.get("Evidence")
    assert now.parse(memrepo.read("NOW.md")).top.cycle == 1
    assert is_clean(memrepo)


def test_a_successful_agents_stderr_tail_reaches_evidence_bounded_and_masked(tmp_path, memrepo, cli) -> None:
    key = "sk-ant-" + "k" * 24
    warnings = "".join(f"sys.stderr.write('warning {n}: slow disk\\n')\n" for n in range(1, 8))
    _agent(tmp_path, memrepo, GOOD_AGENT + warnings + f"sys.stderr.write('retried with {key}\\n')\n")
    result = cli(["cycle"], cwd=memrepo.path)
    assert result.code == ExitCode.OK, result.err
    evidence = log.parse(memrepo.read("LOG.md")).entries[-1].get("Evidence") or ""
    assert "runner: its stderr ended with: warning 4: slow disk | warning 5: slow disk | warning 6: slow disk | " \
           "warning 7: slow disk | retried with ***" in evidence.splitlines()
    assert key not in evidence and "warning 3" not in evidence
    assert "its last output line: done: report.md" in evidence


def test_a_crashing_cli_agent_is_salvaged(tmp_path, memrepo, cli) -> None:
    _agent(tmp_path, memrepo, CRASHING_AGENT)
    result = cli(["cycle"], cwd=memrepo.path)
    assert result.code == ExitCode.SALVAGED
    assert "exited with code 3: Traceback: something broke in the agent" in result.err
    assert "work saved on gitmem/salvage/cycle-1" in result.out
    assert file_at(memrepo.repo, "refs/heads/gitmem/salvage/cycle-1", "half.md") == "half of it\n"
    assert not (memrepo.path / "half.md").exists()
    assert "gitmem/salvage/cycle-1" in log.parse(memrepo.read("LOG.md")).entries[-1].get("Result")
    assert is_clean(memrepo)


def unsandboxed(config: Config) -> Config:
    return replace(config, agent=replace(config.agent, sandbox=Sandbox(mode="none")))


def test_the_backend_times_out_and_stops_the_agent(tmp_path, memrepo) -> None:
    script = tmp_path / "sleeper.py"
    script.write_text(SLEEPING_AGENT)
    pid_file = tmp_path / "sleeper.pid"
    config = unsandboxed(load_config(memrepo.path))       # it writes its pid outside the tree
    request = build_request(Workspace.at(memrepo.path, config), cycle=1, backend="command")
    backend = CommandBackend(config, command=f"{sys.executable} {script} {pid_file}", timeout=1.5)
    began = time.monotonic()
    with pytest.raises(AgentError, match=r"timed out after 1\.5s"):
        backend.run(request)
    assert time.monotonic() - began < 10
    pid = int(pid_file.read_text())
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


def test_a_missing_agent_program_is_an_agent_error(memrepo) -> None:
    config = load_config(memrepo.path)
    request = build_request(Workspace.at(memrepo.path, config), cycle=1, backend="command")
    with pytest.raises(AgentError, match="cannot start the agent command `no-such-agent-xyz`"):
        CommandBackend(config, command="no-such-agent-xyz -p").run(request)


def test_kill_9_mid_cycle_then_the_next_run_says_what_to_do(tmp_path, memrepo, cli) -> None:
    pid_file = tmp_path / "agent.pid"
    _agent(tmp_path, memrepo, SLEEPING_AGENT, str(pid_file))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GIT_", "GITMEM_"))}
    runner = subprocess.Popen([str(GITMEM), "cycle"], cwd=memrepo.path, env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 30
    while not (pid_file.exists() and pid_file.read_text()):
        assert time.monotonic() < deadline and runner.poll() is None, runner.communicate()
        time.sleep(0.05)
    runner.send_signal(signal.SIGKILL)
    os.kill(int(pid_file.read_text()), signal.SIGKILL)    # the agent ran in its own session; it held our pipes
    runner.communicate(timeout=30)
    lock = memrepo.path / ".git" / "gitmem" / "cycle.lock"
    assert json.loads(lock.read_text())["pid"] == runner.pid

    result = cli(["cycle"], cwd=memrepo.path)
    assert result.code == ExitCode.DIRTY
    err = result.err
    assert f"a previous cycle (cycle pid {runner.pid}" in err and "was killed before it finished" in err
    assert "its stale lock was cleared" in err
    assert "untracked: partial.md" in err
    assert "git status && git diff" in err
    assert "git stash push --include-untracked -m 'gitmem leftovers'" in err
    assert (memrepo.path / "partial.md").read_text() == "partial work of cycle 1\n"   # nothing lost
    assert not lock.exists()

    # Doing exactly what the message says lets the next cycle run, and the partial work stays in the stash.
    subprocess.run(["git", "stash", "push", "--include-untracked", "-m", "gitmem leftovers"], cwd=memrepo.path,
                   check=True, capture_output=True)
    _agent(tmp_path, memrepo, GOOD_AGENT)
    assert cli(["cycle"], cwd=memrepo.path).code == ExitCode.OK
    assert log.parse(memrepo.read("LOG.md")).entries[-1].get("Task") == "write report.md"
    assert not (memrepo.path / "partial.md").exists()
    shown = subprocess.run(["git", "show", "stash@{0}^3:partial.md"], cwd=memrepo.path, check=True,
                           capture_output=True, text=True).stdout
    assert shown == "partial work of cycle 1\n"
