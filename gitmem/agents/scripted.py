"""The `scripted` backend: replays a YAML script of tool calls, one list of steps per cycle. Tests and the demo.

The script (agent.script in gitmem.yaml, relative to the repository root, or a path given to the backend)::

    cycles:
      1:                                   # steps for cycle 1
        - tool: write_file
          input: {path: hello.py, content: "print('hi')\\n"}
        - tool: log_entry
          input: {task: say hello, outcome: built, result: "hello.py prints hi in cycle {{cycle}}"}
        - tool: now_block
          input: {did: wrote hello.py, human: nothing, next: tests}
      2:
        - crash: "the model API went away"  # raises AgentError here: the runner salvages
      3:
        - sleep: 5                          # seconds; past the request deadline it raises AgentError
      default:                              # any cycle without its own list
        - tool: log_entry
          input: {task: idle, outcome: no-build, result: nothing to do}

`cycles` may also be a list, whose first item holds cycle 1's steps, the second cycle 2's, and so on.
A cycle with no steps (and no `default`) does nothing, so the runner writes its `no-build` entry.
Each step is exactly one of `tool` (+ optional `input` mapping), `crash` (message) or `sleep` (seconds).
In any string of an input, `{{cycle}}` becomes the cycle number and `{{timestamp}}` the request timestamp.
The tools are the anthropic backend's (gitmem.agents.tools), with the same confinement and refusals;
a refused or failed call is recorded in the result's notes and the script goes on.
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gitmem.agents.base import AgentError, AgentResult, CycleRequest
from gitmem.agents.tools import Toolbox
from gitmem.config import Config
from gitmem.config.nesting import TooDeep, parsing, within_depth, yaml_loader


class ScriptError(AgentError):
    """The script cannot be read or is malformed; the message names the script and the step."""


@dataclass(frozen=True)
class Step:
    kind: str            # tool | crash | sleep
    tool: str = ""
    input: Any = None
    message: str = ""
    seconds: float = 0.0


def load_script(path: Path) -> dict[str, list[Step]]:
    """Cycle key ("1", "2", …, "default") -> steps."""
    from ruamel.yaml.error import YAMLError

    try:
        with parsing():
            data = within_depth(yaml_loader("safe").load(path.read_text(encoding="utf-8")))
    except TooDeep as err:
        raise ScriptError(f"{path}: {err}") from None
    except OSError as err:
        raise ScriptError(f"{path}: cannot read the agent script ({err.strerror or err})") from None
    except YAMLError as err:
        raise ScriptError(f"{path}: invalid YAML: {err}") from None
    cycles = data.get("cycles") if isinstance(data, dict) else None
    if isinstance(cycles, list):
        cycles = {str(n): steps for n, steps in enumerate(cycles, 1)}
    if not isinstance(cycles, dict):
        raise ScriptError(f"{path}: expected `cycles:` holding a mapping of cycle number to steps, or a list")
    return {str(key): _steps(path, str(key), steps) for key, steps in cycles.items()}


def _steps(path: Path, key: str, steps: Any) -> list[Step]:
    if steps is None:
        return []
    if not isinstance(steps, list):
        raise ScriptError(f"{path}: cycles.{key}: expected a list of steps")
    out: list[Step] = []
    for number, step in enumerate(steps, 1):
        where = f"{path}: cycles.{key} step {number}"
        if not isinstance(step, dict) or len({"tool", "crash", "sleep"} & set(step)) != 1:
            raise ScriptError(f"{where}: a step is one of {{tool: NAME, input: {{…}}}}, {{crash: MESSAGE}}, "
                              "{sleep: SECONDS}")
        if "tool" in step:
            if not isinstance(step.get("input", {}), dict):
                raise ScriptError(f"{where}: input must be a mapping")
            out.append(Step("tool", tool=str(step["tool"]), input=step.get("input") or {}))
        elif "crash" in step:
            out.append(Step("crash", message=str(step["crash"])))
        else:
            try:
                out.append(Step("sleep", seconds=float(step["sleep"])))
            except (TypeError, ValueError):
                raise ScriptError(f"{where}: sleep needs a number of seconds") from None
    return out


def _fill(value: Any, request: CycleRequest) -> Any:
    if isinstance(value, str):
        return value.replace("{{cycle}}", str(request.cycle)).replace("{{timestamp}}", request.timestamp)
    if isinstance(value, dict):
        return {k: _fill(v, request) for k, v in value.items()}
    if isinstance(value, list):
        return [_fill(v, request) for v in value]
    return value


class ScriptedBackend:
    name = "scripted"

    def __init__(self, config: Config, *, script: str | Path | None = None) -> None:
        self.config = config
        self.script = script if script is not None else config.agent.script

    def script_path(self, root: Path) -> Path:
        if not self.script:
            raise ScriptError("the scripted backend needs a script: set agent.script in gitmem.yaml")
        path = Path(self.script)
        return path if path.is_absolute() else root / path

    def run(self, request: CycleRequest) -> AgentResult:
        script = load_script(self.script_path(request.root))
        steps = script.get(str(request.cycle), script.get("default", []))
        tools = Toolbox(request.workspace, request.cycle, clock=request.clock)
        result = AgentResult(notes=tools.notes, stop_reason="script_end")
        for step in steps:
            _check_deadline(request)
            result.turns += 1
            if step.kind == "crash":
                raise AgentError(step.message)
            if step.kind == "sleep":
                _sleep(step.seconds, request)
                continue
            outcome = tools.call(step.tool, _fill(step.input, request))
            if outcome.is_error and not outcome.noted:
                tools.notes.append(f"{step.tool} failed: {outcome.text.splitlines()[0]}")
        return result


def _check_deadline(request: CycleRequest) -> None:
    if time.monotonic() > request.deadline:
        raise AgentError(f"timed out: the cycle ran past its {request.config.cycle.timeout} s limit")


def _sleep(seconds: float, request: CycleRequest) -> None:
    """Sleep in short steps so a sleep past the deadline fails at the deadline, not after it."""
    end = time.monotonic() + seconds
    while (left := end - time.monotonic()) > 0:
        _check_deadline(request)
        time.sleep(min(left, 0.05, max(request.deadline - time.monotonic(), 0.001)))
    _check_deadline(request)
