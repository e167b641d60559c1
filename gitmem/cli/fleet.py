"""`gitmem fleet`: the human's side of many agents: one inbox, one health table, one page."""
from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from gitmem.cli.common import (
    CommandGroup,
    cannot_write,
    colour_option,
    colour_wanted,
    echo,
    echo_json,
    json_option,
    write_page,
)
from gitmem.errors import ExitCode, exit_codes_help

if TYPE_CHECKING:     # the library loads inside commands only
    from gitmem.fleet.dispatch import CatchUpPass
    from gitmem.fleet.fleetfile import Fleet

DEFAULT_OUT = "fleet-report/index.html"

fleet_option = click.option("--fleet", "fleet_file", metavar="FILE", default="fleet.yaml", show_default=True,
                            help="The fleet file: `agents:` with name, repo (a local path or a git URL), and "
                                 "optional branch, workspace, stall_after, github, workflow, tokens_per_day and "
                                 "cost_per_day; optional `budget:` and `pages:` (docs/fleet.md). `-` reads it from "
                                 "standard input: errors then name `<stdin>`, and relative repos are read from the "
                                 "current folder.")
timeout_option = click.option("--timeout", type=click.FloatRange(1, 3600), default=120, show_default=True,
                              metavar="SECONDS", help="Per agent: a remote slower than this is a row with its error, "
                                                      "and the others still show.")
offline_option = click.option("--offline", is_flag=True,
                              help="Read each URL's copy in the cache as the last fetch left it: no network.")
public_option = click.option("--public", is_flag=True,
                             help="Verdicts and counts only, for a place anyone can read (GitHub Pages, a public "
                                  "repository's job summary or artifacts): no decision text, LOG lines, branch "
                                  "names or errors.")


def _say(text: str, *, err: bool = False) -> None:
    """Every line the fleet commands print, redacted once more: it quotes many agents' memory and git's errors."""
    from gitmem.secrets import scrub

    echo(scrub(text), err=err)


def _say_json(text: str) -> None:
    """A fleet command's `--json` answer, redacted as `_say` redacts, and exact for the tools that read it."""
    from gitmem.secrets import scrub

    echo_json(scrub(text))


def _say_unreadable(chosen: Fleet, rows: list[Any], *, public: bool) -> None:
    """One stderr line per agent that could not be read, `path:line: GM931 agent: error` at its entry of the fleet
    file. Its error is git's (a remote URL, a path): in a public view the line says only that it failed, as a
    public repository's run log is public too."""
    from gitmem.fleet.need import unreadable_diagnostics

    for line in unreadable_diagnostics(chosen, rows, public=public):
        _say(f"gitmem: {line}", err=True)


def _read(chosen: Fleet, timeout: float, offline: bool, *, with_page: bool = False) -> Any:
    """Every agent of the fleet, read in parallel."""
    from gitmem.fleet.parallel import read_fleet

    return read_fleet(chosen, timeout=timeout, with_page=with_page, offline=offline)


def _load(fleet_file: str) -> Fleet:
    """The fleet file `--fleet` names (`-`: standard input), validated (gitmem.fleet.fleetfile)."""
    from gitmem.fleet.fleetfile import open_fleet

    return open_fleet(fleet_file, stdin=sys.stdin.buffer, cwd=Path.cwd())


def _load_and_read(fleet_file: str, timeout: float, offline: bool) -> tuple[Fleet, Any]:
    """The fleet file at `fleet_file`, and every agent of it read: the file names where each agent's entry is."""
    chosen = _load(fleet_file)
    return chosen, _read(chosen, timeout, offline)


@click.group("fleet", cls=CommandGroup)
def fleet() -> None:
    """Many agents, one human: every agent of fleet.yaml read side by side.

    \b
    gitmem fleet pending   every decision waiting on you, oldest first
    gitmem fleet status    one row per agent (per workspace) with a verdict
    gitmem fleet report    one HTML page: inbox, health, sparklines
    gitmem fleet pages     the public page for GitHub Pages, when fleet.yaml says `pages: public`
    gitmem fleet dispatch  start a cycle for every agent whose scheduled cycles stopped coming

    A local repo is read as it is checked out. A URL is fetched read-only, shallow and then incrementally,
    into $XDG_CACHE_HOME/gitmem/fleet/ (default ~/.cache). Credentials come from git's own configuration or
    GITMEM_FLEET_TOKEN (sent to GitHub only, never printed). An agent that cannot be read is a row with its
    error; the exit code is then 2.
    """


# Every code the command can end with (its --help lists them, and 70 and 130, which any command can).
EXIT_CODES = {
    ExitCode.OK: "done",
    ExitCode.USAGE: "usage error, a bad fleet file, an agent could not be read, or a GitHub call failed",
}


