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

from gitmem.close.day import close_day
from gitmem.config import load_config
from gitmem.memory import log
from tests.support.action_support import (
    ROOT,
    agent_repo,
    load_yaml,
    origin_file,
    origin_log,
    project_bin,
    run_action,
)
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
    assert plan["extras"] == "" and plan["venv"] == str(runner_temp / "gitmem-venv")
    assert plan["source"] == source_digest()
    assert plan["deps-key"].startswith("gitmem-deps-Linux-X64-py") and plan["deps-key"].endswith(
        "-base-" + hashlib.sha256((ROOT / "pyproject.toml").read_bytes()).hexdigest()[:16] + "-" + plan["source"])
    assert plan["deps-prefix"] == plan["deps-key"].removesuffix(plan["source"])
    venv = runner_temp / "gitmem-venv" / "bin"
    assert (venv / "gitmem").exists(), "the install step put gitmem into its own venv"
    assert not (action_venv / "gitmem").exists(), "and left setup-python's interpreter alone"
    assert not (venv / "pip").exists(), "setup-python's pip installs into the venv; the venv holds none"
    assert subprocess.run([str(venv / "python"), "-c", "import gitmem"], capture_output=True).returncode == 0
    probe = subprocess.run([str(venv / "python"), "-c", "import anthropic"], capture_output=True)
    assert probe.returncode != 0, "a scripted cycle without the Anthropic key gets no anthropic SDK"
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
    # gitmem.yaml choosing the anthropic backend: the install step adds the agent extra, though no key is given.
    config = repo / "gitmem.yaml"
    config.write_text(config.read_text(encoding="utf-8").replace("  backend: scripted\n", "  backend: anthropic\n"),
                      encoding="utf-8")
    git(repo, "commit", "-q", "-am", "the anthropic backend")
    git(repo, "push", "-q")
    before = close_day(datetime.now(UTC), UTC, load_config(repo).close.late_hours).isoformat()

    run = run_action(repo, {"command": "close", "args": "--no-llm"}, bin_dir=action_venv,
                     scratch=tmp_path / "runner", runner_temp=runner_temp)

    assert run.ok, run.describe()
    assert "gitmem.yaml needs the extras: agent" in run.steps[1].out
    venv = runner_temp / "gitmem-venv" / "bin"
    assert subprocess.run([str(venv / "python"), "-c", "import anthropic"], capture_output=True).returncode == 0
    # The close closes the day it belongs to in the configured zone (UTC): today, or yesterday within
    # close.late_hours of midnight (GitHub runs a 23:47 close late); a run across the boundary may close either.
    days = {before, close_day(datetime.now(UTC), UTC, load_config(repo).close.late_hours).isoformat()}
    subjects = origin_log(tmp_path / "origin.git")
    assert subjects[0] in {f"gitmem: close {day}" for day in days}, subjects
    day = subjects[0].removeprefix("gitmem: close ")
    assert subjects[1:3] == ["the anthropic backend", "gitmem: cycle 1 · built · write notes/hello.md"]
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


def source_digest() -> str:
    """What the plan step's key digests: pyproject.toml and every file of gitmem/ but bytecode, as sha256sum
    lines in byte order of their paths, hashed again."""
    files = sorted([ROOT / "pyproject.toml", *(f for f in (ROOT / "gitmem").rglob("*")
                                               if f.is_file() and f.suffix != ".pyc")],
                   key=lambda f: f.relative_to(ROOT).as_posix().encode())
    lines = "".join(f"{hashlib.sha256(f.read_bytes()).hexdigest()}  {f.relative_to(ROOT).as_posix()}\n"
                    for f in files)
    return hashlib.sha256(lines.encode()).hexdigest()[:16]


