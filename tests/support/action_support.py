"""Run the composite action's steps locally, as a GitHub runner would, against a temp agent repository.

`uses:` steps (setup-python, the caches) are skipped; each `run:` script runs with `bash --noprofile --norc
-eo pipefail` in a clean environment: PATH with the chosen bin dir first (and what earlier steps added to
GITHUB_PATH), the step's `env:` with `${{ inputs.x }}`, `${{ github.token }}` and `${{ steps.ID.outputs.NAME }}`
filled in, its own GITHUB_OUTPUT file (as on a runner), a shared GITHUB_STEP_SUMMARY, GITHUB_ACTION_PATH and
RUNNER_TEMP. A skipped `uses:` step's outputs are empty unless the caller passes them (`uses_outputs`). A
`run:` step's `if:` is honoured in the one form the action uses (`inputs.x != ''`, `inputs.x == 'v'`); any
other expression fails the test.
"""
from __future__ import annotations

import os
import re
import subprocess
import sysconfig
import time
from dataclasses import dataclass, field
from pathlib import Path

from ruamel.yaml import YAML

from tests.support.gitcli import git
from tests.support.helpers import fill_in_rules

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "tests" / "fixtures" / "action" / "script.yaml"
EXPRESSION = re.compile(r"\$\{\{\s*([^}]*?)\s*\}\}")
# What a clean runner environment still needs to reach the package index from this machine.
PASSED_THROUGH = re.compile(r"^(PIP_.*|(HTTPS?|NO|ALL)_PROXY|(https?|no|all)_proxy|SSL_CERT_(FILE|DIR)|"
                            r"REQUESTS_CA_BUNDLE|LANG|LC_ALL|TMPDIR|SYSTEMROOT)$")


def load_yaml(path: Path):
    return YAML(typ="rt").load(path.read_text(encoding="utf-8"))


def project_bin() -> Path:
    """The scripts dir of the interpreter running the tests: where the dev install put `gitmem`."""
    return Path(sysconfig.get_path("scripts"))


@dataclass
class StepRun:
    name: str
    code: int
    out: str
    err: str
    seconds: float = 0.0      # wall time of the step's script (benchmarks/bench_action.py reports it)


@dataclass
class ActionRun:
    steps: list[StepRun] = field(default_factory=list)
    output_files: list[Path] = field(default_factory=list)
    summary_file: Path | None = None
    step_outputs: dict[str, dict[str, str]] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return all(step.code == 0 for step in self.steps)

    @property
    def outputs(self) -> dict[str, str]:
        """The `run` step's $GITHUB_OUTPUT (what the action's outputs map), else every step's, merged."""
        if "run" in self.step_outputs:
            return dict(self.step_outputs["run"])
        merged: dict[str, str] = {}
        for path in self.output_files:
            merged.update(read_outputs(path))
        return merged

    @property
    def summary(self) -> str:
        return self.summary_file.read_text(encoding="utf-8") if self.summary_file else ""

    def describe(self) -> str:
        return "\n".join(f"--- {s.name}: exit {s.code}\n{s.out}{s.err}" for s in self.steps)


def read_outputs(path: Path) -> dict[str, str]:
    """A $GITHUB_OUTPUT file's `name=value` lines, the last value of each name winning (as on GitHub)."""
    text = path.read_text(encoding="utf-8") if path.exists() else ""
    return dict(line.split("=", 1) for line in text.splitlines() if "=" in line)


GIVEN = re.compile(r"^inputs\.([\w-]+) != ''$")
STEP_OUTPUT = re.compile(r"^steps\.([\w-]+)\.outputs\.([\w-]+)$")


def fill(value: str, inputs: dict[str, str], token: str, steps: dict[str, dict[str, str]] | None = None) -> str:
    """Evaluate the only expressions an action's `env:` may use here; anything else is a test failure."""

    def evaluate(match: re.Match[str]) -> str:
        expression = match.group(1)
        if expression == "github.token":
            return token
        given = GIVEN.match(expression)
        if given:                               # `inputs.x != ''`: whether an input is set, as "true"/"false"
            return "true" if inputs[given.group(1)] != "" else "false"
        if expression.startswith("inputs."):
            return inputs[expression.removeprefix("inputs.")]
        found = STEP_OUTPUT.match(expression)
        if found and steps is not None:
            return steps.get(found.group(1), {}).get(found.group(2), "")
        raise AssertionError(f"unexpected expression in the action's env: ${{{{ {expression} }}}}")

    return EXPRESSION.sub(evaluate, value)


CONDITION = re.compile(r"^inputs\.([\w-]+) (==|!=) '([^']*)'$")


def condition(expression: str | None, inputs: dict[str, str]) -> bool:
    """A step's `if:`, for the one form the action uses (`inputs.x != ''`, `inputs.x == 'v'`); None runs."""
    if expression is None:
        return True
    match = CONDITION.match(str(expression).strip())
    assert match, f"unexpected `if:` in the action: {expression}"
    name, operator, value = match.groups()
    return (inputs[name] == value) == (operator == "==")


def clean_env(bin_dir: Path, home: Path) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if PASSED_THROUGH.match(key)}
    # A private HOME keeps the developer's ~/.gitconfig out; pip keeps its shared cache so installs stay quick.
    env.setdefault("PIP_CACHE_DIR", os.environ.get("PIP_CACHE_DIR") or str(
        Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "pip"))
    env.update(PATH=f"{bin_dir}{os.pathsep}{os.environ.get('PATH', os.defpath)}", HOME=str(home),
               GITHUB_ACTIONS="true", CI="true", GIT_TERMINAL_PROMPT="0")
    return env


