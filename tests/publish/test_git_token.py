"""The push token reaches git per command, as an Authorization header, and never .git/config or any output."""
from __future__ import annotations

import base64
from collections.abc import Iterator
from pathlib import Path

import pytest

from gitmem import gitio
from gitmem.gitio.remote import token_config
from tests.support.gitcli import git
from tests.support.helpers import GitRepo
from tests.support.loopback import QuietHandler, serving

TOKEN = "ghs_" + "T0k3n" * 8


class Recorder(QuietHandler):
    """A loopback git host that records each request's Authorization header and answers 403."""

    seen: list[str | None] = []

    def do_GET(self) -> None:
        Recorder.seen.append(self.headers.get("Authorization"))
        self.send_response(403)
        self.end_headers()


@pytest.fixture
def host() -> Iterator[str]:
    Recorder.seen = []
    with serving(Recorder) as url:
        yield url


def test_token_config_is_an_extraheader_for_the_server_only() -> None:
    assert token_config({}) == {}
    env = token_config({"GITMEM_GIT_TOKEN": TOKEN, "GIT_CONFIG_COUNT": "1"})
    basic = base64.b64encode(f"x-access-token:{TOKEN}".encode()).decode()
    assert env == {"GIT_CONFIG_COUNT": "3",
                   "GIT_CONFIG_KEY_1": "http.https://github.com/.extraheader", "GIT_CONFIG_VALUE_1": "",
                   "GIT_CONFIG_KEY_2": "http.https://github.com/.extraheader",
                   "GIT_CONFIG_VALUE_2": f"AUTHORIZATION: basic {basic}"}
    ghes = token_config({"GITMEM_GIT_TOKEN": TOKEN, "GITHUB_SERVER_URL": "https://git.example.com/"})
    assert ghes["GIT_CONFIG_KEY_0"] == "http.https://git.example.com/.extraheader"


def test_fetch_sends_the_token_as_a_header_and_keeps_it_out_of_config_and_errors(
        memrepo: GitRepo, host: str, monkeypatch: pytest.MonkeyPatch) -> None:
    git(memrepo.path, "remote", "add", "origin", f"{host}/owner/agent.git")
    monkeypatch.setenv("GITMEM_GIT_TOKEN", TOKEN)
    monkeypatch.setenv("GITHUB_SERVER_URL", host)
    with pytest.raises(gitio.GitCommandError) as failed:
        gitio.fetch(memrepo.handle, "origin", "main")
    expected = "basic " + base64.b64encode(f"x-access-token:{TOKEN}".encode()).decode()
    assert Recorder.seen and set(Recorder.seen) == {expected}, Recorder.seen
    assert TOKEN not in str(failed.value) and expected.split()[1] not in str(failed.value)
    config = (memrepo.path / ".git" / "config").read_text(encoding="utf-8")
    assert "extraheader" not in config and TOKEN not in config


def test_a_header_already_configured_for_the_server_is_replaced_not_doubled(
        memrepo: GitRepo, host: str, monkeypatch: pytest.MonkeyPatch) -> None:
    git(memrepo.path, "remote", "add", "origin", f"{host}/owner/agent.git")
    git(memrepo.path, "config", f"http.{host}/.extraheader", "AUTHORIZATION: basic c3RhbGU=")
    monkeypatch.setenv("GITMEM_GIT_TOKEN", TOKEN)
    monkeypatch.setenv("GITHUB_SERVER_URL", host)
    with pytest.raises(gitio.GitCommandError):
        gitio.fetch(memrepo.handle, "origin", "main")
    assert set(Recorder.seen) == {"basic " + base64.b64encode(f"x-access-token:{TOKEN}".encode()).decode()}


def test_without_a_token_git_sends_no_header(memrepo: GitRepo, host: str, monkeypatch: pytest.MonkeyPatch) -> None:
    git(memrepo.path, "remote", "add", "origin", f"{host}/owner/agent.git")
    monkeypatch.delenv("GITMEM_GIT_TOKEN", raising=False)
    with pytest.raises(gitio.GitCommandError):
        gitio.fetch(memrepo.handle, "origin", "main")
    assert Recorder.seen and set(Recorder.seen) == {None}


def test_the_action_passes_the_token_to_gitmem_and_checkout_keeps_none() -> None:
    from ruamel.yaml import YAML

    root = Path(__file__).resolve().parents[2]
    action = YAML(typ="safe").load((root / "action.yml").read_text(encoding="utf-8"))
    run = next(step for step in action["runs"]["steps"] if step.get("id") == "run")
    assert run["env"]["GITMEM_GIT_TOKEN"] == "${{ inputs.github-token }}"


def test_the_fleet_fetches_with_its_own_token_only_and_never_shows_it(host: str, cli, tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    fleet_token = "github_pat_" + "F1eet" * 12
    monkeypatch.setenv("GITMEM_FLEET_TOKEN", fleet_token)
    monkeypatch.setenv("GITMEM_GIT_TOKEN", TOKEN)          # the agent's push token is not the fleet's to send
    monkeypatch.setenv("GITHUB_SERVER_URL", host)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    (tmp_path / "fleet.yaml").write_text(f"agents:\n  - name: writer\n    repo: {host}/acme/writer.git\n",
                                         encoding="utf-8")
    done = cli(["fleet", "status", "--json"], cwd=tmp_path)
    expected = "basic " + base64.b64encode(f"x-access-token:{fleet_token}".encode()).decode()
    assert done.code == 2 and Recorder.seen and set(Recorder.seen) == {expected}, Recorder.seen
    for secret in (fleet_token, expected.split()[1]):
        assert secret not in done.out + done.err
    configs = [p.read_text(encoding="utf-8") for p in (tmp_path / "cache").rglob("config")]
    assert configs and not any("extraheader" in c or fleet_token in c for c in configs)
