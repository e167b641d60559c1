"""`gitmem init --agent` on a large commented settings file (gitmem.scaffold.jsonc): read it, ask whether it is
plain JSON, and add gitmem's server in place, as `agent_clis._json` does.

The file is MEGABYTES of members like a real settings file's (a string, a list, a flag, a comment each). jsonc
blanks the comments in one regex pass per text (a file read, then the edited text read back) and finds the spans
of only the containers an edit goes through; json's own C parser skips every other value.

Run:  .venv/bin/pytest benchmarks/bench_jsonc.py --benchmark-only -s
"""
from __future__ import annotations

import json
from typing import Any

import pytest

from gitmem.scaffold import jsonc

MEGABYTES = 8


def _settings(size: int) -> str:
    lines = ['{\n  // settings\n  "theme": "dark",\n  "big": {\n']
    written, member = 0, 0
    while written < size:
        value = {"name": f"value // {member}", "list": [1, 2, 3, "x/*y*/"], "flag": True}
        line = f'    "key{member}": {json.dumps(value)}, /* note {member} */\n'
        lines.append(line)
        written, member = written + len(line), member + 1
    return "".join(lines) + "  },\n}\n"


def _add_server(text: str) -> str:
    jsonc.blanked.cache_clear()             # each round reads the file as a new process would
    data: Any = jsonc.loads(text)
    assert not jsonc.is_plain(text)
    wanted = {**data, "mcpServers": {"gitmem": {"command": "sh", "args": ["-c", "gitmem mcp"]}}}
    return jsonc.edited(text, data, wanted)


@pytest.mark.benchmark(group="jsonc: add a server to a large commented settings file")
def test_jsonc_edit_of_a_large_settings_file(benchmark) -> None:  # type: ignore[no-untyped-def]
    text = _settings(MEGABYTES << 20)
    edited = benchmark.pedantic(_add_server, args=(text,), rounds=3, iterations=1)
    assert jsonc.loads(edited)["mcpServers"]["gitmem"]["command"] == "sh"
    benchmark.extra_info.update(megabytes=MEGABYTES)
