"""`gitmem context`: print what the next cycle reads, so that `gitmem context | any-agent` works on its own."""
from __future__ import annotations

import json

import click

from gitmem.cli.common import echo_json, json_option, open_memory, say, show_prompt, workspace_option
from gitmem.config import BACKENDS
from gitmem.errors import ExitCode, exit_codes_help

# Every code the command can end with (its --help lists them, and 70 and 130, which any command can).
EXIT_CODES = {
    ExitCode.OK: "done",
    ExitCode.VIOLATIONS: "memory is over the reading budget's hard limit",
    ExitCode.USAGE: "usage or config error, not a git repository, or no memory here (run `gitmem init`)",
}


@click.command("context", epilog=exit_codes_help(EXIT_CODES))
@click.option("--cycle", type=click.IntRange(min=1), default=None,
              help="Cycle number to show (default: the next one).")
@click.option("--agent", "agent", type=click.Choice(BACKENDS), default=None,
              help="Teach memory writes as this backend would get them: tools, or `gitmem` commands "
                   "(default: agent.backend, else tools).")
@click.option("--offline", is_flag=True,
              help="Estimate tokens offline (chars / 3.5) even when ANTHROPIC_API_KEY is set.")
@json_option
@workspace_option
def context_command(cycle: int | None, agent: str | None, offline: bool, as_json: bool,
                    workspace: str | None) -> int:
    """Print the cycle prompt: RULES, the top NOW block, DECISIONS Pending and newly resolved, the last LOG
    entries, the current ROADMAP section, the always-load files, then the filled-in instructions.

    Tokens are counted exactly with the Messages API when ANTHROPIC_API_KEY is set, else estimated.
    Over 70% of cycle.max_context_tokens it trims (LOG entries first, then ROADMAP) and warns on stderr;
    over 86.5% it refuses and names the largest part (exit 1).
    """
    from gitmem.cycle.next_prompt import next_prompt

    shown = next_prompt(open_memory(workspace), cycle=cycle, backend=agent, offline=offline)
    for warning in shown.warnings:
        say("context", f"warning: {warning}")
    if as_json:
        echo_json(json.dumps(shown.to_dict(), ensure_ascii=False, indent=2))
    else:
        show_prompt(shown.request.prompt_text())
    return ExitCode.OK


COMMANDS = (context_command,)
