"""`gitmem pending`: the decisions waiting on the human."""
from __future__ import annotations

import json
from datetime import datetime

import click

from gitmem import exitcodes
from gitmem.cli.common import json_option, open_context, workspace_option


@click.command("pending")
@json_option
@workspace_option
def pending_command(as_json: bool, workspace: str | None) -> int:
    """List Pending decisions with their recommendation and age, oldest first.

    Answer one with `gitmem decision answer D-0001 --answer "…"`, or edit DECISIONS.md in a pull request.
    """
    from gitmem.pending import describe_age, pending
    from gitmem.store import Memory

    ctx = open_context(workspace)
    memory = Memory(ctx.root, ctx.config)
    waiting = pending(memory.read("decisions"), ctx.config, now=datetime.now(ctx.config.tzinfo()))
    if as_json:
        click.echo(json.dumps([w.as_dict() for w in waiting], indent=2, ensure_ascii=False))
        return exitcodes.OK
    if not waiting:
        click.echo("No decisions are waiting.")
    for item in waiting:
        click.echo(f"{item.id} · {item.title}  ({describe_age(item.age_days)} old, {item.path}:{item.line})")
        if item.recommendation:
            click.echo(f"    recommendation: {item.recommendation}")
    return exitcodes.OK


COMMANDS = (pending_command,)
