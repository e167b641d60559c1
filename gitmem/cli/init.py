"""`gitmem init [DIR]`."""
from __future__ import annotations

import json
from pathlib import Path

import click

from gitmem.cli.common import json_option
from gitmem.errors import ExitCode

NEXT_STEP = "pre-commit install --hook-type pre-commit --hook-type pre-push"
AGENTS = ("claude", "codex", "cursor")        # gitmem.scaffold.agents.AGENTS (this module loads only click)


@click.command("init")
@click.argument("directory", type=click.Path(file_okay=False, path_type=Path), default=".")
@click.option("--agent", "agents", multiple=True, type=click.Choice(AGENTS),
              help="Also wire this agent CLI to the memory (repeatable): claude (.claude/settings.json hooks, MCP "
                   "server and allow-list, .mcp.json, CLAUDE.md), codex (AGENTS.md, .codex/config.toml), cursor "
                   "(.cursor/mcp.json, .cursor/rules/gitmem.mdc).")
@json_option
def init_command(directory: Path, agents: tuple[str, ...], as_json: bool) -> int:
    """Create the memory files, config, prompts, pre-commit config and workflows that are missing.

    DIR (default: the current folder) becomes the root of the agent's repository; `git init` runs there
    if it is not one yet. A non-empty folder inside another repository is refused: memory lives at a
    repository's root. Never overwrites a file. An existing .pre-commit-config.yaml gets the gitmem
    hooks added, every other line kept as it was. Running it twice changes nothing.

    With --agent, agent settings are merged into existing files (only missing keys are added) and the memory
    protocol goes into a managed block fenced by `<!-- gitmem:begin protocol -->` / `<!-- gitmem:end protocol
    -->`, updated in place without touching the text around it. The generated files run `gitmem` from PATH.
    """
    from dataclasses import asdict

    from gitmem.scaffold.init import PRECOMMIT, init

    report = init(directory, agents)
    code = ExitCode.USAGE if report.problems else ExitCode.OK
    if as_json:
        click.echo(json.dumps({**asdict(report), "next": NEXT_STEP}, indent=2))
        return code
    if report.initialised_git:
        click.echo(f"initialised a git repository in {directory}")
    for rel in report.created:
        click.echo(f"created     {rel}")
    for rel in report.updated:
        click.echo(f"updated     {rel} (gitmem {'hooks' if rel == PRECOMMIT else 'settings'} added)")
    for rel in report.left_alone:
        click.echo(f"left alone  {rel} (exists)")
    for problem in report.problems:
        click.echo(f"gitmem: {problem}", err=True)
    click.echo(f"next: {NEXT_STEP}")
    return code


COMMANDS = (init_command,)
