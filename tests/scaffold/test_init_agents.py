"""`gitmem init --agent claude|codex|cursor`: merged into the user's files, never overwriting, twice is a no-op."""
from __future__ import annotations

import json
import os
import shlex
import shutil
import sys
from pathlib import Path

import pytest
import tomlkit

from gitmem.checks.check_and_verify import check_worktree
from gitmem.config import load_config
from gitmem.errors import ExitCode
from gitmem.memory import rules
from gitmem.scaffold.agent_clis import AGENTS, PINNED, begin, claude_allow_list, codex_server, end, put_block
from gitmem.scaffold.codex_recipe import CODEX_CYCLE_COMMAND
from gitmem.scaffold.init import init
from gitmem.sessions.launcher import LAUNCHER, SCRIPT, launcher_command, launcher_shell
from gitmem.sessions.protocol import AGENT_COMMANDS, claude_cycle_command, tool_names
from tests.support.helpers import GitRepo

LAUNCHED_MCP = {"command": "sh", "args": launcher_command("mcp")[1:]}
# Deliberately changed with the one protocol block (issue 36): the protocol lives once in AGENTS.md; Claude Code
# gets a one-line import in CLAUDE.md, Gemini CLI names AGENTS.md in its settings and gets no GEMINI.md.
AGENT_FILES = {"claude": [LAUNCHER, ".claude/settings.json", ".mcp.json", "AGENTS.md", "CLAUDE.md"],
               "codex": [".codex/config.toml"],
               "cursor": [".cursor/mcp.json", ".cursor/rules/gitmem.mdc"],
               "gemini": [".gemini/settings.json"]}


def snapshot(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and ".git" not in p.relative_to(root).parts}


def test_all_three_agents_are_set_up_and_a_second_run_changes_nothing(tmp_path: Path, cli) -> None:
    root = tmp_path / "agent"
    every = [word for agent in AGENTS for word in ("--agent", agent)]
    first = cli(["init", str(root), *every], cwd=tmp_path)
    assert first.code == ExitCode.OK, first.err
    for rel in sum(AGENT_FILES.values(), []):
        assert f"created     {rel}" in first.out
    # Each file once, as what this run did to it: the second agent's step said "left alone AGENTS.md (exists)"
    # and "updated gitmem.yaml" of files the same run had just created.
    named = [line.split(None, 1)[1].split(" (")[0] if line.startswith("created") else line[12:].split(" (")[0]
             for line in first.out.splitlines() if line.startswith(("created", "updated", "left alone"))]
    assert "left alone" not in first.out and "updated" not in first.out, first.out
    assert len(named) == len(set(named)), first.out
    before = snapshot(root)
    again = cli(["init", str(root), *every], cwd=tmp_path)
    assert again.code == ExitCode.OK and "created" not in again.out and "updated" not in again.out
    assert snapshot(root) == before
    for rel, data in before.items():       # committed and shared: no machine path (the launcher finds gitmem)
        assert str(tmp_path) not in data.decode("utf-8"), rel
    assert [v for v in check_worktree(GitRepo(root, None).ws()) if v.is_error] == []   # type: ignore[arg-type]


def test_claude_settings_hold_the_hooks_the_server_and_an_allow_list_without_decision_answer(tmp_path: Path) -> None:
    init(tmp_path, ["claude"])
    settings = json.loads((tmp_path / ".claude" / "settings.json").read_text())
    hooks = {event: [h["command"] for group in groups for h in group["hooks"]]
             for event, groups in settings["hooks"].items()}
    assert hooks == {"SessionStart": [launcher_shell("hook", "session-start")],
                     "Stop": [launcher_shell("hook", "stop")]}
    assert all("matcher" not in group for groups in settings["hooks"].values() for group in groups), \
        "SessionStart for every source: startup, resume, clear and compact"
    assert settings["enabledMcpjsonServers"] == ["gitmem"]
    allow = settings["permissions"]["allow"]
    assert allow == claude_allow_list()
    assert [f"mcp__gitmem__{name}" for name in tool_names()] == [r for r in allow if r.startswith("mcp__")]
    assert json.loads((tmp_path / ".mcp.json").read_text()) == {"mcpServers": {"gitmem": LAUNCHED_MCP}}
    assert (tmp_path / LAUNCHER).read_text() == SCRIPT


@pytest.mark.parametrize("command", ["gitmem decision answer D-0001 --answer yes", "gitmem decision  answer D-1",
                                     "gitmem init --agent claude", "gitmem cycle"])