def run_action(workspace: Path, inputs: dict[str, str], *, bin_dir: Path, scratch: Path, token: str = "ghs_test",
               env: dict[str, str] | None = None, skip: tuple[str, ...] = (), timeout: float = 300,
               runner_temp: Path | None = None, uses_outputs: dict[str, dict[str, str]] | None = None) -> ActionRun:
    """Run action.yml's steps in order in `workspace`; stop at the first failing step, as a runner does.

    `skip` names steps not to run (e.g. the install step when the caller's PATH already has gitmem).
    `runner_temp` (default: inside `scratch`) is RUNNER_TEMP: share it between runs to keep what the install
    step left there, as a restored cache would. `uses_outputs` gives skipped `uses:` steps' outputs by id.
    """
    action = load_yaml(ROOT / "action.yml")
    values = {name: str(spec.get("default", "")) for name, spec in action["inputs"].items()}
    unknown = set(inputs) - set(values)
    assert not unknown, f"not inputs of the action: {unknown}"
    values.update(inputs)
    values = {name: fill(value, {}, token) if name == "github-token" else value for name, value in values.items()}
    scratch.mkdir(parents=True, exist_ok=True)
    (scratch / "home").mkdir(exist_ok=True)
    temp = runner_temp or scratch / "runner-temp"
    temp.mkdir(parents=True, exist_ok=True)
    run = ActionRun(summary_file=scratch / "step_summary", step_outputs=dict(uses_outputs or {}))
    run.summary_file.write_text("", encoding="utf-8")
    path_file = scratch / "github_path"
    path_file.write_text("", encoding="utf-8")
    base = {**clean_env(bin_dir, scratch / "home"), **(env or {}),
            "GITHUB_STEP_SUMMARY": str(run.summary_file), "GITHUB_PATH": str(path_file),
            "GITHUB_ACTION_PATH": str(ROOT), "GITHUB_WORKSPACE": str(workspace), "RUNNER_TEMP": str(temp),
            "RUNNER_OS": "Linux", "RUNNER_ARCH": "X64"}
    for number, step in enumerate(action["runs"]["steps"]):
        if "uses" in step or step.get("name") in skip:
            continue
        if not condition(step.get("if"), values):
            continue
        assert step.get("shell") == "bash"
        output = scratch / f"github_output_{number}"
        output.write_text("", encoding="utf-8")
        run.output_files.append(output)
        added = [line for line in path_file.read_text(encoding="utf-8").splitlines() if line]
        step_env = {**base, "GITHUB_OUTPUT": str(output),
                    "PATH": os.pathsep.join([*reversed(added), base["PATH"]]),
                    **{key: fill(str(value), values, token, run.step_outputs)
                       for key, value in (step.get("env") or {}).items()}}
        began = time.perf_counter()
        done = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", step["run"]],
                              cwd=workspace, env=step_env, capture_output=True, text=True, timeout=timeout)
        run.steps.append(StepRun(step.get("name", ""), done.returncode, done.stdout, done.stderr,
                                 time.perf_counter() - began))
        if step.get("id"):
            run.step_outputs[step["id"]] = read_outputs(output)
        if done.returncode != 0:
            break
    return run


# -- agent repositories ------------------------------------------------------------------------------------

def set_backend(repo: Path, lines: str, *, sandbox: str = "none") -> None:
    """Replace the template's commented `# backend:` line in gitmem.yaml with `lines` (indented under agent:),
    and set agent.sandbox.mode (none: these suites prove the runner's own mechanisms on a plain process)."""
    config = repo / "gitmem.yaml"
    text, count = re.subn(r"(?m)^  # backend: .*$", lambda _: lines.rstrip("\n"),
                          config.read_text(encoding="utf-8"), count=1)
    assert count == 1, "the template's gitmem.yaml no longer has the `# backend:` line to switch"
    text = re.sub(r"(?m)^    mode: auto$", f"    mode: {sandbox}", text)
    config.write_text(text, encoding="utf-8")


def use_scripted_backend(repo: Path, script: Path = SCRIPT) -> None:
    """agent.backend: scripted with the script copied into the repo, as ci.yml's self-test does."""
    (repo / "gitmem-script.yaml").write_bytes(script.read_bytes())
    set_backend(repo, "  backend: scripted\n  script: gitmem-script.yaml")


def agent_repo(path: Path, origin: Path, *, script: Path = SCRIPT, backend: str | None = None,
               sandbox: str = "none") -> Path:
    """`gitmem init`, a backend (the scripted one by default, else `backend` lines for gitmem.yaml's agent:,
    with agent.sandbox.mode `sandbox`), a human's first commit, and a bare `origin` that main tracks."""
    from gitmem.scaffold.init import init

    init(path)
    fill_in_rules(path)
    if backend is None:
        use_scripted_backend(path, script)
    else:
        set_backend(path, backend, sandbox=sandbox)
    git(path, "add", "-A")
    git(path, "commit", "-q", "-m", "agent repository from gitmem init")
    git(path.parent, "init", "-q", "--bare", "-b", "main", str(origin))
    git(path, "remote", "add", "origin", str(origin))
    git(path, "push", "-q", "-u", "origin", "main")
    return path


def origin_log(origin: Path, ref: str = "main") -> list[str]:
    """Subjects on `ref` in the bare origin, newest first."""
    return git(origin, "log", "--format=%s", ref).splitlines()


def origin_file(origin: Path, ref: str, rel: str) -> str:
    return git(origin, "show", f"{ref}:{rel}")
