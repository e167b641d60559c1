"""`gitmem mcp`: serve the memory tools over MCP on stdin/stdout."""
from __future__ import annotations

from pathlib import Path

import click

from gitmem.cli.common import workspace_option
from gitmem.errors import ExitCode, exit_codes_help

# Every code the command can end with (its --help lists them, and 70 and 130, which any command can).
EXIT_CODES = {
    ExitCode.OK: "the client closed the session",
    ExitCode.USAGE: "usage error, or no memory repository here",
}


@click.command("mcp", epilog=exit_codes_help(EXIT_CODES))
@click.option("--root", type=click.Path(path_type=Path), default=None,
              help="The memory repository (default: the first root the client announces, else the working "
                   "directory).")
@workspace_option
def mcp_command(root: Path | None, workspace: str | None) -> int:
    """Serve the memory tools over MCP (stdio): log_entry, now_block, ask_decision, add_lesson, confirm_lesson,
    roadmap_done, recall, context, pending and status, and RULES, NOW and the pending decisions as resources.

    The same tools and guards as the anthropic backend: no tool resolves a decision, the clock stamps every
    entry, the shared rule numbers it. Writes files only; commit them with your work. Outside a memory
    repository it says so and exits (2). Needs no extra: gitmem serves the protocol itself, and answers
    `initialize` and `tools/list` before it loads the rest of gitmem (agent CLIs wait for them).
    """
    from gitmem.sessions import mcp_server

    found = None
    if root is not None and "${" not in str(root):      # an unexpanded ${workspaceFolder}: look elsewhere
        from gitmem.sessions.locate import NotAMemoryRepository, find_workspace

        found = find_workspace([root], workspace)
        if found is None:
            raise NotAMemoryRepository(f"{root} is not in a gitmem memory repository (no gitmem.yaml or LOG.md at "
                                       "a git work tree's root): run `gitmem init` there, or point --root at the "
                                       "repository")
    return mcp_server.serve(found, workspace)


COMMANDS = (mcp_command,)