def test_no_rule_of_the_allow_list_lets_the_agent_answer_a_decision(command: str) -> None:
    """Claude Code's `Bash(prefix:*)` rules match a command that starts with the prefix."""
    prefixes = [rule[len("Bash("):-len(":*)")] for rule in claude_allow_list() if rule.startswith("Bash(")]
    words = shlex.split(command)
    assert not any(words[:len(p.split())] == p.split() for p in prefixes)
    assert "gitmem decision answer" not in AGENT_COMMANDS and "gitmem decision ask" in AGENT_COMMANDS


def test_claude_settings_are_merged_into_the_users_own(tmp_path: Path) -> None:
    mine = {"model": "opus", "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "notify-send done"}]}],
                                       "SessionStart": [{"hooks": [{"type": "command",
                                                                    "command": "gitmem hook session-start"}]}]},
            "permissions": {"allow": ["Bash(npm test:*)", "Bash(gitmem log add:*)"], "deny": ["WebFetch"]},
            "enableAllProjectMcpServers": True}
    (tmp_path / ".claude").mkdir()
    (tmp_path / ".claude" / "settings.json").write_text(json.dumps(mine))
    (tmp_path / ".mcp.json").write_text(json.dumps({"mcpServers": {"gitmem": {"command": "gitmem",
                                                                              "args": ["mcp", "-w", "x"]}}}))
    report = init(tmp_path, ["claude"])
    assert ".claude/settings.json" in report.updated and ".mcp.json" in report.left_alone
    merged = json.loads((tmp_path / ".claude" / "settings.json").read_text())
    assert merged["model"] == "opus" and merged["permissions"]["deny"] == ["WebFetch"]
    assert [h["command"] for g in merged["hooks"]["Stop"] for h in g["hooks"]] == ["notify-send done",
                                                                                   launcher_shell("hook", "stop")]
    assert len(merged["hooks"]["SessionStart"]) == 1, "already there: not added twice"
    assert merged["permissions"]["allow"][:2] == ["Bash(npm test:*)", "Bash(gitmem log add:*)"]
    assert merged["permissions"]["allow"].count("Bash(gitmem log add:*)") == 1
    assert "enabledMcpjsonServers" not in merged, "every project server is already enabled"
    assert json.loads((tmp_path / ".mcp.json").read_text())["mcpServers"]["gitmem"]["args"] == ["mcp", "-w", "x"]


def test_broken_json_is_left_alone_with_a_problem(tmp_path: Path, cli) -> None:
    (tmp_path / ".claude").mkdir()
    (tmp_path / ".claude" / "settings.json").write_text("{ not json")
    result = cli(["init", str(tmp_path), "--agent", "claude"], cwd=tmp_path)
    assert result.code == ExitCode.USAGE
    assert ".claude/settings.json: not valid JSON" in result.err
    assert (tmp_path / ".claude" / "settings.json").read_text() == "{ not json"
    assert (tmp_path / ".mcp.json").exists(), "the other files are still written"


def test_the_protocol_block_is_added_below_the_users_text_and_updated_in_place(tmp_path: Path) -> None:
    # Deliberately changed (issue 36): the block is AGENTS.md's, and CLAUDE.md's block is its one-line import.
    (tmp_path / "AGENTS.md").write_text("# My project\n\nUse tabs.\n")
    (tmp_path / "CLAUDE.md").write_text("# Claude notes\n")
    init(tmp_path, ["claude"])
    text = (tmp_path / "AGENTS.md").read_text()
    assert text.startswith("# My project\n\nUse tabs.\n\n" + begin("protocol") + "\n## Memory: gitmem\n")
    assert text.endswith(end("protocol") + "\n")
    assert "Claude Code's auto memory" in text and "gitmem log add" in text
    claude_md = f"# Claude notes\n\n{begin('protocol')}\n@AGENTS.md\n{end('protocol')}\n"
    assert (tmp_path / "CLAUDE.md").read_text() == claude_md
    stale = text.replace("## Memory: gitmem", "## Memory: an old version") + "\nMy notes after it.\n"
    (tmp_path / "AGENTS.md").write_text(stale)
    report = init(tmp_path, ["claude"])
    assert "AGENTS.md" in report.updated
    assert (tmp_path / "AGENTS.md").read_text() == text + "\nMy notes after it.\n"


