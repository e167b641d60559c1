"""`--json` asks for JSON on stdout, failures included: every command that takes it answers a failure with one
JSON object (its message, GM code, exit code and violations) on stdout, and the human text on stderr as always.
The one place that does it is the error map (`gitmem.cli.main`), so a command added later answers so too."""
from __future__ import annotations

import json
from pathlib import Path

import click
import pytest

from gitmem.cli import cli as gitmem_cli
from gitmem.errors import ExitCode


def _commands_taking_json() -> list[tuple[str, ...]]:
    ctx = click.Context(gitmem_cli)
    found: list[tuple[str, ...]] = []

    def walk(command: click.Command, path: tuple[str, ...]) -> None:
        if isinstance(command, click.Group):
            for name in command.list_commands(ctx):
                walk(command.get_command(ctx, name), (*path, name))   # type: ignore[arg-type]
        elif any("--json" in param.opts for param in command.params):
            found.append(path)

    walk(gitmem_cli, ())
    return found


COMMANDS = _commands_taking_json()
# What makes a command fail that a plain folder outside any repository lets succeed: `init` makes one there.
FAILING_ARGS = {("init",): ["a-file"]}


def _one_object(out: str) -> dict:
    lines = out.strip().splitlines()
    data = json.loads(out)
    assert isinstance(data, dict) and (len(lines) == 1 or out.lstrip().startswith("{")), out
    return data


@pytest.mark.parametrize("command", COMMANDS, ids=" ".join)
def test_a_failure_with_json_is_one_json_object_on_stdout(tmp_path: Path, cli, git_env, command) -> None:
    """Outside a git repository (or without its required arguments) each command fails; with --json its
    stdout holds the failure as one JSON object, and stderr the same message for a person."""
    outside = tmp_path / "plain"
    outside.mkdir()
    (outside / "a-file").write_text("not a folder\n")
    result = cli([*command, *FAILING_ARGS.get(command, []), "--json"], cwd=outside)
    assert result.code != ExitCode.OK, (command, result.out, result.err)
    data = _one_object(result.out)
    assert data["exit_code"] == result.code and data["error"], data
    assert set(data) >= {"error", "code", "exit_code", "violations"}, data
    assert result.err.startswith(("gitmem: ", "Usage: ")) and "Traceback" not in result.err, result.err


@pytest.mark.parametrize("argv", [
    ["status", "--json", "--no-such-option"],
    ["check", "--format", "json", "--no-such-option"],
    ["check", "--format=json", "--no-such-option"],
], ids=["unknown-option", "format-json", "format-equals-json"])
def test_a_usage_error_with_json_is_answered_in_json(memrepo, cli, argv: list[str]) -> None:
    result = cli(argv, cwd=memrepo.path)
    assert result.code == ExitCode.USAGE
    data = _one_object(result.out)
    assert "--no-such-option" in data["error"] and data["code"] is None and data["exit_code"] == 2, data
    assert "--no-such-option" in result.err
    assert {("status",), ("check",), ("log", "add"), ("fleet", "status"), ("cycle",)} <= set(COMMANDS)


def test_a_violation_behind_a_failure_is_in_the_json(memrepo, cli) -> None:
    """`log add` refused as invalid (exit 1) names the violation and its GM code in the JSON too."""
    memrepo.write("LOG.md", memrepo.read("LOG.md") + "\n## not a heading gitmem reads\n")
    result = cli(["log", "add", "--task", "t", "--outcome", "built", "--result", "r", "--json"], cwd=memrepo.path)
    assert result.code != ExitCode.OK, result.out
    data = _one_object(result.out)
    assert data["exit_code"] == ExitCode.VIOLATIONS == result.code and data["code"] == "GM306", data
    assert [(v["path"], v["line"], v["code"]) for v in data["violations"]] == [("LOG.md", 8, "GM306")], data
    plain = cli(["log", "add", "--task", "t", "--outcome", "built", "--result", "r"], cwd=memrepo.path)
    assert plain.code == ExitCode.VIOLATIONS and plain.out == "" and "GM306" in plain.err


def test_a_refused_cycle_answers_in_json_once(memrepo, cli) -> None:
    """`cycle --json` answers a refusal with its own object (the refusal as a violation): the error map adds no
    second one. Outside a repository, where the cycle cannot even start, the error map answers."""
    memrepo.commit_files({"gitmem.yaml": memrepo.read("gitmem.yaml").replace(
        "  # backend: anthropic", "  backend: scripted\n  script: agent-script.yaml")}, "use the scripted agent")
    memrepo.write("untracked.txt", "dirty\n")
    result = cli(["cycle", "--json"], cwd=memrepo.path)
    assert result.code == ExitCode.DIRTY, result.out + result.err
    data = _one_object(result.out)
    assert "refused" in data and data["exit_code"] == ExitCode.DIRTY, data
    elsewhere = cli(["cycle", "--json"], cwd=memrepo.path.parent)
    assert elsewhere.code == ExitCode.USAGE and _one_object(elsewhere.out)["exit_code"] == ExitCode.USAGE




@pytest.mark.parametrize("argv", [["mcp", "--json"], ["mcp", "--format", "json"],
                                  ["mcp", "--root", "{tmp}/nowhere", "--json"],
                                  ["hook", "--json"]],
                         ids=["mcp --json", "mcp --format json", "mcp --root missing --json", "hook --json"])
def test_a_command_whose_stdout_is_a_protocol_fails_on_stderr_only(tmp_path: Path, cli, git_env,
                                                                   argv: list[str]) -> None:
    """`gitmem mcp --json` printed `{"error": …}` on stdout, MCP's own channel, where its client reads JSON-RPC
    (and a session hook's stdout is its CLI's): their failures go to stderr alone, as their other failures do."""
    result = cli([word.format(tmp=tmp_path) for word in argv], cwd=tmp_path)
    assert result.code == ExitCode.USAGE and result.out == "", result.out
    assert "gitmem: " in result.err
