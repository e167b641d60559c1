"""Real Claude Code (the npm package, pinned in agent-cli/claude-code) against a loopback fake of the Messages API,
in repositories set up by `gitmem init --agent claude`: the session-start context reaches the model, an MCP tool
call and a Bash `gitmem log add` land LOG entries, the stop hook blocks a session that logged nothing, and a
`gitmem cycle` with the template's command ends `built` (with plain `claude -p` it ends `no-build`, and says why).

Skipped, loudly, only where npm cannot install Claude Code."""
from __future__ import annotations

import json
import re
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest

from gitmem.memory import decisions, log
from gitmem.sessions.protocol import claude_cycle_command
from tests.support import claude_code as cc
from tests.support.claude_cycle import CYCLE_CALLS, MARKER, entries, make_project, run_cycle, tool_script, use_command

pytestmark = pytest.mark.slow
CONTEXT = "SessionStart hook additional context: # gitmem memory"


@pytest.fixture(scope="module")
def claude() -> Path:
    return cc.claude_or_skip()


@pytest.fixture
def project(tmp_path: Path, git_env: None) -> tuple[Path, Path]:
    return make_project(tmp_path)


def test_the_context_reaches_the_model_and_the_mcp_tool_lands_an_interactive_entry(claude: Path, project) -> None:
    root, home = project
    cc.trust(home, root)
    fake = cc.FakeClaudeAPI(tool_script({"name": "mcp__gitmem__log_entry", "input": {
        "task": "answer the question about hello.py", "outcome": "no-build",
        "result": "no build: only answered a question"}}))
    with fake.serve() as url:
        done = cc.run_claude(claude, root, cc.claude_env(home, url), "--output-format", "json",
                             prompt="What did the last cycle do?")
    assert done.returncode == 0, done.stderr
    first = cc.request_text(fake.requests[0])
    assert CONTEXT in first and MARKER in first and "D-0001 · Publish to PyPI?" in first
    assert "this session is cycle 2 (interactive)" in first
    # issue 36: the protocol is AGENTS.md's one block, which CLAUDE.md's `@AGENTS.md` line imports
    assert "## Memory: gitmem" in first and "Codex's memories" in first
    last = entries(root)[-1]
    assert (last.cycle, last.outcome, last.interactive) == (2, "no-build", True)
    assert any("LOG.md: appended" in text for body in fake.requests for text in cc.tool_results(body))


def test_started_from_a_plain_shell_outside_the_venv_it_finds_gitmem_through_the_launcher(claude: Path,
                                                                                         project) -> None:
    """No gitmem on PATH: the hooks and the MCP server reach the repository's `.venv` through `.gitmem/gitmem`,
    and the model, told `gitmem` is not found, writes memory through the launcher as the protocol says."""
    root, home = project
    cc.trust(home, root)
    (root / ".venv").symlink_to(Path(sys.prefix), target_is_directory=True)    # the venv the template makes
    plain = "/usr/local/bin:/usr/bin:/bin"
    assert shutil.which("gitmem", path=plain) is None, "this test needs a PATH without gitmem"
    fake = cc.FakeClaudeAPI(tool_script(
        {"name": "Bash", "input": {"command": 'sh .gitmem/gitmem log add --task "answer outside the venv" '
                                              '--outcome no-build --result "no build: a question"',
                                   "description": "log"}},
        {"name": "mcp__gitmem__now_block", "input": {"did": "answered a question", "human": "nothing",
                                                      "next": "more questions"}}))
    with fake.serve() as url:
        done = cc.run_claude(claude, root, cc.claude_env(home, url, PATH=plain), "--output-format", "json",
                             prompt="What did the last cycle do?")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["permission_denials"] == [], "the allow-list covers the launcher"
    assert CONTEXT in cc.request_text(fake.requests[0]) and MARKER in cc.request_text(fake.requests[0])
    last = entries(root)[-1]
    assert (last.get("Task"), last.interactive) == ("answer outside the venv", True)
    assert "answered a question" in (root / "NOW.md").read_text(), [cc.tool_results(b) for b in fake.requests]


