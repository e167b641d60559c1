"""docs/cli.md is generated from `--help`; this test keeps it true. Regenerate: python tests/docs/test_docs_cli.py"""
from __future__ import annotations

import re
from pathlib import Path

import click
import pytest

DOC = Path(__file__).resolve().parents[2] / "docs" / "cli.md"
HEADER = """# Command reference

Generated from `gitmem --help` by `python tests/docs/test_docs_cli.py`; a test fails when it is stale.
"""


def _commands(command: click.Command, path: list[str], ctx: click.Context) -> list[list[str]]:
    found = [path]
    if isinstance(command, click.Group):
        for name in command.list_commands(ctx):
            sub = command.get_command(ctx, name)
            if sub is not None:
                found += _commands(sub, [*path, name], click.Context(sub, parent=ctx, info_name=name))
    return found


def _helps() -> list[tuple[str, str]]:
    """`gitmem ... --help` exactly as a user sees it, run through the CLI (100 columns)."""
    from click.testing import CliRunner

    from gitmem.cli import cli

    runner = CliRunner()
    found = []
    for path in _commands(cli, ["gitmem"], click.Context(cli, info_name="gitmem")):
        result = runner.invoke(cli, [*path[1:], "--help"], prog_name="gitmem", terminal_width=100)
        assert result.exit_code == 0, result.output
        found.append((" ".join(path), result.output))
    return found


def render_reference() -> str:
    parts = [HEADER]
    for name, text in _helps():
        parts.append(f"## `{name}`\n\n```text\n{text.rstrip()}\n```\n")
    return "\n".join(parts)


def test_cli_reference_is_current() -> None:
    assert DOC.read_text(encoding="utf-8") == render_reference(), "run: python tests/docs/test_docs_cli.py"


def test_every_command_has_help_text() -> None:
    for name, text in _helps():
        assert "Usage:" in text and len(text.splitlines()) > 3, name


def _all_commands() -> list[tuple[list[str], click.Command]]:
    from gitmem.cli import cli

    found = []
    for path in _commands(cli, ["gitmem"], click.Context(cli, info_name="gitmem")):
        command: click.Command = cli
        for name in path[1:]:
            group = command
            assert isinstance(group, click.Group)
            sub = group.get_command(click.Context(group), name)
            assert sub is not None
            command = sub
        found.append((path, command))
    return found


def test_every_option_of_every_command_has_help() -> None:
    missing = [f"{' '.join(path)} {'/'.join(param.opts)}" for path, command in _all_commands()
               for param in command.params if isinstance(param, click.Option) and not (param.help or "").strip()]
    assert missing == []


def test_the_readme_command_table_lists_every_command() -> None:
    """Each command is in README's table, as `gitmem NAME` (a subcommand in a row that names its group)."""
    readme = (DOC.parent.parent / "README.md").read_text(encoding="utf-8")
    table = readme.split("## Commands\n", 1)[1].strip().split("\n\n", 1)[0]
    rows = [row for row in table.splitlines() if row.startswith("| `")]
    missing = []
    for path, _ in _all_commands():
        if len(path) == 2 and not any(f"`gitmem {path[1]}" in row or f"`{path[1]} " in row for row in rows):
            missing.append(" ".join(path))
        if len(path) == 3 and not any(f"gitmem {path[1]} " in row and path[2] in row for row in rows) \
                and not any(f"`{path[1]} {path[2]}`" in row for row in rows):
            missing.append(" ".join(path))
    assert missing == []


@pytest.mark.parametrize("name", ["cycle", "close"])
def test_cycle_and_close_help_list_every_exit_code_they_can_return(name: str) -> None:
    """Both push, so both can end with whatever a push maps to (PushStatus.exit_code, 5 among them); each
    lists its codes from one table, and any command can end with 70 or 130."""
    import importlib

    from gitmem.errors import ALWAYS, ExitCode
    from gitmem.publish.push import PushStatus

    codes = importlib.import_module(f"gitmem.cli.{name}").EXIT_CODES
    assert {status.exit_code for status in PushStatus} | {ExitCode.OK, ExitCode.USAGE, ExitCode.DIRTY} <= set(codes)
    text = " ".join(dict(_helps())[f"gitmem {name}"].split())
    paragraph = text.split("Exit codes: ", 1)[1]
    assert [int(code) for code in re.findall(r"(?:^|; )(\d+) ", paragraph)] == [*map(int, codes), *map(int, ALWAYS)]


if __name__ == "__main__":
    DOC.write_text(render_reference(), encoding="utf-8")
    print(f"wrote {DOC}")
