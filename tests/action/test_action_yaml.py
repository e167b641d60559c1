"""The composite action and the shipped workflows, parsed with ruamel.yaml: shape, safety and schedules."""
from __future__ import annotations

import re
from pathlib import Path

import pytest
from ruamel.yaml import YAML

ROOT = Path(__file__).resolve().parents[2]
WORKFLOWS = sorted((ROOT / "template-repo" / ".github" / "workflows").glob("*.yml")) + sorted(
    (ROOT / ".github" / "workflows").glob("*.yml"))
EXPRESSION = re.compile(r"\$\{\{")


def load(path: Path):
    return YAML(typ="rt").load(path.read_text(encoding="utf-8"))


def steps_of(document) -> list:
    if "runs" in document:
        return list(document["runs"]["steps"])
    return [step for job in document["jobs"].values() for step in job.get("steps", [])]


@pytest.fixture(scope="module")
def action():
    return load(ROOT / "action.yml")


def test_action_is_composite_with_the_documented_inputs_and_outputs(action):
    assert action["runs"]["using"] == "composite"
    assert set(action["inputs"]) == {"command", "anthropic-api-key", "openai-api-key", "model", "push-mode",
                                     "python-version", "args", "github-token", "agent-cli"}
    assert action["inputs"]["push-mode"]["default"] == "direct"
    for name in ("cycle", "outcome", "commit"):
        assert action["outputs"][name]["value"] == f"${{{{ steps.run.outputs.{name} }}}}"


def test_action_installs_itself_from_the_action_path(action):
    install = next(s for s in action["runs"]["steps"] if s.get("name", "").startswith("Install gitmem from"))
    assert '-m pip --python "$GITMEM_VENV/bin/python" install' in install["run"]
    assert '"$GITHUB_ACTION_PATH"' in install["run"]


@pytest.mark.parametrize("path", [ROOT / "action.yml", *WORKFLOWS], ids=lambda p: p.name)
def test_every_run_step_has_a_shell_and_no_interpolated_expression(path):
    document = load(path)
    for step in steps_of(document):
        if "run" not in step:
            continue
        if "runs" in document:  # composite actions require an explicit shell on every run step
            assert step.get("shell") == "bash", step.get("name")
        assert not EXPRESSION.search(step["run"]), f"{path.name}: `${{{{` inside the script of {step.get('name')}"


def test_action_inputs_reach_scripts_only_through_env(action):
    for step in action["runs"]["steps"]:
        for _key, value in (step.get("env") or {}).items():
            assert isinstance(value, str)
        if "run" in step:
            assert "inputs." not in step["run"]
    run = next(s for s in action["runs"]["steps"] if s.get("id") == "run")
    env = run["env"]
    assert env["GITMEM_COMMAND"] == "${{ inputs.command }}"
    assert env["ANTHROPIC_API_KEY"] == "${{ inputs.anthropic-api-key }}"
    assert env["GITMEM_OPENAI_API_KEY"] == "${{ inputs.openai-api-key }}"
    # The keys reach the Run step alone (the plan step learns only whether the Anthropic key is set).
    for step in action["runs"]["steps"]:
        values = " ".join(str(v) for v in (step.get("env") or {}).values())
        if step.get("id") != "run":
            assert "inputs.openai-api-key" not in values and "${{ inputs.anthropic-api-key }}" not in values
    assert "$GITMEM_COMMAND" in run["run"]


CRON_FIELD = re.compile(r"^(\*|\d+(-\d+)?)(/\d+)?(,(\*|\d+(-\d+)?)(/\d+)?)*$")
CRON_RANGES = ((0, 59), (0, 23), (1, 31), (1, 12), (0, 6))


def valid_cron(expression: str) -> bool:
    fields = expression.split()
    if len(fields) != 5:
        return False
    for field, (low, high) in zip(fields, CRON_RANGES, strict=True):
        if not CRON_FIELD.match(field):
            return False
        numbers = [int(n) for n in re.findall(r"\d+", field.split("/")[0])]
        if any(n < low or n > high for n in numbers):
            return False
    return True


