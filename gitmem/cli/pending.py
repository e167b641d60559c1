"""`gitmem pending`: the decisions waiting on the human."""
from __future__ import annotations

from typing import Any

import click

from gitmem.cli.common import json_option, open_memory, show, show_json, workspace_option
from gitmem.errors import ExitCode, exit_codes_help

# Every code the command can end with (its --help lists them, and 70 and 130, which any command can).
EXIT_CODES = {
    ExitCode.OK: "done",
    ExitCode.USAGE: "usage or config error, not a git repository, or no memory here (run `gitmem init`)",
}



@click.command("pending", epilog=exit_codes_help(EXIT_CODES))
@json_option
@workspace_option
def pending_command(as_json: bool, workspace: str | None) -> int:
    """List Pending decisions with their recommendation and age, oldest first.

    Answer one with `gitmem decision answer D-0001 --answer "…"`, or edit DECISIONS.md in a pull request.
    """
    from gitmem.memory.display import printable_data
    from gitmem.views.pending import as_dict, pending

    ws = open_memory(workspace)
    waiting, path = pending(ws), ws.config.path("decisions")
    shown = printable_data([as_dict(w, path) for w in waiting])     # the agent's text: no terminal escapes
    if as_json:
        show_json(shown, indent=2)
    else:
        _show(shown, path)
    return ExitCode.OK


def _show(shown: list[dict[str, Any]], path: str) -> None:
    """Each waiting decision on a line, its recommendation and a half-typed answer under it."""
    if not shown:
        click.echo("No decisions are waiting.")
    for item in shown:
        show(f"{item['id']} · {item['title']}  ({item['age']} old, {path}:{item['line']})")
        if item["recommendation"]:
            show(f"    recommendation: {item['recommendation']}")
        if item["answer_incomplete"]:
            from gitmem.views.pending import INCOMPLETE

            click.echo(f"    {INCOMPLETE}")


COMMANDS = (pending_command,)
