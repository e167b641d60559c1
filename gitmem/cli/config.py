"""`gitmem config [KEY]`: the effective configuration, defaults included."""
from __future__ import annotations

import click

from gitmem.cli.common import UsageError, open_workspace, show, show_json, workspace_option
from gitmem.errors import ExitCode, exit_codes_help


def _plain(value: object) -> object:
    from dataclasses import asdict, is_dataclass

    if is_dataclass(value) and not isinstance(value, type):
        return {k: _plain(v) for k, v in asdict(value).items()}
    if isinstance(value, tuple):
        return [_plain(v) for v in value]
    return value


# Every code the command can end with (its --help lists them, and 70 and 130, which any command can).
EXIT_CODES = {
    ExitCode.OK: "done",
    ExitCode.USAGE: "usage or config error, not a git repository",
}


@click.command("config", epilog=exit_codes_help(EXIT_CODES))
@click.argument("key", required=False)
@workspace_option
def config_command(key: str | None, workspace: str | None) -> int:
    """Print the effective config as JSON, or one value by dotted KEY (e.g. `gitmem config agent.email`)."""
    data = _plain(open_workspace(workspace).config)
    if not key:
        show_json(data, indent=2)      # a key pasted into the config is masked
        return ExitCode.OK
    value = data
    for part in key.split("."):
        if not isinstance(value, dict) or part not in value:
            raise UsageError(f"unknown config key {key!r}")
        value = value[part]
    if isinstance(value, (str, int, float)):
        show(str(value))
    else:
        show_json(value)
    return ExitCode.OK


COMMANDS = (config_command,)
