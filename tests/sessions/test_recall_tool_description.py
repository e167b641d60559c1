"""The recall tool is described once: the cycle's tool schema and the MCP server's tools/list say the same."""
from __future__ import annotations

from pathlib import Path

import gitmem
from gitmem.agents.schemas import MEMORY_TOOLS
from gitmem.sessions.mcp_server import tool_list


def test_the_recall_tool_is_described_in_one_place() -> None:
    schema = next(spec["description"] for spec in MEMORY_TOOLS if spec["name"] == "recall")
    assert next(tool["description"] for tool in tool_list() if tool["name"] == "recall") == schema
    # One source: a sentence of it is written in one module only, so the two can never drift apart.
    sentence = "hits marked weak do not hold"
    holders = [path for path in Path(gitmem.__file__).parent.rglob("*.py")
               if sentence in " ".join(path.read_text(encoding="utf-8").replace('"', " ").split())]
    assert [path.name for path in holders] == ["schemas.py"]
