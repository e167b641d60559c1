"""fleet.yaml holds each agent once (GM932): two entries of one repository and workspace, however the repository
is spelt, are refused when the file loads, at the second entry, naming the first's line. Before, both were read:
the agent's decisions showed twice in the inbox and its spending counted twice against the fleet's budget."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from gitmem.config import ConfigError
from gitmem.errors import ExitCode
from gitmem.fleet.fleetfile import load_fleet
from tests.support.helpers import make_repo


def _fleet(tmp_path: Path, *entries: str) -> Path:
    """fleet.yaml of `entries` (each `repo` and any more lines), named agent-0, agent-1, …: line 2, 4 or 5, …"""
    lines = ["agents:"] + [f"  - name: agent-{n}\n    repo: {entry}" for n, entry in enumerate(entries)]
    (tmp_path / "fleet.yaml").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return tmp_path / "fleet.yaml"


@pytest.fixture
def agent(tmp_path: Path) -> Path:
    """A real agent repository, `writer`, beside the fleet file, and a link to it, `alias`."""
    make_repo(tmp_path / "writer")
    (tmp_path / "alias").symlink_to("writer", target_is_directory=True)
    return tmp_path / "writer"


@pytest.mark.parametrize("second", ["writer", "./writer", "writer/", "./writer/../writer", "alias", "ABSOLUTE"])
def test_one_repository_in_two_entries_is_refused_however_it_is_spelt(cli, tmp_path: Path, agent: Path,
                                                                       second: str) -> None:
    second = str(agent) if second == "ABSOLUTE" else second
    _fleet(tmp_path, "writer", second)
    done = cli(["fleet", "status"], cwd=tmp_path)
    assert done.code == ExitCode.USAGE and done.out == ""
    spelt = "" if second == "writer" else f", {second!r} being 'writer'"
    assert done.err == (f"gitmem: fleet.yaml:4: GM932 agents[1] (agent-1): reads the same repository and every "
                        f"workspace as agents[0] (agent-0, line 2){spelt}: its decisions would show twice in the "
                        "inbox and its spending count twice against the budget; keep one entry, or give each its "
                        "own workspace\n")


def test_another_case_of_the_path_is_the_same_repository_where_the_disk_ignores_case(
        cli, tmp_path: Path, agent: Path) -> None:
    if not os.path.isdir(tmp_path / "WRITER"):
        pytest.skip("this disk tells names apart by case: `WRITER` is another directory here")
    _fleet(tmp_path, "writer", "WRITER")
    assert "GM932 agents[1] (agent-1): reads the same repository" in cli(["fleet", "status"], cwd=tmp_path).err


@pytest.mark.parametrize(("first", "second", "both"), [
    ("writer\n    workspace: docs", "writer\n    workspace: docs", "workspace 'docs'"),
    ("writer", "./writer\n    workspace: docs", "workspace 'docs'"),          # the first reads every workspace
    ("writer\n    workspace: docs", "writer/", "workspace 'docs'"),           # and the second does
])
def test_an_entry_of_a_workspace_another_entry_reads_is_refused(tmp_path: Path, agent: Path, first: str,
                                                                second: str, both: str) -> None:
    with pytest.raises(ConfigError) as refused:
        load_fleet(_fleet(tmp_path, first, second))
    assert str(refused.value).startswith(f"{tmp_path / 'fleet.yaml'}:"), refused.value
    assert f": GM932 agents[1] (agent-1): reads the same repository and {both} as agents[0] (agent-0, line 2)" \
        in str(refused.value)


def test_two_workspaces_of_one_repository_are_two_agents_and_one_twice_is_not(tmp_path: Path, agent: Path) -> None:
    fleet = load_fleet(_fleet(tmp_path, "writer\n    workspace: docs", "./writer\n    workspace: ops"))
    assert [(entry.name, entry.workspace) for entry in fleet.agents] == [("agent-0", "docs"), ("agent-1", "ops")]
    with pytest.raises(ConfigError, match="GM932 agents\\[2\\] \\(agent-2\\): reads the same repository and "
                                          "workspace 'ops' as agents\\[1\\] \\(agent-1, line 5\\)"):
        load_fleet(_fleet(tmp_path, "writer\n    workspace: docs", "./writer\n    workspace: ops",
                          "alias\n    workspace: ops"))


@pytest.mark.parametrize(("first", "second"), [
    ("https://github.com/acme/writer", "git@github.com:acme/writer.git"),
    ("https://github.com/acme/writer", "https://github.com/Acme/Writer/"),     # GitHub ignores case
    ("ssh://git@github.com/acme/writer.git", "https://github.com/acme/writer.git"),
    ("https://git.example.org/team/writer.git", "git@git.example.org:team/writer"),
    ("https://github.com/acme/writer\n    branch: gitmem/memory",
     "git@github.com:acme/writer\n    branch: gitmem/memory"),
])
def test_one_remote_in_two_entries_is_refused_however_its_url_is_spelt(cli, tmp_path: Path, first: str,
                                                                        second: str) -> None:
    _fleet(tmp_path, first, second)
    done = cli(["fleet", "pending", "--offline"], cwd=tmp_path)
    assert done.code == ExitCode.USAGE and done.out == ""
    line = 5 if "branch" in first else 4
    assert done.err.startswith(f"gitmem: fleet.yaml:{line}: GM932 agents[1] (agent-1): reads the same repository "
                               f"and every workspace as agents[0] (agent-0, line 2), "), done.err


@pytest.mark.parametrize(("first", "second"), [
    ("https://github.com/acme/writer\n    branch: main", "https://github.com/acme/writer\n    branch: gitmem/memory"),
    ("https://github.com/acme/writer", "https://github.com/acme/reviewer"),
    ("https://git.example.org/team/writer", "https://git.example.com/team/writer"),
])
def test_other_branches_or_repositories_are_other_agents_and_the_same_twice_is_not(tmp_path: Path, first: str,
                                                                                   second: str) -> None:
    assert len(load_fleet(_fleet(tmp_path, first, second)).agents) == 2
    with pytest.raises(ConfigError, match="GM932 agents\\[2\\] \\(agent-2\\): reads the same repository"):
        load_fleet(_fleet(tmp_path, first, second, second.replace("https://", "ssh://git@")))


def test_a_name_twice_and_a_repository_twice_are_one_rule(cli, tmp_path: Path, agent: Path) -> None:
    """The name given twice (ignoring case) was refused already, as GM928; it is the same rule, with one code."""
    make_repo(tmp_path / "reviewer")
    (tmp_path / "fleet.yaml").write_text("agents:\n  - name: writer\n    repo: writer\n"
                                         "  - name: Writer\n    repo: reviewer\n", encoding="utf-8")
    done = cli(["fleet", "status"], cwd=tmp_path)
    assert done.code == ExitCode.USAGE
    assert done.err.startswith("gitmem: fleet.yaml:4: GM932 agents[1].name: 'Writer' is also the name of agents[0] "
                               "(line 2) ('writer', which differs only in case"), done.err
