"""Real Claude Code in gitmem's bubblewrap box: a scheduled `gitmem cycle` with the template's command and
`agent.sandbox: bubblewrap`, against the loopback fake of the Messages API, as root and as `nobody`. It ends
`built` with the LOG entry Claude Code's Bash `gitmem log add` wrote inside the box, Evidence names the box,
and Claude Code's state stays in the box's private HOME.

What it takes: the native binary found through node_modules/.bin, its install bound read-only; the endpoint
(ANTHROPIC_BASE_URL) kept in the box's environment; loopback reachable (the box keeps the network); `gitmem`
on PATH from the read-only venv; `.git/gitmem` writable for the memory lock. Skipped, loudly, only where npm
cannot install Claude Code or bwrap cannot make namespaces."""
from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from gitmem.sessions.protocol import claude_cycle_command
from tests.support import claude_code as cc
from tests.support.claude_cycle import (
    CYCLE_CALLS,
    commit_config,
    entries,
    make_project,
    pass_env,
    run_cycle,
    tool_script,
    use_command,
)
from tests.support.nobody import bwrap_works, nobody_place, shared_tree

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(not bwrap_works([]), reason="bwrap is not installed or cannot create namespaces "
                                                             "here (.ci/run installs bubblewrap)")]
# Claude Code's own switches the test environment sets (cc.claude_env), named in agent.pass_env as a user names
# them; the endpoint, ANTHROPIC_BASE_URL, reaches the box unnamed (gitmem.agents.sandbox.ENDPOINT_ENV).
SWITCHES = ("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "DISABLE_AUTOUPDATER", "CI")


@pytest.fixture(scope="module")
def claude() -> Path:
    return cc.claude_or_skip()


def sandboxed(root: Path) -> None:
    use_command(root, claude_cycle_command(), sandbox="bubblewrap")
    pass_env(root, *SWITCHES)


def assert_built_in_the_box(root: Path, home: Path, report: dict, fake: cc.FakeClaudeAPI) -> None:
    assert (report["cycle"], report["outcome"], report["task"]) == (2, "built", "write notes.md")
    said = [text for body in fake.requests for text in cc.tool_results(body)]
    assert any("LOG.md: appended" in text for text in said), ("Claude Code's Bash wrote the entry", said)
    last = entries(root)[-1]
    assert not last.interactive and last.get("Task") == "write notes.md" and last.get("Result") == "notes.md written"
    evidence = last.get("Evidence") or ""
    assert "sandbox: bubblewrap" in evidence and "tokens: input" in evidence, evidence
    # Claude Code held a placeholder; the runner's key proxy gave the API the key (gitmem.agents.key_stand_in).
    assert "model key: the agent holds a placeholder for ANTHROPIC_API_KEY" in evidence, evidence
    assert {headers.get("x-api-key") for headers in fake.headers} == {"sk-ant-test-fake-key"}
    assert fake.requests[0]["model"] == "claude-sonnet-5-5", "agent.model reached Claude Code in the box"
    assert not list(home.glob(".claude*")), "Claude Code kept its state in the box's HOME, not the runner's"


def test_a_cycle_with_the_templates_command_in_the_box_ends_built(claude: Path, tmp_path: Path,
                                                                  git_env: None) -> None:
    root, home = make_project(tmp_path)
    sandboxed(root)
    report, (fake, _) = run_cycle(root, home, claude, tool_script(*CYCLE_CALLS))
    assert_built_in_the_box(root, home, report, fake)


def test_the_box_ends_built_for_an_unprivileged_user_too(claude: Path, git_env: None) -> None:
    """As `nobody`, in a repository it owns, with Claude Code's install hard-linked where it can read it (the
    test's cache is root's) and a venv it can run; root's files stay root's."""
    with nobody_place("gitmem-nobody-claude-") as (place, bin_dir):
        install = shared_tree(claude.parents[1], place / "cli")       # .../node_modules
        root, home = make_project(place)
        sandboxed(root)
        commit_config(root)
        for owned in (root, home):
            subprocess.run(["chown", "-R", "65534:65534", str(owned)], check=True)
        report, (fake, _) = run_cycle(root, home, install / ".bin" / "claude", tool_script(*CYCLE_CALLS),
                                      nobody_bin=bin_dir)
        assert_built_in_the_box(root, home, report, fake)
        assert (root / "LOG.md").stat().st_uid == 65534
        assert claude.resolve().stat().st_uid == 0, "the shared install is still root's"
