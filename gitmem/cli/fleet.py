"""`gitmem fleet`: the human's side of many agents: one inbox, one health table, one page."""
from __future__ import annotations

import errno
import json
import sys
from dataclasses import asdict
from pathlib import Path
from typing import Any

import click

from gitmem.cli.common import UsageError, colour_wanted, json_option
from gitmem.cli.pending import INCOMPLETE
from gitmem.errors import ExitCode

DEFAULT_OUT = "fleet-report/index.html"

fleet_option = click.option("--fleet", "fleet_file", metavar="FILE", default="fleet.yaml", show_default=True,
                            help="The fleet file: `agents:` with name, repo (a local path or a git URL), and "
                                 "optional branch, workspace and stall_after.")
timeout_option = click.option("--timeout", type=click.FloatRange(1, 3600), default=120, show_default=True,
                              metavar="SECONDS", help="Per agent: a remote slower than this is a row with its error, "
                                                      "and the others still show.")
offline_option = click.option("--offline", is_flag=True,
                              help="Read each URL's copy in the cache as the last fetch left it: no network.")


def _say(text: str, *, err: bool = False) -> None:
    """Every line the fleet commands print, redacted once more: it quotes many agents' memory and git's errors."""
    from gitmem.secrets import env_values, redact

    click.echo(redact(text, env_values()), err=err)


def _read(fleet_file: str, timeout: float, offline: bool, *, with_page: bool = False) -> Any:
    from gitmem.fleet.fleetfile import load_fleet
    from gitmem.fleet.parallel import read_fleet

    return read_fleet(load_fleet(Path(fleet_file)), timeout=timeout, with_page=with_page, offline=offline)


@click.group("fleet")
def fleet() -> None:
    """Many agents, one human: every agent of fleet.yaml read side by side.

    \b
    gitmem fleet pending   every decision waiting on you, oldest first
    gitmem fleet status    one row per agent (per workspace) with a verdict
    gitmem fleet report    one HTML page: inbox, health, sparklines

    A local repo is read as it is checked out. A URL is fetched read-only, shallow and then incrementally,
    into $XDG_CACHE_HOME/gitmem/fleet/ (default ~/.cache). Credentials come from git's own configuration or
    GITMEM_FLEET_TOKEN (sent to GitHub only, never printed). An agent that cannot be read is a row with its
    error; the exit code is then 2.
    """


@fleet.command("pending")
@fleet_option
@json_option
@timeout_option
@offline_option
def fleet_pending(fleet_file: str, as_json: bool, timeout: float, offline: bool) -> int:
    """Every agent's pending decisions, oldest first: agent, age, recommendation, and where to answer it (the
    file and line, or its URL on GitHub)."""
    view = _read(fleet_file, timeout, offline)
    inbox = view.inbox
    if as_json:
        _say(json.dumps([asdict(d) for d in inbox], indent=2, ensure_ascii=False))
    elif not inbox:
        _say("No decisions are waiting.")
    for item in [] if as_json else inbox:
        agent = item.agent + (f"/{item.workspace}" if item.workspace else "")
        _say(f"{agent} · {item.id} · {item.title}  ({item.age} old)")
        if item.recommendation:
            _say(f"    recommendation: {item.recommendation}")
        _say(f"    answer at: {item.answer_at}")
        if item.answer_incomplete:
            _say(f"    {INCOMPLETE}")
    for row in view.rows:
        if row.error:
            _say(f"gitmem: {row.label}: {row.error}", err=True)
    return ExitCode.USAGE if view.failed else ExitCode.OK


