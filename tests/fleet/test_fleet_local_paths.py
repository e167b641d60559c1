"""fleet.yaml's `repo:` as a local path, as a new user writes it: a server's bare repository has no files to read
in place, and its row says how to name it so that it is read (a file:// URL, through a copy like a remote)."""
from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.gitcli import git
from tests.support.helpers import make_repo


def test_a_bare_repository_given_as_a_path_says_to_give_it_as_a_url_and_that_url_reads(
        tmp_path: Path, git_env: None, monkeypatch: pytest.MonkeyPatch, cli) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    agent = make_repo(tmp_path / "agent").path
    git(tmp_path, "clone", "-q", "--bare", str(agent), str(tmp_path / "agent.git"))
    (tmp_path / "fleet.yaml").write_text("agents:\n  - name: server\n    repo: agent.git\n", encoding="utf-8")
    done = cli(["fleet", "status", "--no-color"], cwd=tmp_path)
    url = (tmp_path / "agent.git").as_uri()
    assert done.code == 2
    assert (f"server: agent.git is a bare repository, which has no files to read in place; give it as a URL "
            f"(repo: {url}), and it is read through a copy like a remote") in done.out
    (tmp_path / "fleet.yaml").write_text(f"agents:\n  - name: server\n    repo: {url}\n", encoding="utf-8")
    again = cli(["fleet", "status", "--no-color"], cwd=tmp_path)
    assert again.code == 0, again.out + again.err
    assert "unreadable" not in again.out


def test_a_path_under_the_home_folder_is_read_as_a_shell_reads_it(
        tmp_path: Path, git_env: None, monkeypatch: pytest.MonkeyPatch, cli) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    make_repo(tmp_path / "home" / "agents" / "writer")
    (tmp_path / "fleet").mkdir()
    (tmp_path / "fleet" / "fleet.yaml").write_text("agents:\n  - name: writer\n    repo: ~/agents/writer\n",
                                                   encoding="utf-8")
    done = cli(["fleet", "status", "--json"], cwd=tmp_path / "fleet")
    assert done.code == 0, done.out + done.err
    assert '"verdict": "unreadable"' not in done.out and '"agent": "writer"' in done.out


def test_a_folder_given_as_the_fleet_file_is_named_a_folder_with_the_file_to_pass(
        tmp_path: Path, cli, git_env: None) -> None:  # type: ignore[no-untyped-def]
    """`--fleet agent-repo` (a work tree) was "a submodule ... never through a link": neither is true. A folder
    says it is one and names the file to pass; a link still says it is a link."""
    make_repo(tmp_path / "agent")
    (tmp_path / "plain").mkdir()
    (tmp_path / "linked").symlink_to("agent")
    for folder in ("agent", "plain"):
        done = cli(["fleet", "status", "--fleet", folder], cwd=tmp_path)
        assert done.code == 2 and done.out == "", done
        assert f"{folder} is a directory, not a fleet file: pass --fleet {folder}/fleet.yaml" in done.err, done.err
        assert "submodule" not in done.err and "link" not in done.err, done.err
    linked = cli(["fleet", "status", "--fleet", "linked"], cwd=tmp_path)
    assert linked.code == 2 and "linked is a symbolic link" in linked.err, linked.err
