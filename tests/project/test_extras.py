"""The dependency split: the base package needs no LLM SDK, and what needs one says exactly what to install."""
from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

import gitmem
from gitmem import extras
from gitmem.agents.selection import backend_for
from gitmem.config import Config
from gitmem.errors import ExitCode
from tests.support.helpers import GitRepo

ROOT = Path(__file__).resolve().parents[2]
INSTALL = gitmem.install_command("agent")


@pytest.fixture
def project() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]


def test_the_base_package_has_no_llm_sdk_and_test_pulls_every_extra(project: dict) -> None:
    base = " ".join(project["dependencies"])
    assert "anthropic" not in base
    optional = project["optional-dependencies"]
    assert optional["agent"] == ["anthropic>=0.40"]
    for name in set(optional) - {"test"}:
        assert f"{project['name']}[{name}]" in optional["test"], f"[test] must pull in the {name} extra"
    assert set(extras.EXTRAS) == set(optional) - {"test"}, "every extra is described in gitmem/extras.py"


def test_the_install_line_names_the_distribution_and_the_extra(project: dict) -> None:
    assert extras.extra_install_line("agent") == INSTALL
    assert gitmem.DISTRIBUTION == project["name"]
    assert extras.installed("agent")            # the test suite runs with every extra


def test_the_anthropic_backend_without_the_sdk_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(extras, "installed", lambda extra: False)
    with pytest.raises(extras.MissingExtra) as failed:
        backend_for(Config(), "anthropic", environ={"ANTHROPIC_API_KEY": "x"})
    assert str(failed.value) == f"the anthropic backend needs the anthropic SDK, which is not installed: {INSTALL}"
    assert failed.value.exit_code == ExitCode.USAGE
    # With a key and no backend named, the default is anthropic: the same line.
    with pytest.raises(extras.MissingExtra):
        backend_for(Config(), None, environ={"ANTHROPIC_API_KEY": "x"})
    # The scripted and command backends need nothing more.
    assert backend_for(Config(), "scripted", script="x.yaml").name == "scripted"


def test_cycle_and_close_on_the_command_line_without_the_sdk(memrepo: GitRepo, cli,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(extras, "installed", lambda extra: False)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-not-a-real-key")
    cycle = cli(["cycle", "--agent", "anthropic"], cwd=memrepo.path)
    assert cycle.code == ExitCode.USAGE
    assert INSTALL in cycle.err and "Traceback" not in cycle.err
    close = cli(["close"], cwd=memrepo.path)
    assert close.code == ExitCode.OK, close.err
    assert f"warning: a close worded by the model needs the anthropic SDK, which is not installed: {INSTALL}; " \
           "closing offline" in close.err
    assert "model " not in close.out


def test_with_no_backend_chosen_the_hint_says_the_anthropic_backend_needs_the_extra(
        memrepo: GitRepo, cli, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.setattr(extras, "installed", lambda extra: extra != "agent")
    plain = cli(["cycle"], cwd=memrepo.path)
    assert plain.code == ExitCode.USAGE
    assert f"anthropic backend (it needs the anthropic SDK, not installed here: {extras.extra_install_line('agent')})" \
        in plain.err
    monkeypatch.setattr(extras, "installed", lambda extra: True)
    full = cli(["cycle"], cwd=memrepo.path)
    assert full.code == ExitCode.USAGE and "set ANTHROPIC_API_KEY for the anthropic backend," in full.err
    assert "not installed" not in full.err
