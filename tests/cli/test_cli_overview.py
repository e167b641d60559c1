"""`gitmem --help`'s overview repeats the choices of `init --agent` and `import` in one line each (the overview
loads no command module): each line is held to the choices, so a new agent CLI or source is listed there too."""
from __future__ import annotations

import re

from gitmem.cli import cli, init, interop


def _overview_line(label: str) -> str:
    return next(line for line in (cli.help or "").split("\n") if line.strip().startswith(label))


def test_the_overview_names_every_agent_init_wires() -> None:
    listed = re.search(r"--agent ([a-z|-]+)\]", _overview_line("Start:"))
    assert listed is not None and tuple(listed.group(1).split("|")) == init.AGENTS


def test_the_overview_names_every_import_source() -> None:
    listed = re.search(r"gitmem import ([a-z|-]+) ", _overview_line("Move in:"))
    assert listed is not None and tuple(listed.group(1).split("|")) == interop.SOURCES
