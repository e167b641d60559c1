"""docs/cli.md is generated from `--help`; this test keeps it true. Regenerate: python tests/test_docs_cli.py"""
from __future__ import annotations

from pathlib import Path

import click

DOC = Path(__file__).resolve().parent.parent / "docs" / "cli.md"
HEADER = """# Command reference

Generated from `gitmem --help` by `python tests/test_docs_cli.py`; a test fails when it is stale.
"""


def _helps(command: click.Command, path: list[str], parent: click.Context | None) -> list[tuple[str, str]]:
    ctx = click.Context(command, info_name=path[-1], parent=parent, terminal_width=100, max_content_width=100)
    found = [(" ".join(path), command.get_help(ctx))]
    if isinstance(command, click.Group):
        for name in command.list_commands(ctx):
            sub = command.get_command(ctx, name)
            if sub is not None:
                found += _helps(sub, [*path, name], ctx)
    return found


def render_reference() -> str:
    from gitmem.cli import cli

    parts = [HEADER]
    for name, text in _helps(cli, ["gitmem"], None):
        parts.append(f"## `{name}`\n\n```text\n{text.rstrip()}\n```\n")
    return "\n".join(parts)


def test_cli_reference_is_current() -> None:
    assert DOC.read_text(encoding="utf-8") == render_reference(), "run: python tests/test_docs_cli.py"


def test_every_command_has_help_text() -> None:
    for name, text in _helps(__import__("gitmem.cli", fromlist=["cli"]).cli, ["gitmem"], None):
        assert "Usage:" in text and len(text.splitlines()) > 3, name


if __name__ == "__main__":
    DOC.write_text(render_reference(), encoding="utf-8")
    print(f"wrote {DOC}")