def test_check_installs_the_base_package_and_a_cache_hit_of_the_same_gitmem_installs_nothing(
        tmp_path: Path, action_venv: Path, tmp_path_factory: pytest.TempPathFactory) -> None:
    temp = tmp_path_factory.mktemp("runner-temp-check")
    repo = agent_repo(tmp_path / "agent", tmp_path / "origin.git")
    cold = run_action(repo, {"command": "check"}, bin_dir=action_venv, scratch=tmp_path / "cold", runner_temp=temp)
    assert cold.ok, cold.describe()
    assert cold.step_outputs["plan"]["extras"] == "" and "-base-" in cold.step_outputs["plan"]["deps-key"]
    assert cold.outputs["outcome"] == "clean" and "### gitmem check: clean" in cold.summary
    venv = temp / "gitmem-venv" / "bin"
    assert subprocess.run([str(venv / "python"), "-c", "import anthropic"], capture_output=True).returncode != 0
    source = temp / "gitmem-venv" / "gitmem-source"
    assert source.read_text(encoding="utf-8").strip() == cold.step_outputs["plan"]["source"]
    installed = (venv / "gitmem").stat().st_mtime_ns
    # As the next run finds it once actions/cache/restore hit the full key: this very gitmem is in the venv.
    warm = run_action(repo, {"command": "check"}, bin_dir=action_venv, scratch=tmp_path / "warm", runner_temp=temp,
                      uses_outputs={"deps-cache": {"cache-hit": "true"}})
    assert warm.ok, warm.describe()
    assert warm.steps[1].out.strip().startswith("gitmem, version ")
    assert (venv / "gitmem").stat().st_mtime_ns == installed, "nothing was built or installed again"
    # Restored by the prefix: the same dependencies, saved by another gitmem. gitmem alone is installed again.
    source.write_text("0123456789abcdef\n", encoding="utf-8")
    older = run_action(repo, {"command": "check"}, bin_dir=action_venv, scratch=tmp_path / "older",
                       runner_temp=temp)
    assert older.ok, older.describe()
    assert (venv / "gitmem").stat().st_mtime_ns != installed, "gitmem itself was reinstalled from the action path"
    assert source.read_text(encoding="utf-8").strip() == older.step_outputs["plan"]["source"]


PLAN_ONLY = ("Install gitmem from this action's own checkout", "Install the agent sandbox",
             "Configure the git identity", "Run gitmem")


@pytest.mark.parametrize(("command", "key", "extras"), [("cycle", "sk-ant-test", "agent"),
                                                        ("close", "sk-ant-test", "agent"), ("cycle", "", ""),
                                                        ("check", "sk-ant-test", "")])
def test_only_a_cycle_or_close_given_the_anthropic_key_plans_the_agent_extra(tmp_path: Path, command: str,
                                                                            key: str, extras: str) -> None:
    run = run_action(tmp_path, {"command": command, "anthropic-api-key": key}, bin_dir=project_bin(),
                     scratch=tmp_path / "runner", skip=PLAN_ONLY)
    assert run.ok, run.describe()
    plan = run.step_outputs["plan"]
    assert plan["extras"] == extras and f"-{extras or 'base'}-" in plan["deps-key"]
    assert all("sk-ant-test" not in value for value in plan.values())


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


# The agent holds the cycle's placeholders under both of Codex's names, never the key, and the endpoint of the
# runner's key proxy that adds it (gitmem.agents.key_stand_in); a run without the key gets no placeholder.
KEY_CHECK = ('  backend: command\n  command: \'sh -c "test \\"$OPENAI_API_KEY\\" != {0} && '
             'test \\"$CODEX_API_KEY\\" != {0} && test \\"${{OPENAI_API_KEY#gitmem-placeholder-}}\\" != '
             '\\"$OPENAI_API_KEY\\" && test \\"${{CODEX_API_KEY#gitmem-placeholder-}}\\" != \\"$CODEX_API_KEY\\" '
             '&& test \\"${{OPENAI_BASE_URL#http://127.0.0.1:}}\\" != \\"$OPENAI_BASE_URL\\""\'')


@pytest.mark.parametrize(("given", "job_env", "seen"), [("sk-openai-input", {}, "sk-openai-input"),
                                                        ("", {"OPENAI_API_KEY": "sk-job", "CODEX_API_KEY": "sk-job"},
                                                         "sk-job")])
def test_the_openai_key_input_reaches_the_agent_under_both_names_and_is_never_printed(
        tmp_path: Path, given: str, job_env: dict[str, str], seen: str) -> None:
    # The agent (a command that fails unless it got placeholders for the key under both of Codex's names) ends
    # the cycle no-build with exit 0 only when it did; an empty input leaves the key the job's own env: sets.
    repo = agent_repo(tmp_path / "agent", tmp_path / "origin.git", backend=KEY_CHECK.format(seen))
    config = repo / "gitmem.yaml"
    keys = "    - ANTHROPIC_API_KEY\n    - OPENAI_API_KEY\n    - CODEX_API_KEY\n"
    config.write_text(config.read_text(encoding="utf-8").replace("    - ANTHROPIC_API_KEY\n", keys), encoding="utf-8")
    git(repo, "commit", "-q", "-am", "Codex's keys pass to the agent")
    git(repo, "push", "-q")
    run = run_action(repo, {"command": "cycle", "openai-api-key": given}, bin_dir=project_bin(),
                     scratch=tmp_path / "runner", skip=INSTALL, env=job_env)
    assert run.ok, run.describe()
    assert run.outputs["outcome"] == "no-build"
    printed = run.summary + "".join(step.out + step.err for step in run.steps)
    assert "sk-openai-input" not in printed and "sk-job" not in printed

