"""The Action's `agent-cli` input: the pinned Claude Code installed with `npm ci` from the committed lock, outside
the workspace and the action's checkout, and put on PATH for the cycle that follows. Runs the step as a runner
would (tests/support/action_support.py); skipped, loudly, only where npm cannot install it."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support import codex_cli
from tests.support.action_support import ROOT, load_yaml, project_bin, run_action
from tests.support.claude_code import PACKAGE_DIR, claude_binary
from tests.support.npm_cache import Unavailable, skip_loudly

STEP = "Install the agent CLI"
OTHERS = ("Install gitmem from this action's own checkout", "Install the agent sandbox", "Configure the git identity",
          "Run gitmem")


def the_step() -> dict:
    return next(step for step in load_yaml(ROOT / "action.yml")["runs"]["steps"] if step.get("name") == STEP)


def test_the_step_installs_only_from_the_committed_lock_and_only_when_asked() -> None:
    step = the_step()
    assert step["if"] == "inputs.agent-cli != ''"
    assert "npm ci " in step["run"] and "npm install" not in step["run"] and "npx" not in step["run"]
    assert step["env"] == {"GITMEM_VENV": "${{ steps.plan.outputs.venv }}",
                           "GITMEM_AGENT_CLI": "${{ inputs.agent-cli }}"}
    lock = json.loads((PACKAGE_DIR / "package-lock.json").read_text())
    manifest = json.loads((PACKAGE_DIR / "package.json").read_text())
    pinned = manifest["dependencies"]["@anthropic-ai/claude-code"]
    assert pinned == "2.1.197", "the last Claude Code that installs on Node 20"
    assert lock["packages"]["node_modules/@anthropic-ai/claude-code"]["version"] == pinned
    assert all("integrity" in spec for name, spec in lock["packages"].items() if name)


def test_an_unknown_agent_cli_fails_the_step_with_an_error(tmp_path: Path) -> None:
    run = run_action(tmp_path, {"agent-cli": "cursor"}, bin_dir=project_bin(), scratch=tmp_path / "runner",
                     skip=OTHERS, runner_temp=tmp_path / "temp")
    assert [(s.name, s.code) for s in run.steps][-1] == (STEP, 2)
    assert "::error::agent-cli must be claude-code or codex (or empty), not 'cursor'" in run.steps[-1].out


def test_without_the_input_the_step_does_not_run(tmp_path: Path) -> None:
    run = run_action(tmp_path, {"command": "check"}, bin_dir=project_bin(), scratch=tmp_path / "runner", skip=OTHERS)
    assert STEP not in [s.name for s in run.steps]


@pytest.mark.slow
def test_claude_code_is_installed_outside_the_workspace_and_put_on_path(tmp_path: Path) -> None:
    try:
        claude_binary()          # the registry is reachable (and npm's cache holds the package after this)
    except Unavailable as why:
        skip_loudly("the Action's agent-cli install test", why)
    workspace, temp = tmp_path / "workspace", tmp_path / "runner-temp"
    workspace.mkdir()
    venv_bin = temp / "gitmem-venv" / "bin"          # where the install step puts gitmem
    venv_bin.mkdir(parents=True)
    (venv_bin / "gitmem").symlink_to(project_bin() / "gitmem")
    run = run_action(workspace, {"agent-cli": "claude-code"}, bin_dir=project_bin(), scratch=tmp_path / "runner",
                     skip=OTHERS, timeout=900, runner_temp=temp,
                     env={"npm_config_cache": str(Path.home() / ".npm")})
    assert run.ok, run.describe()
    assert run.steps[-1].name == STEP and run.steps[-1].out.strip().endswith("2.1.197 (Claude Code)")
    installed = temp / "gitmem-agent-cli" / "claude-code" / "node_modules" / ".bin" / "claude"
    assert (venv_bin / "claude").resolve() == installed.resolve(), \
        "in gitmem's venv, which the Run step puts on PATH for the cycle's command"
    assert list(workspace.iterdir()) == [] and not (PACKAGE_DIR / "node_modules").exists()


def test_codex_is_pinned_in_its_lock_with_the_native_binary_of_every_platform() -> None:
    manifest = json.loads((codex_cli.PACKAGE_DIR / "package.json").read_text())
    lock = json.loads((codex_cli.PACKAGE_DIR / "package-lock.json").read_text())
    assert manifest["dependencies"] == {"@openai/codex": "0.169.0"}
    packages = lock["packages"]
    assert packages["node_modules/@openai/codex"]["version"] == "0.169.0"
    native = packages["node_modules/@openai/codex-linux-x64"]
    assert (native["version"], native["os"], native["cpu"], native["optional"]) == (
        "0.169.0-linux-x64", ["linux"], ["x64"], True), "what npm ci installs on the runners"
    assert all("integrity" in spec for name, spec in packages.items() if name)


@pytest.mark.slow
def test_codex_is_installed_outside_the_workspace_and_put_on_path(tmp_path: Path) -> None:
    try:
        codex_cli.codex_binary()     # the registry is reachable (and npm's cache holds the packages after this)
    except Unavailable as why:
        skip_loudly("the Action's agent-cli install test", why)
    workspace, temp = tmp_path / "workspace", tmp_path / "runner-temp"
    workspace.mkdir()
    venv_bin = temp / "gitmem-venv" / "bin"
    venv_bin.mkdir(parents=True)
    (venv_bin / "gitmem").symlink_to(project_bin() / "gitmem")
    run = run_action(workspace, {"agent-cli": "codex"}, bin_dir=project_bin(), scratch=tmp_path / "runner",
                     skip=OTHERS, timeout=900, runner_temp=temp,
                     env={"npm_config_cache": str(Path.home() / ".npm")})
    assert run.ok, run.describe()
    assert run.steps[-1].name == STEP and run.steps[-1].out.strip().endswith("codex-cli 0.169.0")
    installed = temp / "gitmem-agent-cli" / "codex" / "node_modules" / ".bin" / "codex"
    assert (venv_bin / "codex").resolve() == installed.resolve()
    assert list(workspace.iterdir()) == [] and not (codex_cli.PACKAGE_DIR / "node_modules").exists()