@pytest.mark.parametrize("agents", [["claude"], ["claude", "gemini", "codex"]])
def test_claude_md_kept_as_a_link_to_agents_md_is_served_by_its_block_and_asks_nothing(
        tmp_path: Path, cli, agents: list[str]) -> None:
    """A project that keeps one file for every CLI makes CLAUDE.md (or GEMINI.md) a link to AGENTS.md: Claude Code
    reads the protocol's block through it, so init leaves the link as it is and asks for no fix."""
    (tmp_path / "AGENTS.md").write_text("# My project\n\nUse tabs.\n")
    os.symlink("AGENTS.md", tmp_path / "CLAUDE.md")
    os.symlink("AGENTS.md", tmp_path / "GEMINI.md")
    result = cli(["init", str(tmp_path), *[word for agent in agents for word in ("--agent", agent)]], cwd=tmp_path)
    assert result.code == ExitCode.OK, result.err
    assert "fix what is named above" not in result.out + result.err and "symbolic link" not in result.err
    assert os.readlink(tmp_path / "CLAUDE.md") == "AGENTS.md" and os.readlink(tmp_path / "GEMINI.md") == "AGENTS.md"
    assert (tmp_path / "CLAUDE.md").read_text().count(begin("protocol")) == 1, "the block once, AGENTS.md's"
    assert "left alone  CLAUDE.md" in result.out


def test_an_unclosed_block_is_a_problem_not_a_guess() -> None:
    from gitmem.scaffold.agent_clis import SetupProblem

    with pytest.raises(SetupProblem, match="not closed"):
        put_block(f"intro\n{begin('protocol')}\nhalf a block\n", "new body")


def test_when_claude_md_is_the_rules_file_the_protocol_is_imported_and_rules_stay_valid(memrepo: GitRepo) -> None:
    memrepo.commit_files({"CLAUDE.md": memrepo.read("RULES.md"), "RULES.md": None,
                          "gitmem.yaml": memrepo.read("gitmem.yaml").replace("rules: RULES.md", "rules: CLAUDE.md")},
                         "rules in CLAUDE.md")
    before = rules.parse(memrepo.read("CLAUDE.md"))

    report = init(memrepo.path, ["claude"])

    # Deliberately changed (issue 36): the import names the one shared block, AGENTS.md.
    assert report.problems == [] and "AGENTS.md" in report.created and "CLAUDE.md" in report.updated
    text = memrepo.read("CLAUDE.md")
    block = f"{begin('protocol')}\n@AGENTS.md\n{end('protocol')}\n\n## Proven rules"
    assert block in text, "the import sits in RULES' free text, above its checked sections"
    after = rules.parse(text)
    assert after.problems == () and after.proven == before.proven
    assert "## Memory: gitmem" in memrepo.read("AGENTS.md")
    assert [v for v in check_worktree(memrepo.ws()) if v.is_error] == []
    again = snapshot(memrepo.path)
    init(memrepo.path, ["claude"])
    assert snapshot(memrepo.path) == again


def test_a_full_rules_file_is_left_alone(memrepo: GitRepo) -> None:
    padded = memrepo.read("RULES.md").replace("## Proven rules", "\n".join(["- note"] * 170) + "\n\n## Proven rules")
    memrepo.write("AGENTS.md", padded)
    memrepo.write("gitmem.yaml", memrepo.read("gitmem.yaml").replace("rules: RULES.md", "rules: AGENTS.md"))
    report = init(memrepo.path, ["codex"])
    assert any(p.startswith("AGENTS.md: AGENTS.md is the RULES file") and "make room" in p for p in report.problems)
    assert memrepo.read("AGENTS.md") == padded


def test_codex_gets_a_block_in_agents_md_and_its_server_merged_into_toml(tmp_path: Path) -> None:
    (tmp_path / ".codex").mkdir()
    (tmp_path / ".codex" / "config.toml").write_text('# my settings\nmodel = "o4"  # keep\n\n'
                                                     '[mcp_servers.other]\ncommand = "other"\n')
    report = init(tmp_path, ["codex"])
    assert ".codex/config.toml" in report.updated and "AGENTS.md" in report.created
    text = (tmp_path / ".codex" / "config.toml").read_text()
    assert text.startswith('# my settings\nmodel = "o4"  # keep\nallow_login_shell = false\n\n'
                           '[mcp_servers.other]\ncommand = "other"\n')
    parsed = tomlkit.parse(text)
    assert parsed["mcp_servers"]["gitmem"] == {
        **LAUNCHED_MCP, "required": True,
        "env_vars": ["GITMEM_CYCLE", "GITMEM_ROOT", "GITMEM_TIMESTAMP", "GITMEM_WORKSPACE"],
        "default_tools_approval_mode": "approve"}
    assert parsed["allow_login_shell"] is False and "allow_login_shell" not in parsed["mcp_servers"]["other"]
    assert "default_tools_approval_mode" not in parsed["mcp_servers"]["other"], "only gitmem's tools are approved"
    assert "the `context` tool of the gitmem MCP server" in (tmp_path / "AGENTS.md").read_text()
    again = snapshot(tmp_path)
    assert init(tmp_path, ["codex"]).updated == [] and snapshot(tmp_path) == again


