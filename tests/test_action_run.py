"""The composite action run locally, step by step, against a temp agent repository with a bare origin.

The install step really runs `python -m pip install "$GITHUB_ACTION_PATH"` into a fresh venv made once per
session, so the code the action installs (not the dev checkout) is what runs the cycle and the close.
"""
from __future__ import annotations

import subprocess
import sys
from datetime import datetime, timezone
from pathlib import Path

import pytest

from gitmem.memory import log
from tests.support.action_support import ROOT, agent_repo, load_yaml, origin_file, origin_log, project_bin, run_action
from tests.support.gitcli import git

pytestmark = pytest.mark.slow

CI_SETUP_STEP = "Make an agent repository from the template, with a local bare origin"


@pytest.fixture(scope="session")
def action_venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh, empty venv: the action's install step installs gitmem into it."""
    venv = tmp_path_factory.mktemp("action-venv")
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, capture_output=True)
    return venv / "bin"


def test_a_scripted_cycle_runs_through_the_action_and_is_pushed(tmp_path: Path, action_venv: Path) -> None:
    repo = agent_repo(tmp_path / "agent", tmp_path / "origin.git")
    start = git(repo, "rev-parse", "HEAD").strip()

    run = run_action(repo, {"command": "cycle"}, bin_dir=action_venv, scratch=tmp_path / "runner")

    assert run.ok, run.describe()
    assert [s.name for s in run.steps] == ["Install gitmem from this action's own checkout",
                                           "Configure the git identity", "Run gitmem"]
    assert (action_venv / "gitmem").exists(), "the install step put gitmem into the fresh venv"
    assert run.steps[0].out.strip().startswith("gitmem, version ")
    outputs = run.outputs
    assert outputs["cycle"] == "1" and outputs["outcome"] == "built"
    assert outputs["commit"] == git(tmp_path / "origin.git", "rev-parse", "main").strip()
    assert "### gitmem cycle 1: built" in run.summary
    assert "- Task: write notes/hello.md" in run.summary
    assert "- Decisions waiting: none" in run.summary
    assert origin_log(tmp_path / "origin.git")[:2] == ["gitmem: cycle 1 · built · write notes/hello.md",
                                                       "agent repository from gitmem init"]
    assert git(tmp_path / "origin.git", "rev-parse", "main~1").strip() == start
    assert "Written by the scripted agent in cycle 1." in origin_file(tmp_path / "origin.git", "main",
                                                                      "notes/hello.md")
    # The commit is the agent's, by the identity gitmem.yaml names (the identity step read it from config).
    assert git(repo, "log", "-1", "--format=%an <%ae>").strip() == "gitmem-agent <agent@gitmem.invalid>"
    assert git(repo, "config", "user.email").strip() == "agent@gitmem.invalid"
    assert git(repo, "status", "--porcelain") == ""


def test_the_daily_close_runs_through_the_action_and_is_pushed(tmp_path: Path, action_venv: Path) -> None:
    repo = agent_repo(tmp_path / "agent", tmp_path / "origin.git")
    first = subprocess.run([str(project_bin() / "gitmem"), "cycle", "--push"], cwd=repo, capture_output=True,
                           text=True, env=_plain_env(tmp_path))
    assert first.returncode == 0, first.stderr
    before = datetime.now(timezone.utc).date().isoformat()

    run = run_action(repo, {"command": "close", "args": "--no-llm"}, bin_dir=action_venv,
                     scratch=tmp_path / "runner")

    assert run.ok, run.describe()
    # The close defaults to today in the configured zone (UTC); a run across midnight may close either day.
    days = {before, datetime.now(timezone.utc).date().isoformat()}
    subjects = origin_log(tmp_path / "origin.git")
    assert subjects[0] in {f"gitmem: close {day}" for day in days}, subjects
    day = subjects[0].removeprefix("gitmem: close ")
    assert subjects[1] == "gitmem: cycle 1 · built · write notes/hello.md"
    entries = log.parse(origin_file(tmp_path / "origin.git", "main", "LOG.md")).entries
    assert [(e.kind, e.cycle) for e in entries] == [("cycle", 1), ("close", None)]
    assert entries[-1].get("Day") == day
    outputs = run.outputs
    assert outputs.get("outcome") == "closed", f"$GITHUB_OUTPUT after the close: {outputs}"
    assert outputs["commit"] == git(tmp_path / "origin.git", "rev-parse", "main").strip()
    assert f"gitmem close {day}" in run.summary
    assert "### gitmem report · default" in run.summary and "```mermaid\n" in run.summary
    assert git(repo, "status", "--porcelain") == ""


def test_the_ci_self_test_setup_makes_a_repo_that_passes_check_and_cycles(tmp_path: Path) -> None:
    """ci.yml's action-self-test job, run here: its setup script, then `check` and `cycle` through the action
    (with the dev install on PATH instead of the install step, which the tests above cover)."""
    job = load_yaml(ROOT / ".github" / "workflows" / "ci.yml")["jobs"]["action-self-test"]
    steps = list(job["steps"])
    setup = next(s for s in steps if s.get("name") == CI_SETUP_STEP)["run"]
    final = next(s for s in steps if s.get("name") == "The cycle committed and pushed")
    workspace = tmp_path / "runner" / "work" / "agent"
    workspace.mkdir(parents=True)
    (workspace / "gitmem-src").symlink_to(ROOT, target_is_directory=True)   # actions/checkout with path:
    env = _plain_env(tmp_path)

    done = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", setup], cwd=workspace,
                          env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    assert git(workspace, "status", "--porcelain") == ""
    checked = subprocess.run([str(project_bin() / "gitmem"), "check", "--worktree"], cwd=workspace, env=env,
                             capture_output=True, text=True)
    assert checked.returncode == 0, checked.stdout + checked.stderr

    skip = ("Install gitmem from this action's own checkout",)
    check = run_action(workspace, {"command": "check"}, bin_dir=project_bin(), scratch=tmp_path / "check",
                       skip=skip)
    assert check.ok and check.outputs["outcome"] == "clean", check.describe()
    cycle = run_action(workspace, {"command": "cycle"}, bin_dir=project_bin(), scratch=tmp_path / "cycle",
                       skip=skip)
    assert cycle.ok, cycle.describe()
    final_env = {**env, "CYCLE": cycle.outputs["cycle"], "OUTCOME": cycle.outputs["outcome"]}
    assert set(final["env"]) == {"CYCLE", "OUTCOME"}
    verified = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", final["run"]],
                              cwd=workspace, env=final_env, capture_output=True, text=True)
    assert verified.returncode == 0, verified.stdout + verified.stderr
    assert origin_log(tmp_path / "runner" / "work" / "origin.git")[0].startswith("gitmem: cycle 1 · built")


def _plain_env(tmp_path: Path) -> dict[str, str]:
    import os

    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    return {"PATH": f"{project_bin()}{os.pathsep}{os.environ.get('PATH', os.defpath)}", "HOME": str(home),
            "GIT_TERMINAL_PROMPT": "0"}