@fleet.command("pending", epilog=exit_codes_help(EXIT_CODES))
@fleet_option
@json_option
@timeout_option
@offline_option
@public_option
def fleet_pending(fleet_file: str, as_json: bool, timeout: float, offline: bool, public: bool) -> int:
    """Every agent's pending decisions, oldest first: agent, age, recommendation, and where to answer it (the
    file and line, or its URL on GitHub). With --public, only how many wait on each agent."""
    from gitmem.fleet.answer_text import inbox_text
    from gitmem.fleet.answers import pending_data

    chosen, view = _load_and_read(fleet_file, timeout, offline)
    if as_json:
        _say_json(json.dumps(pending_data(chosen, view, public=public), indent=2, ensure_ascii=False))
    else:
        _say(inbox_text(view.inbox, view.rows, public=public))
    _say_unreadable(chosen, view.rows, public=public)
    return ExitCode.USAGE if view.failed else ExitCode.OK


@fleet.command("status", epilog=exit_codes_help(EXIT_CODES))
@fleet_option
@json_option
@timeout_option
@offline_option
@public_option
@colour_option
def fleet_status(fleet_file: str, as_json: bool, timeout: float, offline: bool, public: bool) -> int:
    """One row per agent (per workspace): last cycle (age, outcome), cycles today, Rule 0 streak, pending
    decisions, last close, the gitmem/* branches waiting for you, and a verdict.

    An agent is "stalled" when its last cycle is older than twice the interval of its workflow's schedule (or
    its stall_after): GitHub disables a schedule after 60 days without activity, and a broken workflow looks the
    same. Rows come most urgent first (unreadable, stalled, clock ahead, over budget, rule 0 streak, waiting on
    you, no cycles yet, ok). With --public, verdicts and counts only. Exit 2 when an agent could not be read.
    """
    from gitmem.fleet.answers import status_data

    chosen, view = _load_and_read(fleet_file, timeout, offline)
    if as_json:
        _say_json(json.dumps(status_data(chosen, view, public=public), indent=2, ensure_ascii=False))
    else:
        _say_status(chosen, view, public=public)
    return ExitCode.USAGE if view.failed else ExitCode.OK


def _say_status(chosen: Fleet, view: Any, *, public: bool) -> None:
    """The health table on stdout. The GM931 lines go with it (stdout alone reaches a job summary); a public table
    has none, and its lines, without the errors, go to stderr as the other commands' do."""
    from gitmem.fleet.answer_text import status_text
    from gitmem.fleet.need import unreadable_diagnostics

    unreadable = [] if public else unreadable_diagnostics(chosen, view.rows)
    tint = (lambda cell, colour: click.style(cell, fg=colour)) if colour_wanted(sys.stdout) else None
    _say(status_text(view.rows, tint=tint, public=public, unreadable=unreadable).rstrip("\n"))
    if public:
        _say_unreadable(chosen, view.rows, public=True)


@fleet.command("report", epilog=exit_codes_help(EXIT_CODES))
@fleet_option
@click.option("--out", metavar="PATH", default=DEFAULT_OUT, show_default=True,
              help="The fleet page; each agent's own report goes to agents/ next to it.")
@timeout_option
@offline_option
@public_option
def fleet_report(fleet_file: str, out: str, timeout: float, offline: bool, public: bool) -> int:
    """One self-contained HTML page: the inbox, the health table (most urgent first), and per agent sparklines
    (cycles per day by outcome, context read against the budget), each agent linking to its own `gitmem report`
    page.

    The page quotes the agents' memory: keep it where only their repositories' readers can see it. With
    --public it carries verdicts and counts only and no agent pages are written: the page to publish on GitHub
    Pages, which is public even for a private repository; it is refused (exit 2) where an earlier report's
    agent pages lie beside it. A page an earlier report wrote for an agent no longer in the fleet is removed
    (only a report's own page). Everything shown is redacted of secrets. Files are
    written without following links. Exit 2 when an agent could not be read (its row says why; the page is
    still written).
    """
    from gitmem.fleet.target import fleet_page_target

    chosen = _load(fleet_file)
    target = fleet_page_target(out, chosen.path, public=public)
    view = _read(chosen, timeout, offline, with_page=True)
    _say(_write_report(view, target, chosen, public=public))
    _say_unreadable(chosen, view.rows, public=public)
    return ExitCode.USAGE if view.failed else ExitCode.OK


def _write_report(view: Any, target: Path, chosen: Fleet, *, public: bool) -> str:
    """The report's pages written, and those an earlier report left for agents no longer in the fleet removed
    (none when `public`, which writes no agent pages); what was done, in a line."""
    from gitmem.fleet.answer_text import report_written
    from gitmem.fleet.writing import remove_stale

    size, written = _write_pages(view, target, chosen, public=public)
    with _writing():
        removed = [] if public else remove_stale(view, target.parent)
    return report_written(str(target), size, written, removed, public=public)


