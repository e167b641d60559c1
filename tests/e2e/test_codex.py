"""Real Codex (the npm package, pinned in agent-cli/codex) against a loopback fake of the Responses API, in
repositories set up by `gitmem init --agent codex` and trusted with the command it printed: an interactive
`codex exec` session lands an entry through the MCP tools, and scheduled `gitmem cycle`s with the recipe
init wrote end `built` through the shell and through MCP, count the fake's tokens once, and name a missing key.

Skipped, loudly, only where npm cannot install Codex."""
from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from gitmem.checks.check_and_verify import check_worktree
from gitmem.memory import now
from gitmem.workspace import Workspace
from tests.support import codex_cli as cx
from tests.support import fake_openai as fo
from tests.support.claude_cycle import commit_config, entries, make_project
from tests.support.gitcli import git
from tests.support.sessions import GITMEM

pytestmark = pytest.mark.slow
SHELL_CALLS = (("exec_command", {"cmd": 'gitmem log add --task "write notes.md" --outcome built '
                                        '--result "notes.md written" --evidence "cat notes.md"'}),
               ("exec_command", {"cmd": 'gitmem now add --did "notes.md" --human "nothing" --next "more notes"'}))
MCP_CALLS = (("mcp__gitmem__log_entry", {"task": "write notes.md", "outcome": "built", "result": "notes.md written",
                                         "evidence": "cat notes.md"}),
             ("mcp__gitmem__now_block", {"did": "notes.md", "human": "nothing", "next": "more notes"}))


@pytest.fixture(scope="module")
def codex() -> Path:
    return cx.codex_or_skip()


@pytest.fixture
def project(tmp_path: Path, git_env: None) -> tuple[Path, Path]:
    return make_project(tmp_path, "codex")


def use_sandbox(root: Path, mode: str, home: Path) -> None:
    """agent.sandbox as a human sets it; in the box, the human's CODEX_HOME (where the endpoint is configured)
    named in agent.sandbox.writable."""
    config = root / "gitmem.yaml"
    text = config.read_text().replace("    mode: auto", f"    mode: {mode}")
    config.write_text(text.replace("    # writable: [~/.cache/my-agent]", f"    writable: [{home / '.codex'}]"))


def cycle(root: Path, home: Path, codex: Path, respond: fo.Responder, *, key: bool = True,
          sandbox: str = "none") -> tuple[dict[str, Any], fo.FakeResponsesAPI, str]:
    """`gitmem cycle --json` with the recipe `init --agent codex` wrote; (its report, the fake, its stderr)."""
    use_sandbox(root, sandbox, home)
    commit_config(root)
    fake = fo.FakeResponsesAPI(respond)
    with fake.serve() as url:
        cx.machine_config(home / ".codex", url)
        done = subprocess.run([str(GITMEM), "cycle", "--json"], cwd=root, env=cx.codex_env(home, codex, key=key),
                              capture_output=True, text=True, timeout=300)
    assert done.returncode in (0, 4), done.stderr
    return json.loads(done.stdout), fake, done.stderr


def assert_built(root: Path, report: dict[str, Any], fake: fo.FakeResponsesAPI) -> None:
    assert (report["cycle"], report["outcome"], report["task"]) == (2, "built", "write notes.md"), report
    last = entries(root)[-1]
    assert (last.cycle, last.interactive, last.get("Result")) == (2, False, "notes.md written")
    assert len([e for e in entries(root) if e.cycle == 2]) == 1
    tokens = report["tokens"]
    assert tokens["input_tokens"] + tokens["cache_read_input_tokens"] == fake.reported.input_tokens
    assert (tokens["cache_read_input_tokens"], tokens["output_tokens"]) == (fake.reported.cached_tokens,
                                                                           fake.reported.output_tokens)
    assert f"total {fake.reported.total}" in (last.get("Evidence") or ""), "tokens counted once, as billed"
    assert "This is cycle 2" in fo.request_text(fake.requests[0])


def test_an_interactive_session_trusted_as_init_says_lands_an_entry_through_mcp(codex: Path, project) -> None:
    root, home = project
    printed = subprocess.run([str(GITMEM), "init", str(root), "--agent", "codex"], capture_output=True, text=True,
                             check=True).stdout
    env = cx.codex_env(home, codex)
    trusting = fo.FakeResponsesAPI(cx.script(finish="ok"))
    with trusting.serve() as url:
        cx.machine_config(home / ".codex", url)
        trusted = cx.run_codex(codex, root, env, *cx.printed_trust(printed)[1:])
    assert trusted.returncode == 0, trusted.stderr
    fake = fo.FakeResponsesAPI(cx.script(
        ("mcp__gitmem__log_entry", {"task": "answer the question about hello.py", "outcome": "no-build",
                                    "result": "no build: only answered a question"}),
        ("mcp__gitmem__now_block", {"did": "answered a question", "human": "nothing", "next": "tests"})))
    with fake.serve() as url:
        cx.machine_config(home / ".codex", url)
        done = cx.run_codex(codex, root, env, "exec", "--json", "-", prompt="What did the last cycle do?")
    assert done.returncode == 0, done.stderr
    calls = [e["item"] for e in cx.events(done.stdout)
             if e.get("type") == "item.completed" and e["item"].get("type") == "mcp_tool_call"]
    assert [(c["tool"], c["status"]) for c in calls] == [("log_entry", "completed"), ("now_block", "completed")]
    assert "mcp__gitmem" in fo.tool_names(fake.requests[0]), "the trusted project's server was offered"
    last = entries(root)[-1]
    assert (last.cycle, last.outcome, last.interactive) == (2, "no-build", True)
    assert now.parse((root / "NOW.md").read_text()).blocks[0].cycle == 2
    git(root, "add", "-A")
    assert [v for v in check_worktree(Workspace.at(root)) if v.is_error] == []


def test_a_cycle_whose_codex_writes_memory_through_the_shell_is_built(codex: Path, project) -> None:
    root, home = project
    report, fake, _ = cycle(root, home, codex, cx.script(*SHELL_CALLS))
    assert_built(root, report, fake)
    said = [answer for body in fake.requests for answer in fo.outputs(body).values()]
    assert any("LOG.md: appended" in answer for answer in said), said


def test_a_cycle_whose_codex_writes_memory_over_mcp_is_built_and_numbered_as_the_runners(codex: Path,
                                                                                      project) -> None:
    root, home = project
    report, fake, _ = cycle(root, home, codex, cx.script(*MCP_CALLS))
    assert_built(root, report, fake)
    assert "mcp__gitmem" in fo.tool_names(fake.requests[0])


def test_a_cycle_without_the_provider_key_names_it_in_its_log_entry(codex: Path, project) -> None:
    root, home = project
    report, fake, err = cycle(root, home, codex, cx.script(*SHELL_CALLS), key=False)
    assert report["outcome"] == "no-build" and fake.requests == []
    why = " ".join((entries(root)[-1].render()).split())
    assert "Missing environment variable: `OPENAI_API_KEY`" in why, why
