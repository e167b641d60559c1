"""The memory operations are declared once (gitmem.memory.operations) and every other copy is rendered from it or
held to it: the writer's and the toolbox's signatures, the tools' schemas and the MCP server's list, the
commands' options, the prompt's lists, the commands an agent may run.

Where the copies disagreed, these won (each test below that says "failed before" fails on the old code):
- a field's help: the command's (`--task` "What this cycle set out to do.", not "the one task of this cycle");
  `--outcome` now says "say why in the result", which reads for a tool too;
- a tool's description: the MCP server's (it teaches "once", "Only the human answers"), for a cycle as well;
- the prompt's command list gained `[--supersedes R-NN]`, which the command and the tool took all along.
"""
from __future__ import annotations

import inspect
from typing import Any

import click
import pytest

from gitmem.agents.schemas import MEMORY_TOOLS
from gitmem.agents.tools import MEMORY_COMMANDS_TEXT, MEMORY_TOOLS_TEXT, Toolbox
from gitmem.cli import write
from gitmem.memory.operations import OPERATIONS, Operation, input_schema, usage
from gitmem.memory_writer import MemoryWriter
from gitmem.sessions import mcp_server
from gitmem.sessions.protocol import AGENT_COMMANDS
from tests.support.helpers import GitRepo

# The writer's own keywords, which no agent or command sets: the runner's cycle number and fields, and whether
# the entry is an interactive session's (decided from the environment, not asked).
WRITER_ONLY = {"cycle", "extra", "interactive"}
IDS = [operation.tool for operation in OPERATIONS]


def _required(parameter: inspect.Parameter) -> bool:
    return parameter.default is inspect.Parameter.empty


@pytest.mark.parametrize("operation", OPERATIONS, ids=IDS)
def test_the_writer_takes_the_declared_fields(operation: Operation) -> None:
    parameters = list(inspect.signature(getattr(MemoryWriter, operation.writer)).parameters.values())[1:]
    positional = [p for p in parameters if p.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD]
    keywords = {p.name: p for p in parameters if p.kind is inspect.Parameter.KEYWORD_ONLY}
    assert len(positional) == sum(param.argument for param in operation.params)
    assert all(_required(p) for p in positional)
    options = [param for param in operation.params if not param.argument]
    assert set(keywords) - WRITER_ONLY == {param.name for param in options}
    assert {name: _required(keywords[name]) for name in keywords if name not in WRITER_ONLY} == \
        {param.name: param.required for param in options}
    assert not any(_required(keywords[name]) for name in set(keywords) & WRITER_ONLY)


@pytest.mark.parametrize("operation", OPERATIONS, ids=IDS)
def test_the_tool_takes_the_declared_fields(operation: Operation) -> None:
    parameters = list(inspect.signature(getattr(Toolbox, f"tool_{operation.tool}")).parameters.values())[1:]
    assert [p.name for p in parameters] == [param.name for param in operation.params]
    assert [_required(p) for p in parameters] == [param.required for param in operation.params]
    assert all(p.default is None for p in parameters if not _required(p))


@pytest.mark.parametrize("operation", OPERATIONS, ids=IDS)
def test_the_command_takes_the_declared_fields_with_their_help(operation: Operation) -> None:
    group_name, name = operation.command.split()
    group = next(group for group in write.COMMANDS if group.name == group_name)
    command = group.commands[name]
    params = [p for p in command.params if p.name not in ("as_json", "workspace")]
    assert [p.name for p in params] == [write.python_name(param.name) for param in operation.params]
    for found, param in zip(params, operation.params, strict=True):
        assert isinstance(found, click.Argument if param.argument else click.Option)
        assert found.required == param.required
        if isinstance(found, click.Option):
            assert (found.opts, found.help) == ([f"--{param.name}"], param.help)
        if param.choices:
            assert isinstance(found.type, click.Choice) and tuple(found.type.choices) == param.choices


def test_the_tools_and_the_mcp_server_list_the_declared_schemas_and_descriptions() -> None:
    """Failed before: the schema said "the one task of this cycle" where the command said "What this cycle set
    out to do.", and a cycle's model read other tool descriptions than a session's."""
    listed: dict[str, dict[str, Any]] = {tool["name"]: tool for tool in mcp_server.tool_list()}
    for operation in OPERATIONS:
        spec = next(spec for spec in MEMORY_TOOLS if spec["name"] == operation.tool)
        assert spec["input_schema"] == input_schema(operation)
        assert spec["description"] == operation.description == listed[operation.tool]["description"]
        assert listed[operation.tool]["inputSchema"] == input_schema(operation)
    log_entry = next(spec for spec in MEMORY_TOOLS if spec["name"] == "log_entry")["input_schema"]["properties"]
    assert log_entry["task"]["description"] == "What this cycle set out to do."
    assert log_entry["blocked"]["description"].endswith("(D-NNNN).")
    assert log_entry["outcome"]["enum"] == ["built", "published", "no-build"]


def test_the_prompt_lists_and_the_agent_commands_are_rendered_from_the_table() -> None:
    """Failed before: the prompt's command list left out `--supersedes`, which the command takes."""
    for operation in OPERATIONS:
        assert f"gitmem {operation.command}" in AGENT_COMMANDS
        assert f"- {usage(operation)}: {operation.summary}" in MEMORY_COMMANDS_TEXT.splitlines()
        assert f"- {operation.tool}: {operation.summary} (" in MEMORY_TOOLS_TEXT
    assert "[--supersedes R-NN]" in MEMORY_COMMANDS_TEXT
    assert usage(OPERATIONS[0], optional=False) == \
        'gitmem log add --task "…" --outcome built|published|no-build --result "…"'


def test_a_command_passes_its_fields_to_the_writer(memrepo: GitRepo, cli: Any) -> None:
    """The same fields by the same names: what the command takes, the writer writes."""
    result = cli(["lesson", "add", "--title", "t", "--happened", "h", "--why", "w", "--change", "c",
                  "--supersedes", "R-01"], cwd=memrepo.path)
    assert result.code == 0, result.err
    assert "R-01" in memrepo.read("LESSONS.md")
    # The lesson's ID reaches the writer as its argument: it judges the confirmation (too early, same cycle).
    confirmed = cli(["lesson", "confirm", "L-0001", "--evidence", "it held"], cwd=memrepo.path)
    assert "GM403" in confirmed.err and "it held" not in memrepo.read("LESSONS.md")
