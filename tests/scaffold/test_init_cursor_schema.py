"""`gitmem init --agent cursor`: its two files, held to schemas written from Cursor's docs. Cursor ships no package a
registry carries, so no real binary runs here; the schema is the test.

- `.cursor/mcp.json` (cursor.com/docs/context/mcp, "Configuration"): `mcpServers`, each server a stdio one
  (`command`, optional `args` list and `env` map of strings) or a remote one (`url`, optional `headers`);
  `${workspaceFolder}` is expanded in `command` and `args`.
- `.cursor/rules/*.mdc` (cursor.com/docs/context/rules, "Project rules"): a YAML frontmatter of `description`
  (string), `globs` (a pattern or a list of them) and `alwaysApply` (boolean), then the rule in Markdown.
"""
from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
from ruamel.yaml import YAML

from gitmem.scaffold.agent_clis import begin, end
from gitmem.scaffold.init import init

STRINGS = {"type": "array", "items": {"type": "string"}}
MCP_SCHEMA = {
    "type": "object",
    "required": ["mcpServers"],
    "properties": {"mcpServers": {"type": "object", "additionalProperties": {"oneOf": [
        {"type": "object", "required": ["command"], "additionalProperties": False,
         "properties": {"type": {"const": "stdio"}, "command": {"type": "string", "minLength": 1}, "args": STRINGS,
                        "env": {"type": "object", "additionalProperties": {"type": "string"}},
                        "envFile": {"type": "string"}}},
        {"type": "object", "required": ["url"], "additionalProperties": False,
         "properties": {"type": {"enum": ["sse", "http", "streamable-http"]}, "url": {"type": "string"},
                        "headers": {"type": "object", "additionalProperties": {"type": "string"}}}}]}}},
}
RULE_SCHEMA = {
    "type": "object", "additionalProperties": False,
    "properties": {"description": {"type": "string", "minLength": 1},
                   "globs": {"oneOf": [{"type": "string"}, STRINGS, {"type": "null"}]},
                   "alwaysApply": {"type": "boolean"}},
}


def frontmatter(text: str) -> dict[str, object]:
    assert text.startswith("---\n"), "a rule opens with its frontmatter"
    head = text[4:text.index("\n---\n", 4)]
    loaded = YAML(typ="safe", pure=True).load(head)
    assert isinstance(loaded, dict)
    return loaded


def test_cursor_files_follow_cursors_schemas(tmp_path: Path) -> None:
    report = init(tmp_path, ["cursor"])
    assert report.problems == []
    mcp = json.loads((tmp_path / ".cursor" / "mcp.json").read_text(encoding="utf-8"))
    jsonschema.validate(mcp, MCP_SCHEMA)
    rule = (tmp_path / ".cursor" / "rules" / "gitmem.mdc").read_text(encoding="utf-8")
    meta = frontmatter(rule)
    jsonschema.validate(meta, RULE_SCHEMA)
    assert meta["alwaysApply"] is True, "the protocol applies to every request"
    assert begin("protocol") in rule and end("protocol") in rule


def test_the_users_cursor_servers_stay_and_the_result_still_follows_the_schema(tmp_path: Path) -> None:
    (tmp_path / ".cursor" / "rules").mkdir(parents=True)
    theirs = {"mcpServers": {"docs": {"url": "https://example.invalid/mcp", "headers": {"X-Team": "a"}},
                             "local": {"command": "node", "args": ["server.js"], "env": {"MODE": "dev"}}}}
    (tmp_path / ".cursor" / "mcp.json").write_text(json.dumps(theirs), encoding="utf-8")
    init(tmp_path, ["cursor"])
    merged = json.loads((tmp_path / ".cursor" / "mcp.json").read_text(encoding="utf-8"))
    jsonschema.validate(merged, MCP_SCHEMA)
    assert {key: merged["mcpServers"][key] for key in theirs["mcpServers"]} == theirs["mcpServers"]


@pytest.mark.parametrize("bad", [{"mcpServers": {"x": {"args": ["no command"]}}},
                                 {"mcpServers": {"x": {"command": "sh", "args": "not a list"}}}])
def test_the_schema_is_not_vacuous(bad: dict[str, object]) -> None:
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(bad, MCP_SCHEMA)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"alwaysApply": "yes"}, RULE_SCHEMA)
