"""The agent CLIs' own config files the runner reads before a cycle (Codex's config.toml, for its endpoint and for
what the box hides; Claude Code's settings.json) nested past any bound: read as setting nothing, never a
traceback. An agent writes them: `~/.codex` when `agent.sandbox.writable` names it, and any of them when it runs
unboxed or in an interactive session; a RecursionError there ended every later cycle with exit 70."""
from __future__ import annotations

from pathlib import Path

import pytest

from gitmem.agents import key_stand_in
from gitmem.agents.sandbox_mounts import hidden_config

DEEP = 100_000


@pytest.fixture
def nested_home(tmp_path: Path) -> Path:
    (tmp_path / ".codex").mkdir()
    (tmp_path / ".codex" / "config.toml").write_text("model_provider = " + "[" * DEEP + "]" * DEEP + "\n",
                                                     encoding="utf-8")
    (tmp_path / ".claude").mkdir()
    (tmp_path / ".claude" / "settings.json").write_text('{"env": ' + "[" * DEEP + "]" * DEEP + "}",
                                                        encoding="utf-8")
    return tmp_path


def test_what_the_box_hides_is_read_from_a_nested_config_as_nothing(nested_home: Path) -> None:
    assert hidden_config([], {"HOME": str(nested_home)}) == []


def test_codexs_endpoint_is_read_from_a_nested_config_as_nothing(nested_home: Path) -> None:
    env = {"OPENAI_API_KEY": "sk-" + "x" * 40, "CODEX_HOME": str(nested_home / ".codex")}
    plan = key_stand_in.plan_keys(["codex", "exec", "-"], env, environ={})
    assert [(r.upstream, r.codex_setting) for r in plan.routes] == [("https://api.openai.com/v1", "openai_base_url")]


def test_a_nested_codex_setting_on_the_command_line_is_a_plain_string() -> None:
    argv = ["codex", "exec", "-c", "model_provider=" + "[" * DEEP + "]" * DEEP, "-"]
    plan = key_stand_in.plan_keys(argv, {"OPENAI_API_KEY": "sk-" + "x" * 40}, environ={})
    assert [r.upstream for r in plan.routes] == ["https://api.openai.com/v1"]