def test_cursor_gets_its_server_and_an_always_applied_rule(tmp_path: Path) -> None:
    init(tmp_path, ["cursor"])
    server = json.loads((tmp_path / ".cursor" / "mcp.json").read_text())["mcpServers"]["gitmem"]
    assert server == {"command": "sh",
                      "args": [f"${{workspaceFolder}}/{LAUNCHER}", "mcp", "--root", "${workspaceFolder}"]}
    rule = (tmp_path / ".cursor" / "rules" / "gitmem.mdc").read_text()
    assert rule.startswith("---\ndescription: ") and "alwaysApply: true\n---\n" in rule
    assert begin("protocol") in rule and "not in Cursor's per-user memories" in rule


def test_gemini_gets_its_trusted_server_and_reads_the_protocol_from_agents_md(tmp_path: Path) -> None:
    # Deliberately changed (issue 36): no GEMINI.md; Gemini CLI reads AGENTS.md by `context.fileName`.
    (tmp_path / ".gemini").mkdir()
    (tmp_path / ".gemini" / "settings.json").write_text('{"theme": "Dracula"}')
    report = init(tmp_path, ["gemini"])
    assert report.problems == [] and ".gemini/settings.json" in report.updated and "AGENTS.md" in report.created
    settings = json.loads((tmp_path / ".gemini" / "settings.json").read_text())
    assert settings == {"theme": "Dracula", "mcpServers": {"gitmem": {**LAUNCHED_MCP, "trust": True}},
                        "context": {"fileName": ["GEMINI.md", "AGENTS.md"]}}
    assert not (tmp_path / "GEMINI.md").exists() and "GEMINI.md" not in report.left_alone
    text = (tmp_path / "AGENTS.md").read_text()
    assert begin("protocol") in text and "Gemini CLI's per-user GEMINI.md and its private project memory" in text
    # The pinned Gemini CLI (0.61.0) has no `save_memory`: the block named a tool the CLI it is written for lacks.
    assert PINNED["gemini"].version == "0.61.0" and "Gemini CLI's `save_memory`" not in text


def test_the_templates_command_is_the_one_that_can_write_memory() -> None:
    from gitmem.scaffold.init import template_dir

    config = (template_dir() / "gitmem.yaml").read_text()
    assert f"  # command: {claude_cycle_command()}\n" in config
    argv = shlex.split(claude_cycle_command())
    assert argv[:2] == ["claude", "-p"] and argv[argv.index("--output-format") + 1] == "json"
    allowed = argv[argv.index("--allowedTools") + 1].split(",")
    assert allowed == [f"Bash({command}:*)" for command in AGENT_COMMANDS]


def test_the_cli_choices_are_the_agents() -> None:
    from gitmem.cli import init as init_cli

    assert init_cli.AGENTS == AGENTS


@pytest.mark.parametrize("settings", ['{"hooks": {"Stop": [{"hooks": 5}]}}', '{"hooks": {"Stop": [{"hooks": "x"}]}}'])
def test_claude_hooks_of_an_odd_shape_are_a_problem_not_a_crash(tmp_path: Path, cli, settings: str) -> None:
    (tmp_path / ".claude").mkdir()
    (tmp_path / ".claude" / "settings.json").write_text(settings)
    result = cli(["init", str(tmp_path), "--agent", "claude"], cwd=tmp_path)
    assert result.code == ExitCode.USAGE and "Traceback" not in result.err
    assert ".claude/settings.json: `hooks.Stop[].hooks` must be a list; left alone" in result.err
    assert (tmp_path / ".claude" / "settings.json").read_text() == settings


@pytest.mark.parametrize("toml", ["mcp_servers = 5\n", "mcp_servers = [1]\n", 'mcp_servers = "gitmem"\n'])
def test_codex_servers_that_are_not_a_table_are_a_problem_not_a_crash(tmp_path: Path, cli, toml: str) -> None:
    (tmp_path / ".codex").mkdir()
    (tmp_path / ".codex" / "config.toml").write_text(toml)
    result = cli(["init", str(tmp_path), "--agent", "codex"], cwd=tmp_path)
    assert result.code == ExitCode.USAGE and "Traceback" not in result.err
    assert ".codex/config.toml: `mcp_servers` must be a table; left alone" in result.err
    assert (tmp_path / ".codex" / "config.toml").read_text() == toml