def test_bash_gitmem_log_add_is_allowed_and_decision_answer_is_not(claude: Path, project) -> None:
    root, home = project
    cc.trust(home, root)
    fake = cc.FakeClaudeAPI(tool_script(
        {"name": "Bash", "input": {"command": "gitmem decision answer D-0001 --answer yes", "description": "x"}},
        {"name": "Bash", "input": {"command": 'gitmem log add --task "check the allow-list" --outcome no-build '
                                              '--result "no build: a question"', "description": "log"}}))
    with fake.serve() as url:
        done = cc.run_claude(claude, root, cc.claude_env(home, url), "--output-format", "json", prompt="go")
    result = json.loads(done.stdout)
    refused = [d["tool_input"]["command"] for d in result["permission_denials"]]
    assert refused == ["gitmem decision answer D-0001 --answer yes"]
    assert [d.id for d in decisions.parse((root / "DECISIONS.md").read_text()).pending] == ["D-0001"]
    last = entries(root)[-1]
    assert (last.get("Task"), last.interactive) == ("check the allow-list", True)


def test_the_stop_hook_blocks_once_a_session_that_changed_files_without_logging(claude: Path, project) -> None:
    root, home = project
    cc.trust(home, root)
    feedback: list[str] = []

    def respond(body: dict[str, Any]) -> dict[str, Any]:
        said = cc.request_text(body)
        if "Stop hook feedback" in said and not feedback:
            feedback.append(said[said.index("Stop hook feedback"):][:1200])
            return cc.tool_use("Bash", {"command": 'gitmem log add --task "write notes.md" --outcome built '
                                                   '--result "notes.md written"', "description": "log"}, "toolu_log")
        if not cc.tool_results(body):
            return cc.tool_use("Write", {"file_path": str(root / "notes.md"), "content": "notes\n"}, "toolu_write")
        return cc.text("done")

    fake = cc.FakeClaudeAPI(respond)
    with fake.serve() as url:
        done = cc.run_claude(claude, root, cc.claude_env(home, url), "--output-format", "json",
                             "--permission-mode", "acceptEdits", prompt="write notes.md")
    assert done.returncode == 0, done.stderr
    assert (root / "notes.md").read_text() == "notes\n"
    assert len(feedback) == 1 and "gitmem Rule 0: this session changed files (notes.md" in feedback[0]
    assert sum("Stop hook feedback" in cc.request_text(body) for body in fake.requests[-1:]) == 1
    assert entries(root)[-1].get("Task") == "write notes.md"
    records = list((root / ".git" / "gitmem" / "sessions").glob("*.json"))
    assert [json.loads(r.read_text())["blocked"] for r in records] == [True]


def test_a_cycle_with_the_templates_command_ends_built(claude: Path, project) -> None:
    root, home = project                # untrusted, like a CI runner's checkout: the command carries the allow-list
    use_command(root, claude_cycle_command())
    report, (fake, err) = run_cycle(root, home, claude, tool_script(*CYCLE_CALLS))
    assert (report["cycle"], report["outcome"], report["task"]) == (2, "built", "write notes.md")
    assert fake.requests[0]["model"] == "claude-sonnet-5-5", "agent.model reached Claude Code as ANTHROPIC_MODEL"
    assert all(CONTEXT not in cc.request_text(body) for body in fake.requests), "hooks are silent in a cycle"
    assert "This is cycle 2" in cc.request_text(fake.requests[0])
    last = entries(root)[-1]
    assert not last.interactive and last.get(log.STARTED)
    evidence = last.get("Evidence") or ""
    assert re.search(r"tokens: input \d+, output \d+, .*cost_usd [\d.]+, total \d+", evidence), evidence
    assert report["tokens"]["cost_usd"] > 0


def test_a_cycle_with_plain_claude_p_is_refused_and_says_how_to_allow_it(claude: Path, project) -> None:
    root, home = project
    use_command(root, "claude -p --output-format json")
    report, (_, err) = run_cycle(root, home, claude, tool_script(*CYCLE_CALLS))
    assert report["outcome"] == "no-build"
    why = entries(root)[-1].get("Result") or ""
    assert "refused 2 tool call(s) for lack of permission (Bash: gitmem log add" in why
    assert "--allowedTools" in why and "--allowedTools" in err


