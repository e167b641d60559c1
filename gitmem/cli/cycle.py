"""`gitmem cycle`: run one agent cycle; commit it as the agent; with --push, publish it."""
from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

import click

from gitmem.cli.common import (
    CommandFailed,
    annotate,
    echo,
    json_option,
    open_workspace,
    say,
    show,
    show_json,
    show_prompt,
    to_actions,
    workspace_option,
)
from gitmem.config import BACKENDS
from gitmem.errors import ExitCode, exit_codes_help

if TYPE_CHECKING:     # the library loads inside commands only
    from gitmem.agents.base import Backend
    from gitmem.config import Config
    from gitmem.cycle.runner import CycleReport
    from gitmem.workspace import Workspace


# Every code `gitmem cycle` can end with (the help lists them, and 70 and 130, which any command can).
EXIT_CODES = {
    ExitCode.OK: "done",
    ExitCode.USAGE: "usage or config error (bad gitmem.yaml, no backend to run)",
    ExitCode.DIRTY: "refused to start (dirty tree, lock, invalid memory, no branch, over the daily cap)",
    ExitCode.SALVAGED: "the agent failed, the memory rules refused even the runner's own entry, or the push "
                       "conflicted or was refused: the work is on a named branch, nothing is lost; or, with --push, "
                       "there is no remote: the commit stays local",
    ExitCode.REWRITTEN: "with --push, the upstream was rewritten: nothing is built on it, the commit stays local",
    ExitCode.LOCAL_ONLY: "the push failed: the work is only on this machine's disk (local branches named)",
}


@click.command(epilog=exit_codes_help(EXIT_CODES))
@click.option("--agent", "agent", type=click.Choice(BACKENDS), default=None,
              help="Backend to run: anthropic, command or scripted (default: agent.backend in gitmem.yaml).")
@click.option("--push", is_flag=True, help="Fetch, rebase onto the remote branch and push (5 tries).")
@click.option("--dry-run", "dry_run", is_flag=True, help="Print the prompt the agent would get, run nothing.")
@click.option("--model", metavar="ID", default=None, help="Model id for this run, overriding agent.model.")
@json_option
@workspace_option
def cycle(agent: str | None, push: bool, dry_run: bool, model: str | None, as_json: bool,
          workspace: str | None) -> int:
    """Run one cycle: preflight, the agent, postflight, one commit by the agent identity.

    In GitHub Actions it appends cycle=, outcome=, commit= (and, with --push, push= and side-branch=) to
    $GITHUB_OUTPUT and a short account to $GITHUB_STEP_SUMMARY.

    A push the remote refuses for good (a protected branch, a ruleset, a pre-receive hook) is not retried:
    the work goes to a branch `gitmem/cycle-N` to merge through a pull request. For a protected branch, run
    in pull-request mode (`gitmem github --help`).

    """
    from gitmem.cycle.runner import Settings, run_cycle

    ws = _with_model(open_workspace(workspace), model)
    with _refusal_reported(as_json):
        if dry_run:
            return _dry_run(ws, agent, as_json=as_json)
        report = run_cycle(ws, _backend(ws.config, agent), settings=Settings(push=push))
    _show(report, as_json=as_json)
    return report.exit_code


def _with_model(ws: Workspace, model: str | None) -> Workspace:
    if not model:
        return ws
    from dataclasses import replace

    return ws.with_config(replace(ws.config, agent=replace(ws.config.agent, model=model)))


def _dry_run(ws: Workspace, agent: str | None, *, as_json: bool) -> int:
    """The prompt the agent would get (with --json, as one object a tool can read); nothing runs."""
    from gitmem.cycle.runner import default_request, next_cycle

    name = agent or ws.config.agent.backend or "anthropic"
    number = next_cycle(ws)
    prompt = default_request(ws, number, ws.clock(), name).prompt_text()
    if as_json:
        show_json({"dry_run": True, "cycle": number, "backend": name, "prompt": prompt})
    else:
        show_prompt(prompt)
    return ExitCode.OK


@contextmanager
def _refusal_reported(as_json: bool) -> Iterator[None]:
    """A cycle that refused to start: machines read the refusal as a violation (--json, an annotation); people
    read it from the error map."""
    from gitmem.checks.render import as_data
    from gitmem.checks.violation import failure_violations
    from gitmem.cycle.runner import CycleRefused

    try:
        yield
    except CycleRefused as err:
        found = failure_violations(err)
        if as_json:
            show_json({"refused": str(err), "exit_code": err.exit_code, "violations": as_data(found)})
        annotate(found)
        # On stderr too as `path:line: GMnnn` (the error map lists them), unless the message lists them already.
        failed = CommandFailed("cycle", f"refused: {err}", exit_code=err.exit_code,
                               violations=() if err.details else found)
        failed.shown_as_json = as_json
        raise failed from err


def _show(report: CycleReport, *, as_json: bool) -> None:
    """The runner's messages, the run's part on GitHub Actions, then the cycle in one line (or as JSON)."""
    from gitmem.views.actions import cycle_ran

    for message in report.messages:
        say("cycle", message)
    to_actions(cycle_ran(report))
    annotate(report.violations)
    if as_json:
        show_json(report.as_dict())
    elif report.exit_code == ExitCode.OK:
        show(f"cycle {report.cycle} · {report.outcome} · {report.task} ({(report.commit or '')[:10]})")
    elif report.exit_code == ExitCode.LOCAL_ONLY:
        echo(f"cycle {report.cycle} · {report.outcome}: the push did not land and NOTHING REACHED THE REMOTE: "
                   "the work is only on this machine's disk (see the branches named above)")
    else:
        if report.violations:        # each failure as `path:line: GMnnn message`, like `check`'s
            from gitmem.checks.render import render_text

            echo(render_text(report.violations), nl=False, err=True)
        where = report.salvage_branch or report.side_branch
        show(f"cycle {report.cycle} · {report.outcome}: "
             f"{report.error or 'the push did not land'}" + (f"; work saved on {where}" if where else ""))


def _backend(config: Config, name: str | None) -> Backend:
    """The backend to run, after the notes that must come before a run that could hang on them (the sandbox,
    where the model key is held)."""
    from gitmem.agents import key_stand_in, sandbox
    from gitmem.agents.selection import backend_for

    backend = backend_for(config, name)
    for line in [*sandbox.start_notes(config, backend.name), *key_stand_in.key_holders(config, backend.name)]:
        say("cycle", line)
    return backend


COMMANDS = (cycle,)