def test_codex_servers_as_an_inline_table_get_the_server_inline(tmp_path: Path) -> None:
    (tmp_path / ".codex").mkdir()
    (tmp_path / ".codex" / "config.toml").write_text('mcp_servers = { other = { command = "x" } }  # mine\n')
    report = init(tmp_path, ["codex"])
    assert ".codex/config.toml" in report.updated and not report.problems
    text = (tmp_path / ".codex" / "config.toml").read_text()
    assert "# mine" in text
    assert tomlkit.parse(text)["mcp_servers"] == {"other": {"command": "x"},
                                                  "gitmem": codex_server()}


def test_an_older_codex_entry_gets_the_new_keys_and_the_users_own_values_stay(tmp_path: Path) -> None:
    (tmp_path / ".codex").mkdir()
    (tmp_path / ".codex" / "config.toml").write_text(
        'allow_login_shell = true  # I want my profile\n\n[mcp_servers.gitmem]\ncommand = "gitmem"\n'
        'args = ["mcp"]\nrequired = false\n')
    assert ".codex/config.toml" in init(tmp_path, ["codex"]).updated
    parsed = tomlkit.parse((tmp_path / ".codex" / "config.toml").read_text())
    assert parsed["allow_login_shell"] is True
    assert parsed["mcp_servers"]["gitmem"] == {**codex_server(), "required": False}


def test_codex_gets_the_cycle_recipe_in_gitmem_yaml_and_the_trust_step(tmp_path: Path, cli) -> None:
    root = tmp_path / "agent"
    result = cli(["init", str(root), "--agent", "codex"], cwd=tmp_path)
    assert result.code == ExitCode.OK, result.err
    agent = load_config(root).agent
    assert (agent.backend, agent.command) == ("command", CODEX_CYCLE_COMMAND)
    assert agent.pass_env[:2] == ("OPENAI_API_KEY", "CODEX_API_KEY") and "ANTHROPIC_API_KEY" in agent.pass_env
    text = (root / "gitmem.yaml").read_text()
    assert f"  # command: {claude_cycle_command()}\n" in text, "the Claude Code line stays, as a comment"
    trust = f'then: trust the project in Codex once, so it reads .codex/config.toml: `codex exec --trust -C {root} ' \
            '"Run gitmem status"`'
    assert trust in result.out
    again = cli(["init", str(root), "--agent", "codex"], cwd=tmp_path)
    assert "left alone  gitmem.yaml (exists)" in again.out and trust in again.out
    assert (root / "gitmem.yaml").read_text() == text


def test_a_gitmem_yaml_with_its_own_command_is_left_alone_and_told_what_to_set(tmp_path: Path, cli) -> None:
    root = tmp_path / "agent"
    init(root)
    config = root / "gitmem.yaml"
    mine = config.read_text().replace("  # backend: anthropic", "  backend: command").replace(
        f"  # command: {claude_cycle_command()}", "  command: my-agent --go")
    config.write_text(mine)
    result = cli(["init", str(root), "--agent", "codex"], cwd=tmp_path)
    assert config.read_text() == mine
    assert ("then: for scheduled cycles with Codex, set in gitmem.yaml: agent.backend: command, agent.command: "
            f"{CODEX_CYCLE_COMMAND}, and add OPENAI_API_KEY and CODEX_API_KEY to agent.pass_env") in result.out


