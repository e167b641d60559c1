"""`gitmem cycle`: run one agent cycle; commit it as the agent; with --push, publish it."""
from __future__ import annotations

import json

import click

from gitmem import exitcodes
from gitmem.cli.common import append_env_file, json_option, open_context, workspace_option


@click.command()
@click.option("--agent", "agent", metavar="NAME", default=None,
              help="Backend to run: anthropic, command or scripted (default: agent.backend in gitmem.yaml).")
@click.option("--push", is_flag=True, help="Fetch, rebase onto the remote branch and push (5 tries).")
@click.option("--dry-run", "dry_run", is_flag=True, help="Print the prompt the agent would get, run nothing.")
@click.option("--model", metavar="ID", default=None, help="Model id for this run, overriding agent.model.")
@json_option
@workspace_option
def cycle(agent: str | None, push: bool, dry_run: bool, model: str | None, as_json: bool,
          workspace: str | None) -> int:
    """Run one cycle: preflight, the agent, postflight, one commit by the agent identity.

    In GitHub Actions it appends cycle=, outcome= and commit= to $GITHUB_OUTPUT and a short account
    to $GITHUB_STEP_SUMMARY.

    \b
    Exit codes: 0 done; 3 refused to start (dirty tree, lock, invalid memory, no branch);
    4 the agent failed or the push conflicted: the work is on a named branch, nothing is lost.
    """
    from gitmem.cycle import CycleRefused, Settings, default_request, github_output, next_cycle, run_cycle
    from gitmem.cycle import step_summary
    from gitmem.store import system_clock

    ctx = open_context(workspace)
    if model:
        from dataclasses import replace

        ctx.config = replace(ctx.config, agent=replace(ctx.config.agent, model=model))
    try:
        if dry_run:
            name = agent or ctx.config.agent.backend or "anthropic"
            request = default_request(ctx.root, ctx.config, next_cycle(ctx.root, ctx.config),
                                      system_clock(ctx.config), name)
            click.echo(request.prompt_text(), nl=False)
            return exitcodes.OK
        report = run_cycle(ctx.repo, ctx.config, _backend(ctx.config, agent), settings=Settings(push=push))
    except CycleRefused as err:
        click.echo(f"gitmem cycle: refused: {err}", err=True)
        if as_json:
            click.echo(json.dumps({"refused": str(err), "exit_code": err.exit_code}, ensure_ascii=False))
        return err.exit_code
    for message in report.messages:
        click.echo(f"gitmem cycle: {message}", err=True)
    append_env_file("GITHUB_OUTPUT", github_output(report))
    append_env_file("GITHUB_STEP_SUMMARY", step_summary(report))
    if as_json:
        click.echo(json.dumps(report.as_dict(), ensure_ascii=False))
    elif report.exit_code == exitcodes.OK:
        click.echo(f"cycle {report.cycle} · {report.outcome} · {report.task} ({(report.commit or '')[:10]})")
    else:
        where = report.salvage_branch or report.side_branch
        click.echo(f"cycle {report.cycle} · {report.outcome}: "
                   f"{report.error or 'the push did not land'}" + (f"; work saved on {where}" if where else ""))
    return report.exit_code


def _backend(config, name: str | None):  # noqa: ANN001, ANN202 - library types load lazily
    from gitmem.agents.base import AgentError
    from gitmem.agents.registry import backend_for
    from gitmem.cli.common import UsageError
    from gitmem.config import ConfigError

    try:
        return backend_for(config, name)
    except (AgentError, ConfigError, ValueError) as err:
        raise UsageError(str(err)) from None


COMMANDS = (cycle,)
