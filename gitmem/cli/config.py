"""`gitmem config [KEY]`: the effective configuration, defaults included."""
from __future__ import annotations

import click

from gitmem.cli.common import UsageError, json_option, open_workspace, show, show_json, workspace_option
from gitmem.errors import ExitCode, exit_codes_help

# Every code the command can end with (its --help lists them, and 70 and 130, which any command can).
EXIT_CODES = {
    ExitCode.OK: "done",
    ExitCode.USAGE: "usage or config error, not a git repository",
}


@click.command("config", epilog=exit_codes_help(EXIT_CODES))
@click.argument("key", required=False)
@workspace_option
@json_option
def config_command(key: str | None, workspace: str | None, as_json: bool) -> int:
    """Print the effective config as JSON, or one value by dotted KEY (e.g. `gitmem config agent.email`).

    One text or number is printed as it is, for a shell; with --json every value is JSON (`"a@b"`, `10`)."""
    from gitmem.config.effective import UnknownKey, config_data, value_at

    try:
        value = value_at(config_data(open_workspace(workspace).config), key)
    except UnknownKey as err:
        raise UsageError(str(err)) from None
    if key and not as_json and isinstance(value, (str, int, float)):
        show(str(value))
    else:
        show_json(value, indent=None if key else 2)      # a key pasted into the config is masked
    return ExitCode.OK


COMMANDS = (config_command,)