def test_memory_workflow_schedules_concurrency_and_permissions():
    path = ROOT / "template-repo" / ".github" / "workflows" / "gitmem.yml"
    flow = load(path)
    crons = [entry["cron"] for entry in flow["on"]["schedule"]]
    assert crons == ["17 */3 * * *", "47 23 * * *"]
    for cron in crons:
        assert valid_cron(cron)
        minute = int(cron.split()[0])
        assert minute % 2 == 1 and minute not in (0, 30), "scheduled runs avoid the top of the hour"
    assert "workflow_dispatch" in flow["on"]
    assert list(flow["on"]["workflow_dispatch"]["inputs"]["command"]["options"]) == ["cycle", "close", "check"]
    assert "concurrency" not in flow and dict(flow["permissions"]) == {}, "each job asks for what it needs"
    jobs = flow["jobs"]
    assert set(jobs) == {"cycle", "close", "check"}
    # Each schedule (and each manual choice) runs exactly its own job.
    for job_id, cron in (("cycle", crons[0]), ("close", crons[1])):
        condition = jobs[job_id]["if"]
        assert f"github.event.schedule == '{cron}'" in condition and f"inputs.command == '{job_id}'" in condition
        assert jobs[job_id]["steps"][-1]["with"]["command"] == job_id
        assert dict(jobs[job_id]["permissions"]) == {"contents": "write"}
        assert jobs[job_id]["environment"] == "gitmem"
        assert jobs[job_id]["steps"][-1]["with"]["anthropic-api-key"] == "${{ secrets.ANTHROPIC_API_KEY }}"
    assert "inputs.command == 'check'" in jobs["check"]["if"] and "schedule" not in jobs["check"]["if"]
    assert dict(jobs["check"]["permissions"]) == {"contents": "read"} and "environment" not in jobs["check"]
    # GitHub keeps one pending run per concurrency group and a newly queued run replaces it: the close has
    # a group of its own, so no queued cycle can ever replace a pending close; nothing running is cancelled.
    groups = {job_id: dict(jobs[job_id]["concurrency"]) for job_id in ("cycle", "close")}
    assert groups == {"cycle": {"group": "gitmem-cycle", "cancel-in-progress": False},
                      "close": {"group": "gitmem-close", "cancel-in-progress": False}}
    text = path.read_text(encoding="utf-8")
    for limit in ("delays", "60 days", "do not trigger other workflows", "one run pending", "replaces the pending",
                  "never replaced"):
        assert limit in text, limit


def test_check_workflow_runs_verify_with_github_annotations():
    flow = load(ROOT / "template-repo" / ".github" / "workflows" / "gitmem-check.yml")
    assert set(flow["on"]) == {"pull_request", "push"}
    assert dict(flow["permissions"]) == {"contents": "read"}
    concurrency = dict(flow["concurrency"])
    assert "pull_request.number" in concurrency["group"] and "github.sha" in concurrency["group"]
    assert concurrency["cancel-in-progress"] == "${{ github.event_name == 'pull_request' }}"
    step = next(s for s in steps_of(flow) if str(s.get("uses", "")).startswith("gitmem-agent/gitmem"))
    assert step["with"]["command"] == "verify"
    assert "--range" in step["with"]["args"] and "--branch {2}" in step["with"]["args"]
    checkout = next(s for s in steps_of(flow) if str(s.get("uses", "")).startswith("actions/checkout@"))
    assert checkout["with"]["fetch-depth"] == 0
    action = load(ROOT / "action.yml")
    run = next(s for s in action["runs"]["steps"] if s.get("id") == "run")["run"]
    assert "gitmem verify --format github" in run


def test_project_ci_covers_three_pythons_lints_the_workflows_and_self_tests_the_local_action():
    flow = load(ROOT / ".github" / "workflows" / "ci.yml")
    assert list(flow["jobs"]["tests"]["strategy"]["matrix"]["python-version"]) == ["3.11", "3.12", "3.13"]
    uses = [s.get("uses") for s in flow["jobs"]["action-self-test"]["steps"]]
    assert uses.count("./gitmem-src") == 2
    commands = [s["with"]["command"] for s in flow["jobs"]["action-self-test"]["steps"]
                if s.get("uses") == "./gitmem-src"]
    assert commands == ["check", "cycle"]
    lint = "\n".join(s.get("run", "") for s in flow["jobs"]["lint-workflows"]["steps"])
    assert "zizmor --offline --persona auditor action.yml .github template-repo/.github" in lint
    for schema in ("vendor.github-actions", "vendor.github-workflows", "custom.github-workflows-require-timeout"):
        assert f"--builtin-schema {schema}" in lint


def test_project_ci_lints_and_type_checks_as_ci_run_does():
    """One CI definition for lint and types: the workflow's tests job and `.ci/run` both call `.ci/lint`, before
    the tests, and `.ci/lint` runs ruff and mypy as pyproject.toml configures them."""
    flow = load(ROOT / ".github" / "workflows" / "ci.yml")
    runs = [s.get("run", "") for s in flow["jobs"]["tests"]["steps"]]
    assert ".ci/lint" in runs
    assert runs.index(".ci/lint") < next(i for i, run in enumerate(runs) if "pytest" in run)
    local = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    assert ".ci/lint" in local and local.index(".ci/lint") < local.index(".venv/bin/pytest")
    lint = (ROOT / ".ci" / "lint").read_text(encoding="utf-8")
    assert '-m ruff check gitmem tests benchmarks' in lint and '-m mypy' in lint
    assert (ROOT / ".ci" / "lint").stat().st_mode & 0o111


