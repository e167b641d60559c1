"""Every refusal of gitmem.yaml reads `gitmem.yaml:LINE: GMnnn message` on stderr, as every diagnostic does: the
line of the key (line 1 where no line means anything) and the code of its kind, the message's own words after
it; the exit code stays 2 (usage or config error)."""
from __future__ import annotations

import json
import re

import pytest

from gitmem.errors import ExitCode
from tests.support.helpers import GitRepo

DIAGNOSTIC = re.compile(r"^gitmem: (gitmem\.yaml:([0-9]+): (GM[0-9]{3}) .+)$")


def diagnostic(err: str) -> tuple[int, str, str]:
    """(line, code, the whole `path:line: GMnnn message`) of the one line stderr holds."""
    lines = err.splitlines()
    assert len(lines) == 1, err
    found = DIAGNOSTIC.match(lines[0])
    assert found is not None, err
    return int(found.group(2)), found.group(3), found.group(1)


@pytest.mark.parametrize(("yaml", "line", "code", "words"), [
    # a value of the wrong kind
    ("timezone: UTC\nlimits:\n  now_block_lines: many\n", 3, "GM927",
     "limits.now_block_lines: expected a whole number, got 'many' (text)"),
    ("agent:\n  sandbox: [auto]\n", 2, "GM927", "agent.sandbox: expected one of auto, bubblewrap, none or a mapping"),
    ("- a\n", 1, "GM927", "top level: expected a mapping, got a list"),
    # a value the key does not take
    ("limits:\n  rules_max_lines: -5\n", 2, "GM928", "limits.rules_max_lines: must not be negative, got -5"),
    ("agent:\n  model: m\n  backend: gpt\n", 3, "GM928",
     "agent.backend: 'gpt' is not one of anthropic, command, scripted"),
    ("recall:\n  mode: fast\n", 2, "GM928", "recall.mode: 'fast' is not one of auto, bm25, semantic, hybrid"),
    ("timezone: Mars/Olympus\n", 1, "GM928", "timezone: 'Mars/Olympus' is not an IANA time zone name"),
    # a file that does not read as a config
    ("timezone: UTC\nlimits: [\n", 3, "GM930", "invalid YAML: "),
    (b"agent:\n  name: \xff\n", 1, "GM930", "not valid UTF-8"),
])
def test_a_refused_gitmem_yaml_reads_path_line_code_message(memrepo: GitRepo, cli, yaml: str | bytes, line: int,
                                                           code: str, words: str) -> None:
    """These were `gitmem.yaml:3: limits…` with no code (only GM926 had one): now each kind has its code, and
    --json names it."""
    memrepo.write("gitmem.yaml", yaml)
    for argv in (["status"], ["check", "--worktree"]):
        result = cli(argv, cwd=memrepo.path)
        assert result.code == ExitCode.USAGE, result.err
        assert diagnostic(result.err)[:2] == (line, code)
        assert diagnostic(result.err)[2].startswith(f"gitmem.yaml:{line}: {code} {words}"), result.err
    answer = json.loads(cli(["status", "--json"], cwd=memrepo.path).out)
    assert answer["code"] == code and answer["error"].startswith(f"gitmem.yaml:{line}: {code} ")


def test_a_gitmem_yaml_that_is_a_link_is_refused_at_line_1(memrepo: GitRepo, cli) -> None:
    (memrepo.path / "gitmem.yaml").unlink()
    (memrepo.path / "gitmem.yaml").symlink_to("NOW.md")
    result = cli(["status"], cwd=memrepo.path)
    assert result.code == ExitCode.USAGE
    assert diagnostic(result.err)[2].startswith("gitmem.yaml:1: GM930 gitmem.yaml is a symbolic link"), result.err


def test_an_unknown_key_warns_with_its_line_and_code(memrepo: GitRepo, cli) -> None:
    """gitmem.yaml's unknown key is ignored, as it always was, and said in the diagnostic's form."""
    memrepo.write("gitmem.yaml", "timezone: UTC\nlimits:\n  now_block_line: 12\n")
    result = cli(["check", "--worktree"], cwd=memrepo.path)
    assert result.code == ExitCode.OK, result.err
    assert ("gitmem: warning: gitmem.yaml:3: GM929 unknown key 'limits.now_block_line' ignored; did you mean "
            "'limits.now_block_lines'?") in result.err.splitlines()


def test_an_unknown_workspace_is_refused_at_line_1(memrepo: GitRepo, cli) -> None:
    memrepo.write("gitmem.yaml", "workspaces:\n  writer:\n    memory_dir: agents/writer\n")
    result = cli(["status", "-w", "writr"], cwd=memrepo.path)
    assert result.code == ExitCode.USAGE
    assert diagnostic(result.err)[2] == ("gitmem.yaml:1: GM929 unknown workspace 'writr' (writer); did you mean "
                                         "'writer'?")
