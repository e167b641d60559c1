"""The scripted backend replays YAML tool calls in a real repository; the registry picks backends by name."""
from __future__ import annotations

import importlib.util
import time
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

import pytest

from gitmem.agents.base import AgentError
from gitmem.agents.scripted import ScriptedBackend, ScriptError, load_script
from gitmem.agents.selection import BackendChoiceError, backend_for, backend_name
from gitmem.checks.check_and_verify import check_worktree
from gitmem.config import load_config
from gitmem.cycle.budget import build_request
from gitmem.memory import log, now
from gitmem.workspace import Workspace
from tests.support.helpers import GitRepo

NOW = datetime(2026, 11, 30, 9, 30, tzinfo=UTC)

SCRIPT = """\
cycles:
  1:
    - tool: write_file
      input: {path: hello.py, content: "print('hi')\\n"}
    - tool: write_file
      input: {path: LOG.md, content: "# LOG\\n"}
    - tool: log_entry
      input: {task: say hello, outcome: built, result: "hello.py prints hi (cycle {{cycle}})"}
    - tool: now_block
      input: {did: wrote hello.py, human: nothing, next: tests}
  2:
    - crash: "model API went away"
  3:
    - sleep: 30
  default:
    - tool: log_entry
      input: {task: idle, outcome: no-build, result: "nothing to do in cycle {{cycle}}"}
"""


def request_for(repo: GitRepo, cycle: int, *, deadline: float | None = None):
    config = load_config(repo.path)
    return build_request(Workspace.at(repo.path, config), cycle=cycle, now=NOW, clock=lambda: NOW, deadline=deadline,
                         backend="scripted")


def test_a_cycle_replays_its_steps(memrepo: GitRepo) -> None:
    memrepo.write("agent.yaml", SCRIPT)
    backend = ScriptedBackend(load_config(memrepo.path), script="agent.yaml")
    result = backend.run(request_for(memrepo, 1))
    assert result.turns == 4 and result.stop_reason == "script_end"
    assert memrepo.read("hello.py") == "print('hi')\n"
    entry = log.parse(memrepo.read("LOG.md")).entries[-1]
    assert (entry.cycle, entry.outcome, entry.get("Result")) == (1, "built", "hello.py prints hi (cycle 1)")
    assert str(entry.when) == "2026-11-30 09:30 UTC"
    assert "- Did: wrote hello.py" in now.parse(memrepo.read("NOW.md")).top.body
    # The direct LOG write was refused and recorded; the memory stays valid.
    assert result.notes == ["refused write_file: 'LOG.md' is a memory file: write it with the memory tools "
                            "(log_entry, now_block, ask_decision, add_lesson, confirm_lesson), not file tools"]
    assert [v for v in check_worktree(memrepo.ws()) if v.is_error] == []


def test_default_steps_and_list_form(memrepo: GitRepo, tmp_path: Path) -> None:
    memrepo.write("agent.yaml", SCRIPT)
    ScriptedBackend(load_config(memrepo.path), script="agent.yaml").run(request_for(memrepo, 7))
    assert log.parse(memrepo.read("LOG.md")).entries[-1].get("Result") == "nothing to do in cycle 7"
    listed = tmp_path / "list.yaml"
    listed.write_text("cycles:\n  - []\n  - [{tool: now_block, input: {did: a, human: b, next: c}}]\n")
    script = load_script(listed)
    assert sorted(script) == ["1", "2"] and script["1"] == [] and script["2"][0].tool == "now_block"
    backend = ScriptedBackend(load_config(memrepo.path), script=listed)   # an absolute path works too
    assert backend.run(request_for(memrepo, 1)).turns == 0
    assert backend.run(request_for(memrepo, 2)).turns == 1
    assert now.parse(memrepo.read("NOW.md")).top.cycle == 2