def test_action_caches_its_dependencies_by_its_own_pyproject_and_the_recall_index():
    action = load(ROOT / "action.yml")
    steps = {s.get("name"): s for s in action["runs"]["steps"]}
    plan = steps["Plan the install and the caches"]["run"]
    assert 'sha256sum "$GITHUB_ACTION_PATH/pyproject.toml"' in plan and "hashFiles" in plan
    restore = steps["Restore the cached dependencies"]
    assert restore["uses"].startswith("actions/cache/restore@")
    assert restore["with"]["key"] == "${{ steps.plan.outputs.deps-key }}"
    save = steps["Save the dependencies for the next run"]
    assert save["uses"].startswith("actions/cache/save@") and "cache-hit != 'true'" in save["if"]
    index = [s for s in action["runs"]["steps"] if "recall index" in s.get("name", "")]
    assert [s["uses"].split("@")[0] for s in index] == ["actions/cache/restore", "actions/cache/save"]
    for step in index:
        assert step["with"]["path"].split() == [".git/gitmem/*", "!.git/gitmem/cycle.lock"]
        assert step["with"]["key"] == "${{ steps.plan.outputs.state-key }}"
        assert "inputs.command == 'cycle'" in step["if"] and "inputs.command == 'close'" in step["if"]
    assert index[0]["with"]["restore-keys"] == "${{ steps.plan.outputs.state-prefix }}"
    assert index[1]["if"].startswith("always()")
    run = steps["Run gitmem"]["run"]
    assert "trap" in run and 'echo "outcome=error"' in run


def _cache_steps() -> list[tuple[str, list[str]]]:
    found = []
    fleet = sorted((ROOT / "template-fleet" / ".github" / "workflows").glob("*.yml"))
    for path in [ROOT / "action.yml", *WORKFLOWS, *fleet]:
        for step in steps_of(load(path)):
            if str(step.get("uses", "")).startswith("actions/cache"):
                found.append((f"{path.name}: {step.get('name')}", str(step["with"]["path"]).split()))
    return found


def test_a_cache_exclusion_is_never_inside_a_folder_the_cache_takes_whole():
    """actions/cache matches its paths without implicit descendants and hands tar the folders it matched, which
    tar takes whole: `!dir/file` under a listed `dir` excludes nothing (actions/toolkit#713). It works only
    against a sibling matched by a glob (`dir/*`). So the cycle lock a cycle killed by the job's timeout left
    in .git/gitmem was saved, and every later run restored a lock held "on another host" and refused to start,
    a schedule that never heals; excluded as a sibling it is never saved."""
    steps = _cache_steps()
    assert any(r"!.git/gitmem/cycle.lock" in paths for _, paths in steps)
    for where, paths in steps:
        taken = [path.rstrip("/") for path in paths if not path.startswith("!")]
        for excluded in (path[1:] for path in paths if path.startswith("!")):
            assert excluded.rsplit("/", 1)[0] + "/*" in taken, (where, excluded)
            assert not [path for path in taken if excluded.startswith(path + "/")], (where, excluded)


def test_cron_validator_rejects_nonsense():
    assert not valid_cron("61 * * * *")
    assert not valid_cron("* * *")
    assert valid_cron("17 */3 * * *")


def _state_key(tmp_path: Path, args: str = "", **github: str) -> dict[str, str]:
    """The plan step's state-key and state-prefix, run as the runner would, for one repository/ref/run."""
    import subprocess

    step = next(s for s in load(ROOT / "action.yml")["runs"]["steps"] if s.get("id") == "plan")
    output = tmp_path / f"output-{len(list(tmp_path.iterdir()))}"
    env = {"PATH": "/usr/bin:/bin", "GITHUB_ACTION_PATH": str(ROOT), "RUNNER_TEMP": str(tmp_path),
           "RUNNER_OS": "Linux", "RUNNER_ARCH": "X64", "GITHUB_OUTPUT": str(output), "GITMEM_COMMAND": "cycle",
           "GITMEM_ARGS": args, "PYTHON_VERSION": "3.12.1", "GITHUB_REPOSITORY": "ada/notes",
           "GITHUB_REPOSITORY_ID": "101", "GITHUB_REF": "refs/heads/main", "GITHUB_RUN_ID": "7",
           "GITHUB_RUN_ATTEMPT": "1", **github}
    done = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", step["run"]], env=env,
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return dict(line.split("=", 1) for line in output.read_text().splitlines())