def test_every_agent_gets_the_launcher_and_what_an_older_init_wrote_bare_is_brought_up_to_date(tmp_path: Path) -> None:
    bare = {"command": "gitmem", "args": ["mcp"]}
    (tmp_path / ".claude").mkdir()
    (tmp_path / ".claude" / "settings.json").write_text(json.dumps({"hooks": {
        "SessionStart": [{"hooks": [{"type": "command", "command": "gitmem hook session-start"}]}],
        "Stop": [{"hooks": [{"type": "command", "command": "gitmem hook stop"}]}]}}))
    (tmp_path / ".mcp.json").write_text(json.dumps({"mcpServers": {"gitmem": bare}}))
    (tmp_path / ".codex").mkdir()
    (tmp_path / ".codex" / "config.toml").write_text('[mcp_servers.gitmem]\ncommand = "gitmem"\nargs = ["mcp"]\n')
    report = init(tmp_path, ["claude", "codex"])
    assert report.problems == [] and {".claude/settings.json", ".mcp.json", ".codex/config.toml"} <= set(report.updated)
    assert (tmp_path / LAUNCHER).read_text() == SCRIPT and LAUNCHER in report.created
    settings = json.loads((tmp_path / ".claude" / "settings.json").read_text())
    assert {event: [h["command"] for g in groups for h in g["hooks"]] for event, groups in settings["hooks"].items()} \
        == {"SessionStart": [launcher_shell("hook", "session-start")], "Stop": [launcher_shell("hook", "stop")]}
    assert json.loads((tmp_path / ".mcp.json").read_text())["mcpServers"]["gitmem"] == LAUNCHED_MCP
    assert tomlkit.parse((tmp_path / ".codex" / "config.toml").read_text())["mcp_servers"]["gitmem"] == codex_server()
    before = snapshot(tmp_path)
    assert init(tmp_path, ["claude", "codex"]).updated == [] and snapshot(tmp_path) == before


# The finder `init --agent` wrote before it took the outermost work tree: the nearest one's launcher, which a
# repository the agent made inside the tree supplies.
OLDER_FIND = ('top=$(git rev-parse --show-toplevel) && [ -f "$top/.gitmem/gitmem" ] && exec sh "$top/.gitmem/gitmem" '
              '"$@"; echo "gitmem: no .gitmem/gitmem at the top of a git work tree here: run gitmem init --agent '
              'there" >&2; exit 127')


def test_an_older_finders_hooks_and_servers_are_renewed_in_place_not_run_beside_the_new_ones(tmp_path: Path) -> None:
    older = {"command": "sh", "args": ["-c", OLDER_FIND, "gitmem", "mcp"]}
    (tmp_path / ".claude").mkdir()
    (tmp_path / ".claude" / "settings.json").write_text(json.dumps({"hooks": {
        "SessionStart": [{"hooks": [{"type": "command",
                                     "command": shlex.join(["sh", "-c", OLDER_FIND, "gitmem", "hook", "session-start",
                                                            "--workspace", "ops"])}]}],
        "Stop": [{"hooks": [{"type": "command", "command": shlex.join(["sh", "-c", OLDER_FIND, "gitmem", "hook",
                                                                      "stop"])}]},
                 {"hooks": [{"type": "command", "command": "my-own-stop-hook"}]}]}}))
    (tmp_path / ".mcp.json").write_text(json.dumps({"mcpServers": {"gitmem": older}}))
    (tmp_path / ".gemini").mkdir()
    (tmp_path / ".gemini" / "settings.json").write_text(json.dumps({"mcpServers": {"gitmem": {**older, "trust": True,
                                                                                              "timeout": 9}}}))
    (tmp_path / ".codex").mkdir()
    (tmp_path / ".codex" / "config.toml").write_text(
        f'[mcp_servers.gitmem]\ncommand = "sh"\nargs = {json.dumps(older["args"])}\n')

    report = init(tmp_path, ["claude", "gemini", "codex"])

    assert report.problems == []
    settings = json.loads((tmp_path / ".claude" / "settings.json").read_text())
    assert {event: [h["command"] for g in groups for h in g["hooks"]] for event, groups in settings["hooks"].items()} \
        == {"SessionStart": [launcher_shell("hook", "session-start", "--workspace", "ops")],
            "Stop": [launcher_shell("hook", "stop"), "my-own-stop-hook"]}, "one gitmem hook an event, today's finder"
    assert json.loads((tmp_path / ".mcp.json").read_text())["mcpServers"]["gitmem"] == LAUNCHED_MCP
    assert json.loads((tmp_path / ".gemini" / "settings.json").read_text())["mcpServers"]["gitmem"] \
        == {**LAUNCHED_MCP, "trust": True, "timeout": 9}
    assert tomlkit.parse((tmp_path / ".codex" / "config.toml").read_text())["mcp_servers"]["gitmem"] == codex_server()
    before = snapshot(tmp_path)
    assert init(tmp_path, ["claude", "gemini", "codex"]).updated == [] and snapshot(tmp_path) == before


