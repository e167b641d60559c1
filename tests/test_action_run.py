"""The composite action run locally, step by step, against a temp agent repository with a bare origin.

The install step really runs `python -m pip install "$GITHUB_ACTION_PATH"` into a fresh venv made once per
session, so the code the action installs (not the dev checkout) is what runs the cycle and the close.
"""
from __future__ import annotations

import hashlib
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest

from gitmem.memory import log
from tests.support.action_support import ROOT, agent_repo, load_yaml, origin_file, origin_log, project_bin, run_action
from tests.support.gitcli import git
from tests.support.helpers import fill_in_rules

pytestmark = pytest.mark.slow

CI_SETUP_STEP = "Make an agent repository from the template, with a local bare origin"


@pytest.fixture(scope="session")
def action_venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh, empty venv standing in for setup-python's interpreter: its `python` runs the install step."""
    venv = tmp_path_factory.mktemp("action-venv")
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, capture_output=True)
    return venv / "bin"


@pytest.fixture(scope="session")
def runner_temp(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """RUNNER_TEMP shared by the runs below: the first installs gitmem's venv there, later runs find it, as a
    restored dependency cache would leave it."""
    return tmp_path_factory.mktemp("runner-temp")


def test_a_scripted_cycle_runs_through_the_action_and_is_pushed(tmp_path: Path, action_venv: Path,
                                                                runner_temp: Path) -> None:
    repo = agent_repo(tmp_path / "agent", tmp_path / "origin.git")
    start = git(repo, "rev-parse", "HEAD").strip()

    # The sandbox step changes the machine (apt-get, sysctl): test_action_yaml reads it instead.
    run = run_action(repo, {"command": "cycle"}, bin_dir=action_venv, scratch=tmp_path / "runner",
                     runner_temp=runner_temp, skip=("Install the agent sandbox",))

    assert run.ok, run.describe()
    assert [s.name for s in run.steps] == ["Plan the install and the caches",
                                           "Install gitmem from this action's own checkout",
                                           "Configure the git identity", "Run gitmem"]
    plan = run.step_outputs["plan"]
    assert plan["extras"] == "agent" and plan["venv"] == str(runner_temp / "gitmem-venv")
    assert plan["deps-key"].startswith("gitmem-deps-Linux-X64-py") and plan["deps-key"].endswith(
        "-agent-" + hashlib.sha256((ROOT / "pyproject.toml").read_bytes()).hexdigest()[:16])
    venv = runner_temp / "gitmem-venv" / "bin"
    assert (venv / "gitmem").exists(), "the install step put gitmem into its own venv"
    assert not (action_venv / "gitmem").exists(), "and left setup-python's interpreter alone"
    probe = subprocess.run([str(venv / "python"), "-c", "import anthropic, gitmem"], capture_output=True)
    assert probe.returncode == 0, "a cycle gets the agent extra"
    assert run.steps[1].out.strip().startswith("gitmem, version ")
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


def test_the_daily_close_runs_through_the_action_and_is_pushed(tmp_path: Path, action_venv: Path,
                                                               runner_temp: Path) -> None:
    repo = agent_repo(tmp_path / "agent", tmp_path / "origin.git")
    first = subprocess.run([str(project_bin() / "gitmem"), "cycle", "--push"], cwd=repo, capture_output=True,
                           text=True, env=_plain_env(tmp_path))
    assert first.returncode == 0, first.stderr
    before = datetime.now(UTC).date().isoformat()

    run = run_action(repo, {"command": "close", "args": "--no-llm"}, bin_dir=action_venv,
                     scratch=tmp_path / "runner", runner_temp=runner_temp)

    assert run.ok, run.describe()
    # The close defaults to today in the configured zone (UTC); a run across midnight may close either day.
    days = {before, datetime.now(UTC).date().isoformat()}
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


@pytest.mark.parametrize("args", ["--no-llm --workspace ops", "--no-llm -w ops", "--no-llm --workspace=ops"])
def test_the_close_of_a_workspace_reports_that_workspace(tmp_path: Path, action_venv: Path, runner_temp: Path,
                                                         args: str) -> None:
    repo = agent_repo(tmp_path / "agent", tmp_path / "origin.git")
    config = repo / "gitmem.yaml"
    config.write_text(config.read_text(encoding="utf-8") + "\nworkspaces:\n  ops:\n    memory_dir: ops\n",
                      encoding="utf-8")
    made = subprocess.run([str(project_bin() / "gitmem"), "init", "."], cwd=repo, capture_output=True, text=True)
    assert made.returncode == 0, made.stdout + made.stderr
    fill_in_rules(repo)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "a workspace for ops")
    cycle = subprocess.run([str(project_bin() / "gitmem"), "cycle", "--push", "--workspace", "ops"], cwd=repo,
                           capture_output=True, text=True, env=_plain_env(tmp_path))
    assert cycle.returncode == 0, cycle.stderr

    run = run_action(repo, {"command": "close", "args": args}, bin_dir=action_venv,
                     scratch=tmp_path / "runner", runner_temp=runner_temp)

    assert run.ok, run.describe()
    assert "### gitmem report · ops" in run.summary and "### gitmem report · default" not in run.summary


