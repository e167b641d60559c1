"""`gitmem context`: print what the next cycle reads, so that `gitmem context | any-agent` works on its own."""
from __future__ import annotations

import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import click

from gitmem.cli.common import json_option, open_workspace, say, workspace_option
from gitmem.config import BACKENDS
from gitmem.errors import ExitCode, exit_codes_help

if TYPE_CHECKING:     # the library loads inside the command only
    from gitmem.agents.base import CycleRequest
    from gitmem.config import Config


# Every code the command can end with (its --help lists them, and 70 and 130, which any command can).
EXIT_CODES = {
    ExitCode.OK: "done",
    ExitCode.VIOLATIONS: "memory is over the reading budget's hard limit",
    ExitCode.USAGE: "usage or config error, not a git repository",
}


@click.command("context", epilog=exit_codes_help(EXIT_CODES))
@click.option("--cycle", type=int, default=None, help="Cycle number to show (default: the next one).")
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
    import os

    from gitmem.cycle.budget import build_request, estimate_tokens

    ws = open_workspace(workspace)
    counting = "estimate"
    exact = ExactOrEstimate(ws.config) if os.environ.get("ANTHROPIC_API_KEY") and not offline else None
    if exact is not None:
        counting = "exact"
    request = build_request(ws, cycle=cycle, count_tokens=exact or estimate_tokens, backend=agent)
    if exact is not None and exact.failed:
        counting = "estimate"
        say("context", f"warning: exact token count unavailable ({exact.failed}); using the estimate")
    for warning in request.warnings:
        say("context", f"warning: {warning}")
    if as_json:
        click.echo(json.dumps(_as_dict(request, counting), ensure_ascii=False, indent=2))
    else:
        click.echo(request.prompt_text(), nl=False)
    return ExitCode.OK


class ExactOrEstimate:
    """The Messages API counter; after its first failure, the offline estimate (the reason is kept)."""

    def __init__(self, config: Config) -> None:
        self.config = config
        self.exact: Callable[[str], int] | None = None
        self.failed: str | None = None

    def __call__(self, text: str) -> int:
        from gitmem.cycle.budget import estimate_tokens

        if self.exact is None and self.failed is None:
            try:
                from gitmem.agents.anthropic import api_token_counter

                self.exact = api_token_counter(self.config)
            except Exception as err:    # no SDK, no network, a bad key: the estimate still works
                self.failed = str(err)
        if self.exact is not None and self.failed is None:
            try:
                return self.exact(text)
            except Exception as err:
                self.failed = str(err)
        return estimate_tokens(text)


def _as_dict(request: CycleRequest, counting: str) -> dict[str, Any]:
    from gitmem.cycle.budget import limits

    bounds = limits(request.config)
    return {
        "cycle": request.cycle, "timestamp": request.timestamp, "counting": counting,
        "limits": {"max_context_tokens": bounds.total, "soft": bounds.soft, "hard": bounds.hard},
        "total_tokens": request.total_tokens, "warnings": list(request.warnings),
        "parts": [{"name": p.name, "source": p.source, "tokens": p.tokens, "cacheable": p.cacheable,
                   "text": p.text} for p in request.parts],
        "instructions": {"tokens": request.instruction_tokens, "text": request.instructions},
    }


COMMANDS = (context_command,)
