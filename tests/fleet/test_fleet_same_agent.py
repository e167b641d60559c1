"""One agent is one agent however fleet.yaml spells it (GM932, gitmem.fleet.place): a path and a `file://` URL of
one folder, a `branch:` naming the HEAD that no `branch:` reads, two workspace names of one memory folder. Before,
each pair was read as two agents: the agent's decisions showed twice in the inbox and its spending counted twice.
What is not knowable offline (a GitHub repository's default branch) is still never refused."""
from __future__ import annotations

import os
from pathlib import Path
from urllib.parse import quote

import pytest

from gitmem.config import ConfigError
from gitmem.errors import ExitCode
from gitmem.fleet.fleetfile import load_fleet
from tests.support.helpers import GitRepo, make_repo


def _fleet(tmp_path: Path, *entries: str) -> Path:
    """fleet.yaml of `entries` (each `repo` and any more lines), named agent-0, agent-1, …"""
    lines = ["agents:"] + [f"  - name: agent-{n}\n    repo: {entry}" for n, entry in enumerate(entries)]
    (tmp_path / "fleet.yaml").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return tmp_path / "fleet.yaml"


@pytest.fixture
def writer(tmp_path: Path) -> GitRepo:
    """A real agent repository beside the fleet file, on main, with a branch `dev` too."""
    repo = make_repo(tmp_path / "writer")
    repo.repo.branches.local.create("dev", repo.repo.head.peel())
    return repo


def _url(path: Path, form: str) -> str:
    absolute = str(path)
    return {"plain": f"file://{absolute}", "localhost": f"file://localhost{absolute}",
            "escaped": "file://" + quote(absolute).replace("/writer", "/%77riter")}[form]


@pytest.mark.parametrize("form", ["plain", "localhost", "escaped"])
@pytest.mark.parametrize("branch", ["", "\n    branch: main"])
def test_a_path_and_a_file_url_of_one_folder_are_one_agent(cli, tmp_path: Path, writer: GitRepo, form: str,
                                                           branch: str) -> None:
    url = _url(writer.path, form)
    _fleet(tmp_path, "writer", url + branch)
    done = cli(["fleet", "status", "--offline"], cwd=tmp_path)
    assert done.code == ExitCode.USAGE and done.out == ""
    assert done.err == (f"gitmem: fleet.yaml:4: GM932 agents[1] (agent-1): reads the same repository and every "
                        f"workspace as agents[0] (agent-0, line 2), {url!r} being 'writer': its decisions would "
                        "show twice in the inbox and its spending count twice against the budget; keep one entry, "
                        "or give each its own workspace\n")
    # Another branch of the folder is another memory: a URL naming it reads it, the path reads HEAD's.
    assert len(load_fleet(_fleet(tmp_path, "writer", url + "\n    branch: dev")).agents) == 2


def test_a_branch_named_is_the_default_it_reads_where_the_folder_says_so(tmp_path: Path, writer: GitRepo) -> None:
    url = _url(writer.path, "plain")
    with pytest.raises(ConfigError, match="GM932 agents\\[1\\] \\(agent-1\\): reads the same repository and every "
                                          "workspace as agents\\[0\\] \\(agent-0, line 2\\)"):
        load_fleet(_fleet(tmp_path, url, url + "\n    branch: main"))
    # A successor is what `branch: main` reads once it exists (the fetch follows it), and HEAD is still main.
    writer.repo.branches.local.create("main-2", writer.repo.head.peel())
    assert len(load_fleet(_fleet(tmp_path, url, url + "\n    branch: main")).agents) == 2
    with pytest.raises(ConfigError, match="GM932 agents\\[1\\]"):
        load_fleet(_fleet(tmp_path, url + "\n    branch: main-2", url + "\n    branch: main"))


def test_a_remote_default_branch_is_not_known_offline_so_nothing_is_refused(tmp_path: Path, writer: GitRepo) -> None:
    # The refusal above holds where the folder is on this machine…
    url = _url(writer.path, "plain")
    with pytest.raises(ConfigError, match="GM932"):
        load_fleet(_fleet(tmp_path, url, url + "\n    branch: main"))
    # …and only there: GitHub's default branch for the repository is GitHub's to say, and no entry says it.
    github = "https://github.com/acme/writer"
    assert len(load_fleet(_fleet(tmp_path, github, github + "\n    branch: main")).agents) == 2


WORKSPACES = "\nworkspaces:\n  docs:\n    memory_dir: {one}\n  Docs:\n    memory_dir: {other}\n"


def _workspaces(repo: GitRepo, one: str, other: str) -> None:
    """gitmem.yaml with workspaces `docs` and `Docs` at `one` and `other`, committed, their folders made."""
    for folder in (one, other):
        os.makedirs(repo.path / folder, exist_ok=True)
    kept = (repo.path / "gitmem.yaml").read_text(encoding="utf-8").partition(WORKSPACES[:12])[0]
    text = kept + WORKSPACES.format(one=one, other=other)
    repo.commit_files({"gitmem.yaml": text}, "two workspaces")


@pytest.mark.parametrize("spelt", ["writer", "URL"])
@pytest.mark.parametrize("other", ["d", "./d/", "d/."])
def test_two_workspace_names_of_one_memory_folder_are_one_agent(tmp_path: Path, writer: GitRepo, spelt: str,
                                                                other: str) -> None:
    _workspaces(writer, "d", other)
    repo = _url(writer.path, "plain") if spelt == "URL" else spelt
    with pytest.raises(ConfigError) as refused:
        load_fleet(_fleet(tmp_path, f"{repo}\n    workspace: docs", f"{repo}\n    workspace: Docs"))
    assert str(refused.value) == (
        f"{tmp_path / 'fleet.yaml'}:5: GM932 agents[1] (agent-1): reads the same repository and memory folder "
        "(workspace 'Docs' reaches 'docs''s) as agents[0] (agent-0, line 2): its decisions would show twice in the "
        "inbox and its spending count twice against the budget; keep one entry, or give each its own workspace")


def test_workspace_names_are_exact_where_their_folders_are_two(tmp_path: Path, writer: GitRepo) -> None:
    """gitmem matches a workspace name exactly (`--workspace Docs` is unknown where only `docs` is defined), so
    `docs` and `Docs` are two agents wherever their folders are two; on a disk that ignores case, `d` and `D`
    are one folder, and one agent."""
    _workspaces(writer, "d", "D")
    one_folder = os.path.samefile(writer.path / "d", writer.path / "D")
    fleet = _fleet(tmp_path, "writer\n    workspace: docs", "writer\n    workspace: Docs")
    if one_folder:
        with pytest.raises(ConfigError, match="GM932 agents\\[1\\] \\(agent-1\\): reads the same repository and "
                                              "memory folder"):
            load_fleet(fleet)
    else:
        assert [entry.workspace for entry in load_fleet(fleet).agents] == ["docs", "Docs"]
    # One folder under two names is one agent on every disk.
    _workspaces(writer, "d", "./d")
    with pytest.raises(ConfigError, match="GM932 agents\\[1\\]"):
        load_fleet(fleet)
