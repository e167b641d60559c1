"""`gitmem recall QUERY`: search the whole memory history, the same engine as the agent's recall tool."""
from __future__ import annotations

import json
from datetime import date
from typing import TYPE_CHECKING

import click

from gitmem.cli.common import (
    DayOrTimeParam,
    UsageError,
    echo,
    echo_json,
    json_option,
    one_workspace_or_all,
    open_memory,
    open_workspace,
    ordered_window,
    progress,
    progress_count,
    workspace_option,
)
from gitmem.errors import ExitCode, exit_codes_help

if TYPE_CHECKING:     # the library loads inside the command only
    from gitmem.recall import Hits
    from gitmem.workspace import Workspace

KINDS = ("log", "lesson", "decision", "now", "rule", "commit")
MODES = ("auto", "bm25", "semantic", "hybrid")
EMBEDDING = "embedding the memory for recall (entries)"      # the progress line while vectors are built


# Every code the command can end with (its --help lists them, and 70 and 130, which any command can).
EXIT_CODES = {
    ExitCode.OK: "done (also when nothing matched)",
    ExitCode.USAGE: "usage or config error, not a git repository, or no memory here (run `gitmem init`)",
}


@click.command("recall", epilog=exit_codes_help(EXIT_CODES))
@click.argument("query", nargs=-1, required=True)
@json_option
@click.option("--kind", "kinds", multiple=True, type=click.Choice(KINDS),
              help="Only this kind of entry; repeat for several.")
@click.option("--since", metavar="DATE", type=DayOrTimeParam(),
              help="Only entries dated on or after DATE (YYYY-MM-DD, or YYYY-MM-DD HH:MM).")
@click.option("--until", metavar="DATE", type=DayOrTimeParam(),
              help="Only entries dated on or before DATE (YYYY-MM-DD, or YYYY-MM-DD HH:MM).")
@click.option("--limit", type=click.IntRange(min=1), default=None,
              help="At most this many hits (default: recall.limit, 6).")
@click.option("--known", is_flag=True,
              help="Ask \"is this known at all?\": only hits holding over half of the query's words (weighted by "
                   "rarity) in one place, or passing the model's floor, after the cuts; otherwise \"no memory of "
                   "that\".")
@click.option("--min-score", type=click.FloatRange(0.0, 1.0), default=None,
              help="Drop hits scoring under this, 0..1 (default: none; with --known, recall.min_score, 0.35).")
@click.option("--all", "show_all", is_flag=True,
              help="Skip the cuts (minimum score and clear-winner gap, which only --known applies by default): "
                   "every hit up to --limit.")
@click.option("--mode", type=click.Choice(MODES), default=None,
              help="bm25 (words), semantic (meaning), hybrid (both), or auto: hybrid when recall.model is an "
                   "onnx:DIRECTORY encoder and [semantic-onnx] is installed, bm25 otherwise (default: recall.mode, "
                   "auto).")
@workspace_option
@click.option("--all-workspaces", is_flag=True, help="Search every workspace; each hit names its workspace.")
@click.option("--rebuild", is_flag=True, help="Rebuild the index from scratch first (it is only a cache); on a "
              "terminal, with a progress bar.")
def recall(query: tuple[str, ...], as_json: bool, kinds: tuple[str, ...], since: date | None, until: date | None,
           limit: int | None, known: bool, min_score: float | None, show_all: bool, mode: str | None,
           workspace: str | None, all_workspaces: bool, rebuild: bool) -> int:
    """Search LOG, lessons, decisions, NOW, rules and commit messages; best matches first.

    \b
    Each hit: path:line [kind id date] snippet, with matched words in **bold**.
    The best evidence is shown even when no entry holds most of the question
    (its words are rarely the answer's): such hits say "weak", and a line
    above them says so. --known asks only whether memory holds it.
    Any text is a valid query: quotes and operators are read as plain words.
    Word variants match: "deployed" finds "deploys", "setup" finds "set up".
    Hybrid mode also finds entries that say the same in other words (best with
    an encoder saved once: recall.model: onnx:DIRECTORY, see docs/recall.md).
    The index lives in .git/gitmem/ and updates itself, including uncommitted edits.
    """
    from gitmem.recall import search

    _refuse_contradictions(workspace, all_workspaces, since, until)
    cuts = _cuts(show_all, min_score)
    ws = open_workspace(workspace) if all_workspaces else open_memory(workspace)
    if rebuild:
        _rebuild_with_bar(ws)
    hits = search(ws, " ".join(query), kinds=list(kinds) or None, since=since, until=until, limit=limit, mode=mode,
                  all_workspaces=all_workspaces, known_only=known, progress=progress_count(EMBEDDING), **cuts)
    _show(hits, as_json)
    return ExitCode.OK


def _refuse_contradictions(workspace: str | None, all_workspaces: bool, since: date | None,
                           until: date | None) -> None:
    """Options that contradict each other, refused before anything is read (exit 2): a workspace and all of
    them; a window that ends before it starts, which would hold no memory at all."""
    one_workspace_or_all(workspace, all_workspaces)
    ordered_window(since, until)


def _cuts(show_all: bool, min_score: float | None) -> dict[str, float | None]:
    """The cuts `search` is asked for: none at all with --all (a minimum score of 0 and a gap of 1 turn them
    off), else --min-score's, if given. --all with --min-score is a usage error."""
    if show_all and min_score is not None:
        raise UsageError("use --all or --min-score, not both")
    return {"min_score": 0.0, "gap": 1.0} if show_all else {"min_score": min_score}


def _rebuild_with_bar(ws: Workspace) -> None:
    """Rebuild the index from scratch, with a bar on a terminal only (never in pipes or CI); counting the
    commits for the bar costs nothing otherwise."""
    from gitmem.recall import rebuild, rebuild_size

    with progress(lambda: rebuild_size(ws), "rebuilding the recall index") as advance:
        rebuild(ws, advance)


def _show(hits: Hits, as_json: bool) -> None:
    """The hits as text (gitmem.recall.Hits.text), or as JSON with the mode and whether memory holds the query."""
    from gitmem.checks.render import as_data, unreadable_note

    if as_json:
        echo_json(json.dumps({"mode": hits.mode, "known": hits.known, "hits": [hit.to_dict() for hit in hits],
                               "unreadable": as_data(hits.undecodable)}, ensure_ascii=False, indent=2))
    else:
        echo(hits.text())
    if hits.undecodable:
        echo(unreadable_note(hits.undecodable), err=True)


COMMANDS = (recall,)
