"""`gitmem init --agent copilot`: GitHub Copilot CLI's workspace MCP file and the shared protocol block, merged into
the user's files; the steps it cannot take (trusting the folder, the provider for scheduled cycles) are named.
What Copilot CLI itself reads of these files is tested with the real binary in tests/e2e/test_copilot_cli.py."""
from __future__ import annotations

import json
import shlex
from pathlib import Path

from gitmem.errors import ExitCode
from gitmem.scaffold.agent_clis import COPILOT_HOOKS_FILE, SERVER_SPEC, begin
from gitmem.scaffold.copilot_recipe import COPILOT_CYCLE_COMMAND
from gitmem.scaffold.init import init


def test_copilot_gets_the_workspace_server_and_the_protocol_in_agents_md(tmp_path: Path) -> None:
    (tmp_path / ".mcp.json").write_text('{"mcpServers": {"docs": {"command": "docs-mcp"}}}')
    report = init(tmp_path, ["copilot"])
    assert report.problems == [] and ".mcp.json" in report.updated and "AGENTS.md" in report.created
    servers = json.loads((tmp_path / ".mcp.json").read_text())["mcpServers"]
    assert servers == {"docs": {"command": "docs-mcp"}, "gitmem": SERVER_SPEC}
    assert begin("protocol") in (tmp_path / "AGENTS.md").read_text()
    assert not (tmp_path / ".github" / "copilot-instructions.md").exists(), "AGENTS.md serves it: no second copy"


def test_copilot_and_claude_share_one_mcp_file_and_a_second_run_changes_nothing(tmp_path: Path) -> None:
    init(tmp_path, ["claude"])
    shared = (tmp_path / ".mcp.json").read_bytes()
    report = init(tmp_path, ["copilot"])
    assert report.problems == [] and ".mcp.json" in report.left_alone
    assert (tmp_path / ".mcp.json").read_bytes() == shared
    assert init(tmp_path, ["copilot", "claude"]).created == []


def test_copilot_init_names_the_folder_trust_and_the_command_for_cycles(tmp_path: Path, cli) -> None:
    root = tmp_path / "agent"
    result = cli(["init", str(root), "--agent", "copilot"], cwd=tmp_path)
    assert result.code == ExitCode.OK, result.err
    assert f"then: trust the folder in GitHub Copilot CLI once, so it loads .mcp.json and .github/hooks: start " \
           f"`copilot` in " \
           f"{shlex.quote(str(root.resolve()))}" in result.out
    assert f"agent.command: {COPILOT_CYCLE_COMMAND}" in result.out
    assert "COPILOT_PROVIDER_API_KEY" in result.out and "never gets a GitHub token" in result.out


def test_every_file_copilot_init_writes_is_protected_from_a_cycle(tmp_path: Path) -> None:
    """Copilot CLI runs `.github/hooks/*.json` and `.mcp.json` with the human's rights: a cycle's edit of them
    comes to the human as a proposal (gitmem.agents.protected), never in force by itself."""
    from gitmem.agents.protected import Protection

    report = init(tmp_path, ["copilot"])
    setup = [rel for rel in report.created if rel in (".gitmem/gitmem", ".mcp.json", COPILOT_HOOKS_FILE)]
    assert sorted(setup) == sorted([".gitmem/gitmem", ".mcp.json", COPILOT_HOOKS_FILE])
    assert all(Protection().covers(rel) for rel in (*setup, ".github/hooks/other.json", ".github/mcp.json"))