def test_a_launcher_of_an_older_gitmem_is_renewed_and_someone_elses_file_is_left_alone(tmp_path: Path) -> None:
    (tmp_path / ".gitmem").mkdir()
    (tmp_path / LAUNCHER).write_text("#!/bin/sh\n# gitmem launcher, of an older release\nexec gitmem \"$@\"\n")
    assert LAUNCHER in init(tmp_path, ["cursor"]).updated and (tmp_path / LAUNCHER).read_text() == SCRIPT
    (tmp_path / LAUNCHER).write_text("#!/bin/sh\nexec my-own-gitmem \"$@\"\n")
    report = init(tmp_path, ["cursor"])
    assert report.problems == [f"{LAUNCHER}: is not gitmem's launcher (its second line is not `# gitmem launcher…`); "
                               "left alone: the agent configs run it, so move it away and run `gitmem init --agent …` "
                               "again"]
    assert (tmp_path / LAUNCHER).read_text() == "#!/bin/sh\nexec my-own-gitmem \"$@\"\n"


def test_the_protocol_names_the_launcher_and_the_allow_list_lets_it_write_memory(tmp_path: Path) -> None:
    init(tmp_path, ["claude"])
    assert f"`sh {LAUNCHER} log add …`" in (tmp_path / "AGENTS.md").read_text()
    assert f"Bash(sh {LAUNCHER} log add:*)" in claude_allow_list()
    assert not any("decision answer" in rule for rule in claude_allow_list())


def test_init_agent_warns_of_a_missing_agent_cli_and_never_of_an_mcp_sdk(
        tmp_path: Path, cli, monkeypatch: pytest.MonkeyPatch) -> None:
    from gitmem import extras

    tools = tmp_path / "tools"
    tools.mkdir()
    (tools / "claude").write_text("#!/bin/sh\n")
    (tools / "claude").chmod(0o755)
    git_dir = Path(shutil.which("git") or "/usr/bin/git").parent       # init registers the merge driver with git
    monkeypatch.setenv("PATH", f"{tools}{os.pathsep}{git_dir}")
    monkeypatch.setattr(extras, "installed", lambda extra: extra != "agents")
    result = cli(["init", str(tmp_path / "agent"), "--agent", "claude", "--agent", "codex", "--json"], cwd=tmp_path)
    assert result.code == ExitCode.OK, result.err
    warnings = json.loads(result.out)["warnings"]
    assert warnings == [      # gitmem mcp serves the protocol itself: no SDK to install
        "codex: `codex` is not on PATH, so the files are written for an agent CLI this machine does not have yet: "
        "npm install -g @openai/codex@0.169.0 (the release gitmem tests; it needs Node.js 16 or newer)"]
    again = cli(["init", str(tmp_path / "agent"), "--agent", "codex"], cwd=tmp_path)
    assert again.code == ExitCode.OK
    assert f"gitmem: warning: {warnings[0]}" in again.err.splitlines()


def test_a_file_two_agents_leave_alone_is_named_once(tmp_path: Path) -> None:
    init(tmp_path, ["codex", "qwen"])
    again = init(tmp_path, ["codex", "qwen"])
    assert sorted(again.left_alone) == sorted(set(again.left_alone))
    assert "AGENTS.md" in again.left_alone and "gitmem.yaml" in again.left_alone


def test_one_protocol_block_serves_every_cli_that_reads_agents_md(tmp_path: Path) -> None:
    """Issue 36: written once, whatever the agents and in whatever order; each CLI's own file only points at it."""
    init(tmp_path, ["codex"])
    once = (tmp_path / "AGENTS.md").read_text()
    init(tmp_path, ["claude", "gemini"])
    assert (tmp_path / "AGENTS.md").read_text() == once
    assert once.count(begin("protocol")) == 1 and once.count("## Memory: gitmem") == 1
    assert (tmp_path / "CLAUDE.md").read_text() == f"{begin('protocol')}\n@AGENTS.md\n{end('protocol')}\n"
    assert "AGENTS.md" in json.loads((tmp_path / ".gemini" / "settings.json").read_text())["context"]["fileName"]


def test_an_older_inits_blocks_move_to_agents_md_and_the_users_text_stays(tmp_path: Path) -> None:
    old = f"# Mine\n\nKeep this.\n\n{begin('protocol')}\n## Memory: gitmem\nold protocol\n{end('protocol')}\n"
    (tmp_path / "CLAUDE.md").write_text(old)
    (tmp_path / "GEMINI.md").write_text(old + "\nAnd this.\n")
    (tmp_path / ".gemini").mkdir()
    (tmp_path / ".gemini" / "settings.json").write_text('{"context": {"fileName": "CONTEXT.md"}}')
    report = init(tmp_path, ["claude", "gemini"])
    assert report.problems == []
    assert (tmp_path / "CLAUDE.md").read_text() == f"# Mine\n\nKeep this.\n\n{begin('protocol')}\n@AGENTS.md\n" \
                                                   f"{end('protocol')}\n"
    assert (tmp_path / "GEMINI.md").read_text() == "# Mine\n\nKeep this.\n\nAnd this.\n"
    settings = json.loads((tmp_path / ".gemini" / "settings.json").read_text())
    assert settings["context"]["fileName"] == ["CONTEXT.md", "AGENTS.md"], "the user's own names stay"