def test_check_installs_the_base_package_and_a_cache_hit_reinstalls_only_gitmem(
        tmp_path: Path, action_venv: Path, tmp_path_factory: pytest.TempPathFactory) -> None:
    temp = tmp_path_factory.mktemp("runner-temp-check")
    repo = agent_repo(tmp_path / "agent", tmp_path / "origin.git")
    cold = run_action(repo, {"command": "check"}, bin_dir=action_venv, scratch=tmp_path / "cold", runner_temp=temp)
    assert cold.ok, cold.describe()
    assert cold.step_outputs["plan"]["extras"] == "" and "-base-" in cold.step_outputs["plan"]["deps-key"]
    assert cold.outputs["outcome"] == "clean" and "### gitmem check: clean" in cold.summary
    venv = temp / "gitmem-venv" / "bin"
    assert subprocess.run([str(venv / "python"), "-c", "import anthropic"], capture_output=True).returncode != 0
    stamp = (venv / "gitmem").stat().st_mtime_ns
    # As the next run finds it once actions/cache/restore hit the key: gitmem alone is installed again.
    warm = run_action(repo, {"command": "check"}, bin_dir=action_venv, scratch=tmp_path / "warm", runner_temp=temp,
                      uses_outputs={"deps-cache": {"cache-hit": "true"}})
    assert warm.ok, warm.describe()
    assert warm.steps[1].out.strip().startswith("gitmem, version ")
    assert (venv / "gitmem").stat().st_mtime_ns != stamp, "gitmem itself was reinstalled from the action path"


def test_check_with_violations_still_writes_the_outcome_and_a_summary(tmp_path: Path) -> None:
    repo = agent_repo(tmp_path / "agent", tmp_path / "origin.git")
    (repo / "LOG.md").write_text((repo / "LOG.md").read_text(encoding="utf-8") + "## not an entry\n",
                                 encoding="utf-8")
    run = run_action(repo, {"command": "check"}, bin_dir=project_bin(), scratch=tmp_path / "runner", skip=INSTALL)
    assert not run.ok and run.steps[-1].name == "Run gitmem" and run.steps[-1].code == 1
    assert run.outputs == {"outcome": "violations"}
    assert "::error file=LOG.md" in run.steps[-1].out
    assert "### gitmem check: violations" in run.summary and "LOG.md:" in run.summary


def test_a_command_that_stops_before_deciding_leaves_outcome_error(tmp_path: Path) -> None:
    repo = agent_repo(tmp_path / "agent", tmp_path / "origin.git")
    (repo / "scratch.txt").write_text("a dirty tree: the cycle refuses to start\n", encoding="utf-8")
    (repo / "NOW.md").write_text((repo / "NOW.md").read_text(encoding="utf-8") + "\n", encoding="utf-8")
    run = run_action(repo, {"command": "cycle"}, bin_dir=project_bin(), scratch=tmp_path / "runner", skip=INSTALL)
    assert not run.ok and run.steps[-1].code == 3, run.describe()
    assert run.outputs["outcome"] == "error"


INSTALL = ("Install gitmem from this action's own checkout", "Install the agent sandbox")


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

    skip = INSTALL
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
