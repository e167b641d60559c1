"""`gitmem pending` and `gitmem config` in a real repo."""
from __future__ import annotations

import json

DECISIONS = """# DECISIONS

## Pending

### D-0002 · Newer question
- Asked: 2026-11-29 09:00 UTC (cycle 12)
- Recommendation: take option B

### D-0001 · Older question
- Asked: 2026-11-20 09:00 UTC (cycle 3)
- Context: the old way is slow
- Recommendation: rewrite the parser

## Resolved
"""


def test_pending_lists_oldest_first_with_recommendation_and_age(memrepo, cli):
    memrepo.write("DECISIONS.md", DECISIONS)
    result = cli(["pending"], cwd=memrepo.path)
    assert result.code == 0
    assert result.lines[0].startswith("D-0001 · Older question  (")
    assert "DECISIONS.md:9)" in result.lines[0]
    assert result.lines[1] == "    recommendation: rewrite the parser"
    assert result.lines[2].startswith("D-0002 · Newer question")


def test_pending_json_feeds_other_tools(memrepo, cli):
    memrepo.write("DECISIONS.md", DECISIONS)
    data = json.loads(cli(["pending", "--json"], cwd=memrepo.path).out)
    assert [d["id"] for d in data] == ["D-0001", "D-0002"]
    assert data[0]["asked"] == "2026-11-20 09:00 UTC"
    assert data[0]["age_days"] > data[1]["age_days"] > 0
    assert data[0]["recommendation"] == "rewrite the parser"


def test_pending_says_when_nothing_waits(memrepo, cli):
    assert cli(["pending"], cwd=memrepo.path).out == "No decisions are waiting.\n"


def test_config_prints_effective_values_and_rejects_unknown_keys(memrepo, cli):
    assert cli(["config", "agent.email"], cwd=memrepo.path).out == "agent@gitmem.invalid\n"
    assert json.loads(cli(["config", "limits"], cwd=memrepo.path).out)["now_block_lines"] == 10
    whole = json.loads(cli(["config"], cwd=memrepo.path).out)
    assert whole["files"]["log"] == "LOG.md"
    bad = cli(["config", "agent.nope"], cwd=memrepo.path)
    assert bad.code == 2 and "unknown config key 'agent.nope'" in bad.err


def test_config_suggests_the_key_a_typo_meant_as_gitmem_yaml_does(memrepo, cli):
    """gitmem.yaml's loader says "did you mean 'timezone'?"; `gitmem config timzone` only said "unknown"."""
    for typo, meant in [("timzone", "timezone"), ("agent.nmae", "agent.name"), ("cycle.log_entires",
                                                                                "cycle.log_entries")]:
        bad = cli(["config", typo], cwd=memrepo.path)
        assert bad.code == 2 and bad.out == ""
        assert bad.err == f"gitmem: unknown config key {typo!r}; did you mean {meant!r}?\n"
    assert cli(["config", "agent.name.x"], cwd=memrepo.path).err == "gitmem: unknown config key 'agent.name.x'\n"


def test_config_json_prints_every_value_as_json_and_a_failure_as_the_json_object(memrepo, cli):
    """Every other reading command takes --json; `gitmem config agent.email --json` answered "No such option",
    and a script could not tell the text `10` from the number 10."""
    assert json.loads(cli(["config", "agent.email", "--json"], cwd=memrepo.path).out) == "agent@gitmem.invalid"
    assert json.loads(cli(["config", "limits.now_block_lines", "--json"], cwd=memrepo.path).out) == 10
    assert json.loads(cli(["config", "--json"], cwd=memrepo.path).out)["files"]["log"] == "LOG.md"
    bad = cli(["config", "agent.nmae", "--json"], cwd=memrepo.path)
    assert bad.code == 2
    assert json.loads(bad.out) == {"error": "unknown config key 'agent.nmae'; did you mean 'agent.name'?",
                                   "code": None, "exit_code": 2, "violations": []}


def test_config_prints_gitmem_yaml_keys_only_and_workspaces_by_name(memrepo, cli):
    """The whole config printed what loading fills in (`workspace`, `warnings`, `default_files`), which no
    gitmem.yaml can set, and `workspaces` as a list of [name, files] pairs, so `workspaces.w2` named nothing."""
    memrepo.write("gitmem.yaml", memrepo.read("gitmem.yaml") + "workspaces:\n  w2:\n    memory_dir: agents/w2\n")
    whole = json.loads(cli(["config"], cwd=memrepo.path).out)
    assert not {"workspace", "warnings", "default_files"} & set(whole)
    assert whole["workspaces"]["w2"]["memory_dir"] == "agents/w2"
    assert cli(["config", "workspaces.w2.memory_dir"], cwd=memrepo.path).out == "agents/w2\n"
    assert cli(["config", "warnings"], cwd=memrepo.path).code == 2


def test_default_models_are_current_in_the_installed_sdk():
    """A default that the SDK lists as deprecated would break every new agent on its end-of-life date."""
    import pytest

    from gitmem.config import Config

    DEPRECATED_MODELS = pytest.importorskip("anthropic._data").DEPRECATED_MODELS

    config = Config()
    assert config.agent.model not in DEPRECATED_MODELS
    assert config.close.model not in DEPRECATED_MODELS
