"""`gitmem recall QUERY`: search the whole memory history, the same engine as the agent's recall tool."""
from __future__ import annotations

import json
from datetime import date

import click

from gitmem.cli.common import DayOrTimeParam, UsageError, json_option, open_workspace, workspace_option
from gitmem.errors import ExitCode, exit_codes_help

KINDS = ("log", "lesson", "decision", "now", "rule", "commit")
MODES = ("auto", "bm25", "semantic", "hybrid")


# Every code the command can end with (its --help lists them, and 70 and 130, which any command can).
EXIT_CODES = {
    ExitCode.OK: "done (also when nothing matched)",
    ExitCode.USAGE: "usage or config error, not a git repository",
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
    import gitmem.recall
    from gitmem.cli.common import progress, progress_count
    from gitmem.recall import rebuild_size, search

    if workspace and all_workspaces:
        raise UsageError("use --workspace NAME or --all-workspaces, not both")
    if show_all and min_score is not None:
        raise UsageError("use --all or --min-score, not both")
    ws = open_workspace(workspace)
    if rebuild:
        # A bar on a terminal only (never in pipes or CI); counting the commits costs nothing otherwise.
        with progress(lambda: rebuild_size(ws), "rebuilding the recall index") as advance:
            gitmem.recall.rebuild(ws, advance)  # `rebuild` is the option's flag here
    cuts = {"min_score": 0.0, "gap": 1.0} if show_all else {"min_score": min_score}
    hits = search(ws, " ".join(query), kinds=list(kinds) or None, since=since, until=until,
                  limit=limit, all_workspaces=all_workspaces, mode=mode, known_only=known,
                  progress=progress_count("embedding the memory for recall (entries)"), **cuts)
    if as_json:
        click.echo(json.dumps({"mode": hits.mode, "known": hits.known, "hits": [hit.to_dict() for hit in hits]},
                              ensure_ascii=False, indent=2))
    else:
        click.echo(hits.text())
    return ExitCode.OK


COMMANDS = (recall,)