def test_an_older_inits_codex_server_gets_the_cycle_variables_it_lacks(tmp_path: Path) -> None:
    """Codex starts MCP servers with only the variables `env_vars` names. An older init listed the cycle's
    number, root and time, not its workspace, so a workspace cycle's Codex wrote the default workspace's memory
    through MCP (which the runner then put back). Init adds the missing ones and keeps the user's own."""
    (tmp_path / ".codex").mkdir()
    (tmp_path / ".codex" / "config.toml").write_text(
        '[mcp_servers.gitmem]\ncommand = "sh"\nargs = [".gitmem/launch", "mcp"]\nrequired = true\n'
        'env_vars = ["GITMEM_CYCLE", "GITMEM_ROOT", "GITMEM_TIMESTAMP", "MY_OWN"]\n'
        'default_tools_approval_mode = "approve"\n', encoding="utf-8")
    report = init(tmp_path, ["codex"])
    assert ".codex/config.toml" in report.updated
    parsed = tomlkit.parse((tmp_path / ".codex" / "config.toml").read_text())
    assert parsed["mcp_servers"]["gitmem"]["env_vars"] == ["GITMEM_CYCLE", "GITMEM_ROOT", "GITMEM_TIMESTAMP",
                                                           "MY_OWN", "GITMEM_WORKSPACE"]


def test_a_file_init_could_not_write_is_a_problem_never_left_alone_as_existing(
        tmp_path: Path, cli, git_env, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    """On the base install (no tomlkit), `init --agent codex` said "left alone .codex/config.toml (exists)" of a
    file that does not exist, beside the problem naming the install line; `--json` listed it under left_alone."""
    monkeypatch.setitem(sys.modules, "tomlkit", None)      # `import tomlkit` fails, as on the base install
    done = cli(["init", str(tmp_path / "agent"), "--agent", "codex", "--json"], cwd=tmp_path)
    assert done.code == ExitCode.USAGE
    shown = json.loads(done.out)
    assert not (tmp_path / "agent" / ".codex" / "config.toml").exists()
    assert ".codex/config.toml" not in shown["left_alone"]
    assert [p for p in shown["problems"] if p.startswith(".codex/config.toml: needs tomlkit to merge TOML: pip "
                                                          "install 'gitmem-agent[agents]")]
    text = cli(["init", str(tmp_path / "agent"), "--agent", "codex"], cwd=tmp_path)
    assert "left alone  .codex/config.toml" not in text.out


@pytest.mark.parametrize(("agent", "config", "broken"), [("codex", ".codex/config.toml", "this is = = not toml\n"),
                                                          ("qwen", ".qwen/settings.json", "{not json\n")])
def test_after_a_refusal_init_prints_only_the_refusal_no_steps_no_warnings(tmp_path: Path, cli, git_env,
                                                                           agent: str, config: str,
                                                                           broken: str) -> None:
    """`init --agent codex` that refused to write .codex/config.toml still printed `then: trust the project in
    Codex once, so it reads .codex/config.toml` (and, in --json, the "not on PATH" warning): steps for a config
    it had not written, read as done. After a refusal: what was done, the refusal and its fix, exit 2."""
    root = tmp_path / "agent"
    (root / config).parent.mkdir(parents=True)
    (root / config).write_text(broken, encoding="utf-8")
    text = cli(["init", str(root), "--agent", agent], cwd=tmp_path)
    assert text.code == ExitCode.USAGE
    assert f"gitmem: {config}: not valid" in text.err and "warning" not in text.err, text.err
    assert not [line for line in text.out.splitlines() if line.startswith("then: ")], text.out
    assert text.out.splitlines()[-1] == "next: fix what is named above, then run `gitmem init` again"
    shown = json.loads(cli(["init", str(root), "--agent", agent, "--json"], cwd=tmp_path).out)
    assert shown["problems"] and (shown["steps"], shown["warnings"]) == ([], [])
    assert (root / config).read_text(encoding="utf-8") == broken
