"""A refused fleet file reads `fleet.yaml:LINE: GMnnn message`, as gitmem.yaml's refusals do: the key's line (1 where
no line means anything), the code of its kind (GM927-GM930), then the words it always had; exit 2."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from gitmem.errors import ExitCode

AGENT = "agents:\n  - name: a\n    repo: ./a\n"


@pytest.mark.parametrize(("text", "line", "code", "words"), [
    ("agents: 3\n", 1, "GM927", "agents: expected a non-empty list of {name, repo}"),
    (AGENT + "    tokens_per_day: lots\n", 4, "GM927", "agents[0].tokens_per_day: expected a positive whole number"),
    (AGENT + "    tokens_per_day: -1\n", 4, "GM928", "agents[0].tokens_per_day: expected a positive whole number"),
    (AGENT + "pages: maybe\n", 4, "GM928", "pages: expected one of off, public"),
    (AGENT + "    brnach: main\n", 4, "GM929", "agents[0]: unknown key 'brnach'; known: name, repo, branch"),
    (AGENT + "budget:\n  tokens: 5\n", 5, "GM929", "budget: unknown key 'tokens'; known: tokens_per_day"),
    ("agents:\n  - name: a\n  repo: x\n", 3, "GM930", "invalid YAML: "),
    (b"agents:\n  - name: \xff\n", 1, "GM930", "not valid UTF-8"),
])
def test_a_refused_fleet_file_reads_path_line_code_message(cli, tmp_path: Path, text: str | bytes, line: int,
                                                           code: str, words: str) -> None:
    data = text.encode() if isinstance(text, str) else text
    (tmp_path / "fleet.yaml").write_bytes(data)
    done = cli(["fleet", "status"], cwd=tmp_path)
    assert done.code == ExitCode.USAGE and done.out == ""
    assert re.fullmatch(r"gitmem: fleet\.yaml:[0-9]+: GM[0-9]{3} .+\n", done.err), done.err
    assert done.err.startswith(f"gitmem: fleet.yaml:{line}: {code} {words}"), done.err
    answer = json.loads(cli(["fleet", "status", "--json"], cwd=tmp_path).out)
    assert answer["code"] == code


def test_a_missing_fleet_file_is_refused_at_line_1(cli, tmp_path: Path) -> None:
    done = cli(["fleet", "status", "--fleet", "none.yaml"], cwd=tmp_path)
    assert done.code == ExitCode.USAGE
    assert done.err == ("gitmem: none.yaml:1: GM930 no fleet file here; write one (see docs/fleet.md) or pass "
                        "--fleet FILE\n")
