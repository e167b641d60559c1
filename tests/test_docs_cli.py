"""docs/cli.md is generated from `--help`; this test keeps it true. Regenerate: python tests/test_docs_cli.py"""
from __future__ import annotations

from pathlib import Path

import click

DOC = Path(__file__).resolve().parent.parent / "docs" / "cli.md"
HEADER = """# Command reference

Generated from `gitmem --help` by `python tests/test_docs_cli.py`; a test fails when it is stale.
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
    assert DOC.read_text(encoding="utf-8") == render_reference(), "run: python tests/test_docs_cli.py"


def test_every_command_has_help_text() -> None:
    for name, text in _helps():
        assert "Usage:" in text and len(text.splitlines()) > 3, name


if __name__ == "__main__":
    DOC.write_text(render_reference(), encoding="utf-8")
    print(f"wrote {DOC}")
