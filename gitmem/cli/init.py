"""`gitmem init [DIR]`."""
from __future__ import annotations

import json
from pathlib import Path

import click

from gitmem import exitcodes
from gitmem.cli.common import json_option


@click.command("init")
@click.argument("directory", type=click.Path(file_okay=False, path_type=Path), default=".")
@json_option
def init_command(directory: Path, as_json: bool) -> int:
    """Create the memory files, config, prompts, pre-commit config and workflows that are missing.

    Never overwrites a file. An existing .pre-commit-config.yaml gets the gitmem hooks added (comments and
    order kept). Running it twice changes nothing.
    """
    from gitmem.init import init

    report = init(directory)
    if as_json:
        click.echo(json.dumps(report.__dict__, indent=2))
        return exitcodes.OK
    if report.initialised_git:
        click.echo(f"initialised a git repository in {directory}")
    for rel in report.created:
        click.echo(f"created     {rel}")
    for rel in report.updated:
        click.echo(f"updated     {rel} (gitmem hooks added)")
    for rel in report.left_alone:
        click.echo(f"left alone  {rel} (exists)")
    click.echo("next: pre-commit install --hook-type pre-commit --hook-type pre-push")
    return exitcodes.OK


COMMANDS = (init_command,)
