"""`gitmem context`: print what the next cycle reads, so that `gitmem context | any-agent` works on its own."""
from __future__ import annotations

import json

import click

from gitmem import exitcodes
from gitmem.cli.common import json_option, open_context, workspace_option


@click.command("context")
@click.option("--cycle", type=int, default=None, help="Cycle number to show (default: the next one).")
@click.option("--agent", "agent", type=click.Choice(["anthropic", "command", "scripted"]), default=None,
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

    from gitmem.context import BudgetError, build_request, estimate_tokens

    ctx = open_context(workspace)
    counting = "estimate"
    counter = estimate_tokens
    if os.environ.get("ANTHROPIC_API_KEY") and not offline:
        counter, counting = _exact_or_estimate(ctx.config), "exact"
    try:
        request = build_request(ctx.root, ctx.config, cycle=cycle, count_tokens=counter, backend=agent)
    except BudgetError as err:
        click.echo(f"gitmem: {err}", err=True)
        return exitcodes.VIOLATIONS
    failed = getattr(counter, "failed", None)
    if failed:
        counting = "estimate"
        click.echo(f"warning: exact token count unavailable ({failed}); using the estimate", err=True)
    for warning in request.warnings:
        click.echo(f"warning: {warning}", err=True)
    if as_json:
        click.echo(json.dumps(_as_dict(request, counting), ensure_ascii=False, indent=2))
    else:
        click.echo(request.prompt_text(), nl=False)
    return exitcodes.OK


def _exact_or_estimate(config):
    """The Messages API counter; after its first failure, the offline estimate (the reason is kept)."""
    from gitmem.agents.anthropic import api_token_counter
    from gitmem.context import estimate_tokens

    state: dict[str, object] = {}

    def count(text: str) -> int:
        if "exact" not in state:
            try:
                state["exact"] = api_token_counter(config)
            except Exception as err:
                state["exact"] = None
                count.failed = str(err)  # type: ignore[attr-defined]
        if state["exact"] is not None and not getattr(count, "failed", None):
            try:
                return state["exact"](text)  # type: ignore[operator]
            except Exception as err:
                count.failed = str(err)  # type: ignore[attr-defined]
        return estimate_tokens(text)

    count.failed = None  # type: ignore[attr-defined]
    return count


def _as_dict(request, counting: str) -> dict:
    from gitmem.context import HARD_SHARE, SOFT_SHARE

    limit = request.config.cycle.max_context_tokens
    return {
        "cycle": request.cycle, "timestamp": request.timestamp, "counting": counting,
        "limits": {"max_context_tokens": limit, "soft": int(limit * SOFT_SHARE), "hard": int(limit * HARD_SHARE)},
        "total_tokens": request.total_tokens, "warnings": list(request.warnings),
        "parts": [{"name": p.name, "source": p.source, "tokens": p.tokens, "cacheable": p.cacheable,
                   "text": p.text} for p in request.parts],
        "instructions": {"tokens": request.instruction_tokens, "text": request.instructions},
    }


COMMANDS = (context_command,)