def test_crash_raises_agent_error_after_earlier_steps(memrepo: GitRepo) -> None:
    memrepo.write("agent.yaml", "cycles:\n  2:\n    - tool: write_file\n      input: {path: half.txt, content: x}\n"
                                "    - crash: model API went away\n")
    with pytest.raises(AgentError, match="^model API went away$"):
        ScriptedBackend(load_config(memrepo.path), script="agent.yaml").run(request_for(memrepo, 2))
    assert memrepo.read("half.txt") == "x"   # partial work is left for the runner to salvage


def test_sleep_past_the_deadline_times_out(memrepo: GitRepo) -> None:
    memrepo.write("agent.yaml", SCRIPT)
    started = time.monotonic()
    with pytest.raises(AgentError, match="timed out"):
        ScriptedBackend(load_config(memrepo.path), script="agent.yaml").run(
            request_for(memrepo, 3, deadline=time.monotonic() + 0.3))
    assert 0.25 < time.monotonic() - started < 2.0


@pytest.mark.parametrize(("text", "message"), [
    ("cycles: 3\n", "expected `cycles:`"),
    ("cycles:\n  1: {tool: x}\n", "cycles.1: expected a list of steps"),
    ("cycles:\n  1:\n    - {tool: x, crash: y}\n", "cycles.1 step 1: a step is one of"),
    ("cycles:\n  1:\n    - {sleep: soon}\n", "sleep needs a number"),
    ("cycles:\n  1:\n    - {tool: x, input: [1]}\n", "input must be a mapping"),
    ("cycles: [\n", "invalid YAML"),
])
def test_malformed_scripts_name_the_problem(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    with pytest.raises(ScriptError, match="bad.yaml") as caught:
        load_script(path)
    assert message in str(caught.value)


def test_missing_script_is_an_agent_error(memrepo: GitRepo) -> None:
    with pytest.raises(AgentError, match="cannot read the agent script"):
        ScriptedBackend(load_config(memrepo.path), script="nope.yaml").run(request_for(memrepo, 1))


# -- the registry ----------------------------------------------------------------------------------------------

def test_no_backend_and_no_key_says_how_to_choose(memrepo: GitRepo) -> None:
    config = load_config(memrepo.path)
    with pytest.raises(BackendChoiceError) as caught:
        backend_for(config, environ={})
    text = str(caught.value)
    assert "ANTHROPIC_API_KEY" in text and "agent.backend" in text and "--agent" in text
    assert backend_name(config, environ={"ANTHROPIC_API_KEY": "sk-ant-x"}) == "anthropic"
    with pytest.raises(BackendChoiceError, match="unknown agent backend 'gpt'"):
        backend_for(config, "gpt", environ={})


def test_scripted_and_anthropic_are_built_by_name(memrepo: GitRepo) -> None:
    config = load_config(memrepo.path)
    with pytest.raises(BackendChoiceError, match="agent.script"):
        backend_for(config, "scripted", environ={})
    scripted = backend_for(replace(config, agent=replace(config.agent, backend="scripted", script="s.yaml")),
                           environ={})
    assert isinstance(scripted, ScriptedBackend) and scripted.script == "s.yaml"
    assert backend_for(config, "scripted", script="x.yaml").script == "x.yaml"
    anthropic = backend_for(config, environ={"ANTHROPIC_API_KEY": "sk-ant-x"})
    assert anthropic.name == "anthropic"


def test_command_backend_is_loaded_lazily(memrepo: GitRepo) -> None:
    config = load_config(memrepo.path)
    with pytest.raises(BackendChoiceError, match="agent.command"):
        backend_for(config, "command", environ={})
    with_command = replace(config, agent=replace(config.agent, command="my-agent --print"))
    if importlib.util.find_spec("gitmem.agents.command") is None:
        with pytest.raises(BackendChoiceError, match="command backend is not available"):
            backend_for(with_command, "command", environ={})
    else:
        assert backend_for(with_command, "command", environ={}).name == "command"
