"""The exit codes each gitmem command declares in its --help, read from the help itself (its `Exit codes:`
paragraph, `gitmem.errors.exit_codes_help`): what a user reads is what the tests hold every run to."""
from __future__ import annotations

import re
from collections.abc import Iterator, Sequence

import click

from gitmem.cli import cli

_CODE = re.compile(r"(?:Exit codes: |; )([0-9]+) ")


def leaf_commands() -> Iterator[tuple[tuple[str, ...], click.Command]]:
    """Every command a user runs (`check`, `log add`, `fleet status`, …), with its name path."""
    ctx = click.Context(cli)

    def walk(command: click.Command, path: tuple[str, ...]) -> Iterator[tuple[tuple[str, ...], click.Command]]:
        if isinstance(command, click.Group):
            for name in command.list_commands(ctx):
                sub = command.get_command(ctx, name)
                assert sub is not None, name
                yield from walk(sub, (*path, name))
        else:
            yield path, command

    yield from walk(cli, ())


def groups() -> Iterator[tuple[tuple[str, ...], click.Group]]:
    """Every group of commands under `gitmem` (`log`, `fleet`, `hook`, …), at any depth, with its name path."""
    ctx = click.Context(cli)

    def walk(group: click.Group, path: tuple[str, ...]) -> Iterator[tuple[tuple[str, ...], click.Group]]:
        for name in group.list_commands(ctx):
            sub = group.get_command(ctx, name)
            if isinstance(sub, click.Group):
                yield (*path, name), sub
                yield from walk(sub, (*path, name))

    yield from walk(cli, ())


def declared(command: click.Command) -> set[int]:
    """The codes a command's help lists (a group's too: `gitmem log` on its own ends with its help or click's
    usage error); empty when it has no `Exit codes:` paragraph."""
    text = command.epilog or ""
    start = text.find("Exit codes: ")
    return {int(code) for code in _CODE.findall(text[start:])} if start >= 0 else set()


def command_for(argv: Sequence[str]) -> click.Command:
    """The command `gitmem ARGV` runs: the deepest one its words name (the top group for a usage error there)."""
    ctx = click.Context(cli)
    command: click.Command = cli
    for word in argv:
        if word.startswith("-"):
            if isinstance(command, click.Group):
                continue            # the top group's own flags (--no-color)
            break
        if not isinstance(command, click.Group):
            break
        found = command.get_command(ctx, word)
        if found is None:
            break
        command = found
    return command