def render_status(rows: list[Any], *, colour: bool) -> str:
    """The health table as text: one line per agent (per workspace), then what each verdict is about."""
    tints = {"ok": "green", "stalled": "red", "rule 0 streak": "red", "unreadable": "red"}
    head = ("agent", "verdict", "last cycle", "today", "streak", "pending", "last close", "branches")
    table = [head]
    for row in rows:
        last = row.last_cycle
        table.append((row.label, row.verdict, f"{last['cycle']} {last['outcome']} {last['age']} ago" if last else "—",
                      str(row.cycles_today), str((row.streak or {}).get("length", 0)), str(row.pending),
                      row.last_close or "—", str(len(row.waiting_branches))))
    widths = [max(len(line[i]) for line in table) for i in range(len(head))]
    lines = []
    for n, line in enumerate(table):
        cells = [cell.ljust(widths[i]) for i, cell in enumerate(line)]
        if n and colour:
            cells[1] = click.style(cells[1], fg=tints.get(rows[n - 1].verdict, "yellow"))
        lines.append("  ".join(cells).rstrip())
    for row in rows:
        if row.why:
            lines.append(f"{row.label}: {row.why}")
        review = [name for name in row.waiting_branches if name not in row.deletable_branches]
        if review:
            lines.append(f"{row.label}: waiting branches: {', '.join(review)}")
        for name in row.deletable_branches:
            remote, _, branch = name.rpartition("gitmem/")
            lines.append(f"{row.label}: {name}: its decision was answered No; delete it: git push "
                         f"{remote.rstrip('/') or 'origin'} --delete gitmem/{branch}")
    return "\n".join(lines) + "\n"


@fleet.command("status")
@fleet_option
@json_option
@timeout_option
@offline_option
def fleet_status(fleet_file: str, as_json: bool, timeout: float, offline: bool) -> int:
    """One row per agent (per workspace): last cycle (age, outcome), cycles today, Rule 0 streak, pending
    decisions, last close, the gitmem/* branches waiting for you, and a verdict.

    An agent is "stalled" when its last cycle is older than twice the interval of its workflow's schedule (or
    its stall_after): GitHub disables a schedule after 60 days without activity, and a broken workflow looks the
    same. Exit 2 when an agent could not be read.
    """
    view = _read(fleet_file, timeout, offline)
    if as_json:
        data = {"now": view.moment.isoformat(timespec="seconds"), "failed": view.failed,
                "agents": [asdict(row) for row in view.rows]}
        _say(json.dumps(data, indent=2, ensure_ascii=False))
    else:
        _say(render_status(view.rows, colour=colour_wanted(sys.stdout)).rstrip("\n"))
    return ExitCode.USAGE if view.failed else ExitCode.OK


@fleet.command("report")
@fleet_option
@click.option("--out", metavar="PATH", default=DEFAULT_OUT, show_default=True,
              help="The fleet page; each agent's own report goes to agents/ next to it.")
@timeout_option
@offline_option
def fleet_report(fleet_file: str, out: str, timeout: float, offline: bool) -> int:
    """One self-contained HTML page: the inbox, the health table, and per agent sparklines (cycles per day by
    outcome, context read against the budget), each agent linking to its own `gitmem report` page.

    Everything shown is redacted of secrets. Files are written without following links. Exit 2 when an agent
    could not be read (its row says why; the page is still written).
    """
    from gitmem.cli.report import write_no_link
    from gitmem.fleet.page import agent_page_name, render_page
    from gitmem.nofollow import files

    view = _read(fleet_file, timeout, offline, with_page=True)
    target = Path(out)
    written = 0
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        text = render_page(view)
        write_no_link(target, text.encode("utf-8"))
        for reading in view.readings:
            if reading.page:       # never through a link, in a directory of links or not (FileRefused, exit 2)
                files.write(target.parent, agent_page_name(reading.row), reading.page.encode("utf-8"))
                written += 1
    except OSError as err:
        why = "a link is in the way (gitmem never writes through one)" if err.errno == errno.ELOOP else \
            "it is not a regular file" if err.errno == errno.EISDIR else err.strerror or str(err)
        raise UsageError(f"cannot write {target}: {why}; remove it or choose another --out") from None
    _say(f"wrote {target} ({len(text.encode('utf-8')) // 1024} KB) and {written} agent page(s)")
    for row in view.rows:
        if row.error:
            _say(f"gitmem: {row.label}: {row.error}", err=True)
    return ExitCode.USAGE if view.failed else ExitCode.OK


COMMANDS = (fleet,)
