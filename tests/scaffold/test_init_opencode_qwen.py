"""`gitmem init --agent opencode|qwen`: OpenCode's `opencode.json` and Qwen Code's `.qwen/settings.json`, merged into
the user's files, the protocol once in AGENTS.md, twice a no-op; Qwen Code's approval step printed. The real CLIs
read what is written here in tests/e2e/test_opencode_cli.py and tests/e2e/test_qwen_code.py."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from gitmem.errors import ExitCode
from gitmem.scaffold.agent_clis import (
    QWEN_APPROVE_STEP,
    QWEN_SETTINGS_VERSION,
    SERVER_SPEC,
    begin,
    opencode_server,
    qwen_server,
)
from gitmem.scaffold.init import init


def snapshot(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and ".git" not in p.relative_to(root).parts}


def test_opencode_gets_its_local_server_in_opencode_json_and_reads_agents_md(tmp_path: Path) -> None:
    report = init(tmp_path, ["opencode"])
    assert report.problems == [] and {"opencode.json", "AGENTS.md"} <= set(report.created)
    config = json.loads((tmp_path / "opencode.json").read_text())
    assert config == {"$schema": "https://opencode.ai/config.json", "mcp": {"gitmem": opencode_server()}}
    server = config["mcp"]["gitmem"]
    assert server["type"] == "local" and server["command"] == [SERVER_SPEC["command"], *SERVER_SPEC["args"]]
    assert server["enabled"] is True and server["timeout"] >= 30_000
    text = (tmp_path / "AGENTS.md").read_text()
    assert text.count(begin("protocol")) == 1 and "## Memory: gitmem" in text
    before = snapshot(tmp_path)
    assert init(tmp_path, ["opencode"]).updated == [] and snapshot(tmp_path) == before


def test_opencode_json_of_the_user_keeps_its_keys_and_its_own_gitmem_entry(tmp_path: Path) -> None:
    mine = {"theme": "tokyonight", "mcp": {"other": {"type": "remote", "url": "https://example.com/mcp"}}}
    (tmp_path / "opencode.json").write_text(json.dumps(mine))
    report = init(tmp_path, ["opencode"])
    assert "opencode.json" in report.updated and report.problems == []
    config = json.loads((tmp_path / "opencode.json").read_text())
    assert config == {**mine, "mcp": {**mine["mcp"], "gitmem": opencode_server()}}, "no $schema added to a user's file"
    own = {"type": "local", "command": ["my-gitmem", "mcp"]}
    (tmp_path / "opencode.json").write_text(json.dumps({"mcp": {"gitmem": own}}))
    assert "opencode.json" in init(tmp_path, ["opencode"]).left_alone
    assert json.loads((tmp_path / "opencode.json").read_text())["mcp"]["gitmem"] == own


@pytest.mark.parametrize(("rel", "text", "said"), [
    ("opencode.json", '{"mcp": ["gitmem"]}', "opencode.json: `mcp` must be an object; left alone"),
    ("opencode.json", "{broken", "opencode.json: not valid JSON"),
    (".qwen/settings.json", '{"mcpServers": 5}', ".qwen/settings.json: `mcpServers` must be an object; left alone"),
    (".qwen/settings.json", '{"context": {"fileName": 3}}',
     ".qwen/settings.json: `context.fileName` must be a file name or a list of them; left alone"),
    (".qwen/settings.json", '{"context": "QWEN.md"}', ".qwen/settings.json: `context` must be an object; left alone"),
    (".qwen/settings.json", '{"context": 5}', ".qwen/settings.json: `context` must be an object; left alone"),
])
def test_a_file_of_an_odd_shape_is_a_problem_and_left_as_it_was(tmp_path: Path, cli, rel: str, text: str,
                                                                said: str) -> None:
    (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
    (tmp_path / rel).write_text(text)
    agent = "opencode" if rel == "opencode.json" else "qwen"
    result = cli(["init", str(tmp_path), "--agent", agent], cwd=tmp_path)
    assert result.code == ExitCode.USAGE and "Traceback" not in result.err
    assert said in result.err
    assert (tmp_path / rel).read_text() == text


def test_qwen_gets_a_trusted_always_loaded_server_and_its_settings_version(tmp_path: Path, cli) -> None:
    result = cli(["init", str(tmp_path), "--agent", "qwen"], cwd=tmp_path)
    assert result.code == ExitCode.OK, result.err
    settings = json.loads((tmp_path / ".qwen" / "settings.json").read_text())
    assert settings == {"mcpServers": {"gitmem": qwen_server()}, "$version": QWEN_SETTINGS_VERSION}
    assert settings["mcpServers"]["gitmem"] == {**SERVER_SPEC, "trust": True, "alwaysLoadTools": True}
    assert "context" not in settings, "Qwen Code reads QWEN.md and AGENTS.md when no names are set"
    assert not (tmp_path / "QWEN.md").exists() and begin("protocol") in (tmp_path / "AGENTS.md").read_text()
    assert "Qwen Code's `save_memory` and auto-memory" in (tmp_path / "AGENTS.md").read_text(), "not its own memory"
    assert f"then: {QWEN_APPROVE_STEP}" in result.out and "`qwen mcp approve gitmem`" in QWEN_APPROVE_STEP
    before = snapshot(tmp_path)
    again = cli(["init", str(tmp_path), "--agent", "qwen"], cwd=tmp_path)
    assert "created" not in again.out and "updated" not in again.out and snapshot(tmp_path) == before


def test_qwen_settings_in_the_first_flat_format_get_no_version_so_qwen_code_still_upgrades_them(
        tmp_path: Path) -> None:
    """Found by review: stamped with the newest version, a flat file's `theme`, `contextFileName` and `coreTools`
    were never upgraded, and Qwen Code stopped reading them (it upgrades only a file whose version is missing)."""
    (tmp_path / ".qwen").mkdir()
    flat = {"theme": "Dracula", "contextFileName": "MYRULES.md", "coreTools": ["ReadFileTool"]}
    (tmp_path / ".qwen" / "settings.json").write_text(json.dumps(flat))
    assert init(tmp_path, ["qwen"]).problems == []
    settings = json.loads((tmp_path / ".qwen" / "settings.json").read_text())
    assert settings == {**flat, "mcpServers": {"gitmem": qwen_server()}}


def test_qwen_settings_of_the_user_stay_and_agents_md_joins_the_names_they_chose(tmp_path: Path) -> None:
    (tmp_path / ".qwen").mkdir()
    (tmp_path / ".qwen" / "settings.json").write_text(json.dumps(
        {"$version": 3, "ui": {"theme": "Qwen Dark"}, "context": {"fileName": "CONTEXT.md"}}))
    report = init(tmp_path, ["qwen"])
    assert report.problems == [] and ".qwen/settings.json" in report.updated
    settings = json.loads((tmp_path / ".qwen" / "settings.json").read_text())
    assert settings == {"$version": 3, "ui": {"theme": "Qwen Dark"},
                        "context": {"fileName": ["CONTEXT.md", "AGENTS.md"]},
                        "mcpServers": {"gitmem": qwen_server()}}, "the user's version and names stay"


def test_every_cli_reading_agents_md_shares_the_one_block(tmp_path: Path) -> None:
    init(tmp_path, ["opencode"])
    once = (tmp_path / "AGENTS.md").read_text()
    init(tmp_path, ["qwen", "codex", "gemini"])
    assert (tmp_path / "AGENTS.md").read_text() == once and once.count("## Memory: gitmem") == 1


def test_the_docs_show_what_init_writes_and_the_commands_the_cycle_tests_run(tmp_path: Path) -> None:
    from tests.support import opencode_cli, qwen_cli

    docs = (Path(__file__).resolve().parents[2] / "docs" / "opencode-qwen.md").read_text(encoding="utf-8")
    shown = [json.loads(block.split("```", 1)[0]) for block in docs.split("```json\n")[1:3]]
    init(tmp_path, ["opencode", "qwen"])
    finder = json.dumps(SERVER_SPEC["args"][1])[1:-1]      # as it stands in the JSON text
    for rel, block in zip(("opencode.json", ".qwen/settings.json"), shown, strict=True):
        written = (tmp_path / rel).read_text(encoding="utf-8").replace(finder, "<the launcher's finder>")
        assert json.loads(written) == block, rel
    assert f"  command: {opencode_cli.CYCLE_COMMAND}\n" in docs
    assert f"  # command: {qwen_cli.CYCLE_COMMAND}\n" in docs
