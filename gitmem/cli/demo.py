"""`gitmem demo [DIR]`: the whole loop offline, with a scripted agent, in a fresh repository."""
from __future__ import annotations

from pathlib import Path

import click

from gitmem.errors import ExitCode, exit_codes_help

# Every code the command can end with (its --help lists them, and 70 and 130, which any command can).
EXIT_CODES = {
    ExitCode.OK: "done",
    ExitCode.USAGE: "usage error, or the directory cannot be used",
}


@click.command(epilog=exit_codes_help(EXIT_CODES))
@click.argument("directory", required=False, type=click.Path(file_okay=False, path_type=Path))
def demo(directory: Path | None) -> int:
    """Create a fresh repo from the template in DIRECTORY (default: a new temp dir) and run the loop in it.

    A scripted agent runs real cycles (no model, no network, no API key): it builds, asks a decision that
    a human answers, records a lesson that later cycles confirm, skips a build so Rule 0 shows, and the
    daily close wraps up the day. Takes a few seconds.
    """
    from gitmem.scaffold.demo import run_demo

    run_demo(directory, emit=click.echo)
    return ExitCode.OK


COMMANDS = (demo,)
