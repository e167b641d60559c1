"""The `gitmem` command: a thin click layer over the library. Heavy modules load inside commands only."""
from __future__ import annotations

import sys
import traceback
from collections.abc import Sequence

import click

from gitmem import __version__, exitcodes


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
             epilog=exitcodes.HELP)
@click.version_option(__version__, "--version", prog_name="gitmem")
def cli() -> None:
    """Git-native long-term memory for AI agents: NOW, DECISIONS, LOG, LESSONS and RULES, enforced.

    \b
    Validate:  gitmem check | gitmem verify --range A..B
    Write:     gitmem log add | now add | decision ask/answer | lesson add/confirm
    Start:     gitmem init [DIR]
    """


# One module per area, each exporting COMMANDS. Modules import only click at top level, so that
# `gitmem check` on the pre-commit path stays lean; the library loads inside each command.
COMMAND_MODULES = ("check", "write", "init", "context", "cycle", "demo", "close", "status", "pending", "recall",
                   "github", "config")


def _register() -> None:
    import importlib
    import importlib.util

    for name in COMMAND_MODULES:
        if importlib.util.find_spec(f"gitmem.cli.{name}") is None:
            continue
        module = importlib.import_module(f"gitmem.cli.{name}")
        for command in module.COMMANDS:
            cli.add_command(command)


_register()


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI and return its exit code. Known errors print one clear line; others a bug report."""
    from gitmem.cli.common import known_errors

    try:
        result = cli.main(args=list(argv) if argv is not None else None, prog_name="gitmem", standalone_mode=False)
        return result if isinstance(result, int) else exitcodes.OK
    except click.exceptions.Exit as stop:
        return stop.exit_code
    except click.Abort:
        click.echo("Aborted.", err=True)
        return 130
    except click.ClickException as err:
        err.show()
        return err.exit_code
    except known_errors() as err:
        from gitmem.checks.secrets import redact

        # Config errors quote the bad value; it may be a key pasted into the wrong place.
        click.echo(f"gitmem: {redact(str(err))}", err=True)
        return getattr(err, "exit_code", exitcodes.USAGE)
    except Exception:
        click.echo("gitmem: unexpected error; please report it with this traceback:", err=True)
        traceback.print_exc(file=sys.stderr)
        return 70