def _write_pages(view: Any, target: Path, chosen: Fleet, *, public: bool) -> tuple[int, int]:
    """The fleet page at `target` and, unless `public`, each agent's own page beside it, every one judged
    before the first is written (gitmem.fleet.writing); (the page's bytes, agent pages written)."""
    from gitmem.fleet.writing import agent_pages, fleet_page

    data = fleet_page(view, target, chosen.path, public=public)
    write_page(target, data)
    with _writing():
        return len(data), 0 if public else agent_pages(view, target.parent)


@contextmanager
def _writing() -> Iterator[None]:
    """A page that cannot be written or removed, as the one refusal of writing a page (exit 2)."""
    from gitmem.fleet.writing import PageUnwritable

    try:
        yield
    except PageUnwritable as err:
        raise cannot_write(err.target, err.cause) from None


@fleet.command("pages", epilog=exit_codes_help(EXIT_CODES))
@fleet_option
@click.option("--out", metavar="PATH", default="fleet-pages/index.html", show_default=True,
              help="Where the public page goes; nothing is written while fleet.yaml says `pages: off`.")
@timeout_option
@offline_option
def fleet_pages(fleet_file: str, out: str, timeout: float, offline: bool) -> int:
    """The page to publish on GitHub Pages, written only when fleet.yaml says `pages: public`.

    A Pages site is public even when its repository is private, so the page is the `report --public` one:
    verdicts and counts, never a word of the agents' memory. With `pages: off` (the default) nothing is
    written and the exit code is 0, so a workflow can run this every time and publish only what it finds. It
    is refused (exit 2) where an earlier `fleet report`'s agent pages lie beside the page.
    Exit 2 when an agent could not be read (its row says so; the page is still written).
    """
    from gitmem.fleet.answer_text import PAGES_OFF
    from gitmem.fleet.target import fleet_page_target

    chosen = _load(fleet_file)
    if chosen.pages != "public":
        _say(PAGES_OFF.format(fleet=chosen.path if fleet_file == "-" else fleet_file))
        return ExitCode.OK
    target = fleet_page_target(out, chosen.path, public=True)
    view = _read(chosen, timeout, offline, with_page=True)
    _publish(chosen, view, target)
    return ExitCode.USAGE if view.failed else ExitCode.OK


def _publish(chosen: Fleet, view: Any, target: Path) -> None:
    """The public page written at `target`, said, with a line for each agent that could not be read (the run
    log of a public page is public: without the errors)."""
    _write_pages(view, target, chosen, public=True)
    _say(f"wrote {target}: the public page, verdicts and counts only; GitHub Pages shows it to anyone")
    _say_unreadable(chosen, view.rows, public=True)


@fleet.command("dispatch", epilog=exit_codes_help(EXIT_CODES))
@fleet_option
@json_option
@timeout_option
@offline_option
@click.option("--dry-run", is_flag=True, help="Decide and say, but call nothing on GitHub.")
@public_option
def fleet_dispatch(fleet_file: str, as_json: bool, timeout: float, offline: bool, dry_run: bool,
                   public: bool) -> int:
    """Catch up: for each agent on GitHub whose last cycle is overdue (older than its schedule's interval plus
    an hour), enable its workflow if GitHub disabled it for inactivity, and dispatch a cycle unless a cycle is
    already queued or in progress (a running daily close or check is no cycle), or the agent or the fleet is
    over its budget (fleet.yaml). Agents on schedule cost no API call.

    The token is GITMEM_FLEET_DISPATCH_TOKEN: a fine-grained token with Actions read and write on the agent
    repositories (the fleet's read-only token cannot start workflows). Exit 2 when an agent could not be read
    or a call failed (each row says which). With --public, a failed call says only that it failed (its error
    names repositories and quotes GitHub), and --json leaves out the branch each dispatch ran on.
    """
    import os

    from gitmem.fleet.dispatch import dispatch_overdue

    chosen, view = _load_and_read(fleet_file, timeout, offline)
    done = dispatch_overdue(chosen, view, dry_run=dry_run, environ=os.environ)
    _say_dispatch(chosen, view, done, as_json=as_json, public=public)
    _say_unreadable(chosen, view.rows, public=public)
    return ExitCode.USAGE if done.failed else ExitCode.OK


def _say_dispatch(chosen: Fleet, view: Any, done: CatchUpPass, *, as_json: bool, public: bool) -> None:
    """The pass on stdout: its --json object (gitmem.fleet.answers), or a line per agent."""
    from gitmem.fleet.answer_text import dispatch_text
    from gitmem.fleet.answers import dispatch_data

    if as_json:
        _say_json(json.dumps(dispatch_data(chosen, view, done, public=public), indent=2, ensure_ascii=False))
    else:
        _say(dispatch_text(done, public=public))


COMMANDS = (fleet,)
