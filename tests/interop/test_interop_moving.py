"""Moving memory between gitmem repositories (and workspaces) through an export: the `[gitmem: L-0001]` tags of
another repository's export name that repository's entries, never this one's entry of the same ID."""
from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.interop.test_interop_export import FORMATS, SOURCE_OF, fill
from tests.interop.test_interop_import import home  # noqa: F401 (fixture)
from tests.support.helpers import CliResult, GitRepo, make_repo

Cli = Callable[..., CliResult]


def own_memory(repo: GitRepo, cli: Cli, workspace: tuple[str, ...] = ()) -> None:
    """A lesson and a decision of the receiving memory's own: the same IDs as the exporting one's, other texts."""
    assert cli(["lesson", "add", *workspace, "--title", "Cache the wheels", "--happened", "slow installs",
                "--why", "no cache", "--change", "cache pip wheels"], cwd=repo.path).code == 0
    assert cli(["decision", "ask", *workspace, "--title", "Use Postgres?", "--recommendation", "yes"],
               cwd=repo.path).code == 0


@pytest.mark.parametrize("fmt", FORMATS)
def test_another_repositorys_export_is_imported_whole_though_its_ids_are_taken_here(
        memrepo: GitRepo, cli: Cli, home: Path, tmp_path: Path, fmt: str) -> None:  # noqa: F811
    fill(memrepo, cli)
    out = tmp_path / "out"
    assert cli(["export", "--to", fmt, "--out", str(out)], cwd=memrepo.path).code == 0
    other = make_repo(tmp_path / "other")
    own_memory(other, cli)
    moved = cli(["import", SOURCE_OF[fmt], "--from", str(out), "--json"], cwd=other.path)
    assert moved.code == 0, moved.err
    data = json.loads(moved.out)
    landed = " ".join(item["text"] for item in (*data["lessons"], *data["proposals"]))
    # Every entry of the exporting repository arrives, though this one has an L-0001, a D-0001 and a NOW too.
    for expected in ("Pin the CLI versions", "no, Thursdays"):
        assert expected in landed, (fmt, data["skipped"])
    assert not [item for item in data["skipped"] if "this repository's" in item["reason"]]
    assert "<!--" not in landed            # the export's marker is no part of any fact
    again = cli(["import", SOURCE_OF[fmt], "--from", str(out)], cwd=other.path)
    assert "Nothing new to import." in again.out          # and a second import is still a no-op


def test_a_workspaces_export_imported_into_another_workspace_lands_there(
        memrepo: GitRepo, cli: Cli, home: Path, tmp_path: Path) -> None:  # noqa: F811
    memrepo.commit_files({"gitmem.yaml": memrepo.read("gitmem.yaml") + "\nworkspaces:\n  billing:\n"
                                                                      "    memory_dir: billing\n"}, "a second agent")
    assert cli(["init"], cwd=memrepo.path).code == 0
    fill(memrepo, cli)
    out = tmp_path / "out"
    assert cli(["export", "--to", "agent-memory-repo", "--out", str(out)], cwd=memrepo.path).code == 0
    own_memory(memrepo, cli, ("--workspace", "billing"))
    moved = cli(["import", "agent-memory-repo", "--from", str(out), "--workspace", "billing", "--json"],
                cwd=memrepo.path)
    assert moved.code == 0, moved.err
    assert "Pin the CLI versions" in " ".join(item["text"] for item in json.loads(moved.out)["proposals"])
    # Back into the workspace it came from, it is still that workspace's own record: nothing is added.
    back = cli(["import", "agent-memory-repo", "--from", str(out)], cwd=memrepo.path)
    assert "Nothing new to import." in back.out, back.out


def test_an_export_made_before_the_repository_had_an_origin_is_still_its_own(
        memrepo: GitRepo, cli: Cli, home: Path) -> None:  # noqa: F811
    """The pointer names the directory until the repository has an `origin`, then its URL: the same memory
    either way, so importing the earlier export back still adds nothing."""
    fill(memrepo, cli)
    assert cli(["export", "--to", "claude", "--cli-location"], cwd=memrepo.path).code == 0
    memrepo.repo.remotes.create("origin", "https://example.com/team/memory.git")
    again = cli(["import", "claude"], cwd=memrepo.path)
    assert again.code == 0 and "Nothing new to import." in again.out, again.out


def test_an_export_from_the_main_work_tree_is_a_linked_work_trees_own(
        memrepo: GitRepo, cli: Cli, home: Path, tmp_path: Path) -> None:  # noqa: F811
    """Every work tree of a repository shares its Claude Code memory (gitmem.interop.claude_code.shared_root), and
    is the same memory: the export one made imports back into another as nothing."""
    fill(memrepo, cli)
    assert cli(["export", "--to", "claude", "--cli-location"], cwd=memrepo.path).code == 0
    subprocess.run(["git", "worktree", "add", "-q", "-b", "side", str(tmp_path / "linked")], cwd=memrepo.path,
                   check=True, capture_output=True)
    again = cli(["import", "claude"], cwd=tmp_path / "linked")
    assert again.code == 0 and "Nothing new to import." in again.out, again.out


@pytest.mark.parametrize("clone_url", ["https://example.com/team/memory", "ssh://git@example.com/team/memory.git/",
                                       "https://ci-bot@Example.com/team/memory.git"])
def test_a_clone_by_another_url_of_the_same_origin_is_the_same_memory(memrepo: GitRepo, cli: Cli, tmp_path: Path,
                                                                      clone_url: str) -> None:
    """A teammate's clone names the same origin another way (https or ssh, `.git` or not): an export committed
    by one imports back into the other as nothing."""
    memrepo.repo.remotes.create("origin", "git@example.com:team/memory.git")
    fill(memrepo, cli)
    assert cli(["export", "--to", "agent-memory-repo", "--out", str(tmp_path / "out")], cwd=memrepo.path).code == 0
    memrepo.repo.remotes.set_url("origin", clone_url)
    again = cli(["import", "agent-memory-repo", "--from", str(tmp_path / "out")], cwd=memrepo.path)
    assert again.code == 0 and "Nothing new to import." in again.out, again.out
