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