def test_the_state_cache_key_is_one_repositorys_ref_and_workspace_and_restores_only_its_own(tmp_path: Path):
    base = _state_key(tmp_path)
    assert re.fullmatch(r"gitmem-state-[0-9a-f]{32}-", base["state-prefix"])
    assert base["state-key"] == base["state-prefix"] + "7-1"
    # The same memory in a later run restores from this one: its prefix matches the earlier key.
    later = _state_key(tmp_path, GITHUB_RUN_ID="8", GITHUB_RUN_ATTEMPT="2")
    assert later["state-prefix"] == base["state-prefix"] and later["state-key"] != base["state-key"]
    assert base["state-key"].startswith(later["state-prefix"])
    # Another repository (by name or id, even one whose name extends this one's), ref or workspace never does.
    others = [_state_key(tmp_path, GITHUB_REPOSITORY="eve/notes", GITHUB_REPOSITORY_ID="666"),
              _state_key(tmp_path, GITHUB_REPOSITORY="ada/notes-main", GITHUB_REPOSITORY_ID="102"),
              _state_key(tmp_path, GITHUB_REPOSITORY_ID="102"),
              _state_key(tmp_path, GITHUB_REF="refs/heads/feature"),
              _state_key(tmp_path, GITHUB_REF="refs/pull/3/merge"),
              _state_key(tmp_path, "--no-llm --workspace ops"),
              _state_key(tmp_path, "-w ops"),
              _state_key(tmp_path, "--workspace=ops2")]
    assert _state_key(tmp_path, "--workspace=ops")["state-prefix"] == others[5]["state-prefix"] == \
        others[6]["state-prefix"]
    for one in [base, *others]:
        for other in [base, *others]:
            if one["state-prefix"] != other["state-prefix"]:
                assert not other["state-key"].startswith(one["state-prefix"])
    assert len({o["state-prefix"] for o in [base, *others]}) == len(others)      # -w ops and --workspace ops


def test_the_check_workflow_verifies_every_workspace():
    flow = load(ROOT / "template-repo" / ".github" / "workflows" / "gitmem-check.yml")
    step = next(s for s in steps_of(flow) if str(s.get("uses", "")).startswith("gitmem-agent/gitmem"))
    # No --workspace: `gitmem verify` checks the default workspace and every one in `workspaces:`.
    assert "--workspace" not in step["with"]["args"] and "-w " not in step["with"]["args"]


def test_the_cycle_installs_bubblewrap_and_lets_it_make_user_namespaces(action) -> None:
    """agent.sandbox needs bwrap, and Ubuntu 24.04 runners restrict unprivileged user namespaces (AppArmor)."""
    step = next(s for s in action["runs"]["steps"] if s.get("name") == "Install the agent sandbox")
    names = [s.get("name") for s in action["runs"]["steps"]]
    assert names.index("Install the agent sandbox") < names.index("Run gitmem")
    assert step["if"] == "inputs.command == 'cycle'"
    assert "sudo apt-get install -y bubblewrap" in step["run"]
    assert "sudo sysctl -w kernel.apparmor_restrict_unprivileged_userns=0" in step["run"]
    # Fails the step if the sandbox still cannot work, probed as gitmem probes it (the same options; the
    # runner user is uid 1001).
    from gitmem.agents.sandbox import unprivileged

    assert f"bwrap {' '.join(unprivileged(1001))} --ro-bind / / true" in step["run"]


def test_the_workspace_in_args_is_read_in_every_form_the_cli_reads(tmp_path: Path):
    """click reads `-wops` as `-w ops`: the action must too, or a run with `args: -wops` works on the ops memory
    while its cache (and, in pull-request mode, its pull-request steps) take the default workspace's."""
    forms = ["--workspace ops", "-w ops", "--workspace=ops", "-wops", "--no-llm -wops"]
    keys = [_state_key(tmp_path, args) for args in forms]
    assert {key["workspace"] for key in keys} == {"ops"}
    assert len({key["state-prefix"] for key in keys}) == 1
    assert _state_key(tmp_path, "--no-llm")["workspace"] == ""


def test_the_comment_that_suggests_another_close_time_says_the_jobs_condition_changes_with_it() -> None:
    """Each scheduled job runs only when `github.event.schedule` is exactly its own cron string. The template's
    comment tells a user in another time zone to shift the close's hour ("47 22 * * *"); done as written, with the
    `if:` still naming "47 23 * * *", no job matched that schedule and the daily close never ran again."""
    text = (ROOT / "template-repo" / ".github" / "workflows" / "gitmem.yml").read_text(encoding="utf-8")
    comment = text[text.index("# The daily close."):text.index('- cron: "47 23 * * *"')]
    assert '"47 22 * * *"' in comment
    assert "if:" in comment and "github.event.schedule" in comment, comment
    cycle_line = next(line for line in text.splitlines() if '- cron: "17 */3 * * *"' in line)
    assert "`if:`" in cycle_line and "change both" in cycle_line
