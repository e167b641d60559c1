"""Text an agent wrote, made safe to show: to a terminal and a reader, to anyone with secrets masked, on GitHub."""
from __future__ import annotations

import re
from functools import cache
from typing import Any


# What a terminal acts on rather than shows: C0 controls but TAB and LF (ESC starts ANSI sequences that clear the
# screen, set the title or write the clipboard; a bare CR or BS overprints what came before), DEL, the C1 controls
# (U+009B is a one-character CSI), and the Unicode line separators and bidirectional overrides that reorder or
# break what the reader sees. And what a reader cannot see at all: zero-width spaces and joiners, the word joiner,
# the invisible operators, a BOM inside text and the tag characters (text hidden from the human, read by a model),
# which make `D-0001` and `D-0001` plus one of them look alike. A zero-width joiner or non-joiner between two
# characters that are not ASCII is how emoji sequences and Persian or Indic words are written: shown as it is.
@cache     # compiled on first use: a command that imports this module may show nothing
def _unprintable_re() -> re.Pattern[str]:
    return re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u180e\u200b\u200e\u200f\u2028\u2029\u202a-\u202e"
                      "\u2060-\u2064\u2066-\u2069\ufeff\U000e0000-\U000e007f]"
                      "|(?<![^\x00-\x7f\\s])[\u200c\u200d]|[\u200c\u200d](?![^\x00-\x7f\\s])")


def printable(text: str) -> str:
    """`text` (written by an agent, read from a repository) with each character a terminal would act on, or a
    reader could not see, shown as its `\\uXXXX` escape: the human sees that it is there, and the terminal
    executes nothing."""
    return _unprintable_re().sub(lambda found: _escaped(ord(found.group())), text)


def _escaped(point: int) -> str:
    return f"\\u{point:04x}" if point <= 0xFFFF else f"\\U{point:08x}"


def masked_printable(text: str) -> str:
    """Text from outside (an agent's, a repository's, a remote's) as gitmem shows it: the environment's secret
    values and secret-shaped strings masked (`gitmem.secrets.scrub`), then `printable`."""
    from gitmem.secrets import scrub  # the secret patterns load where outside text is shown, not on the check path

    return printable(scrub(text))


def printable_data(value: Any) -> Any:
    """A view's data (dicts, lists, strings, numbers) with every string `printable`: what the views show was
    read from memory an agent wrote, and the JSON and the text output alike must not carry an escape."""
    if isinstance(value, str):
        return printable(value)
    if isinstance(value, dict):
        return {printable_data(key): printable_data(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [printable_data(item) for item in value]
    return value


# What GitHub acts on in a commit message or a PR's text: `@name` notifies a user or a team, `#12`, `GH-12` and
# `owner/repo#12` link, and after a closing keyword ("Fixes #12") the issue closes when the text lands on the
# default branch.
@cache     # compiled on first use: only what gitmem publishes to GitHub needs it
def _reference() -> re.Pattern[str]:
    return re.compile(r"[@#]|\b(?i:gh)-(?=\d)")


_ZERO_WIDTH = "\u200b"


def unlinked(text: str) -> str:
    """The agent's `text` with a zero-width space after each `@`, `#` and `GH-`: GitHub shows it as written, and
    it notifies no one, links no issue and closes none."""
    return _reference().sub(lambda found: found.group() + _ZERO_WIDTH, text)


# What a CI runner acts on in a job's log rather than shows: a line that starts with `::` (after blanks) is a GitHub
# Actions workflow command (`::add-mask::`, `::stop-commands::`, `::error::`), and `##[command]` anywhere in a
# line is its older form, as `##vso[...]` is Azure Pipelines' (`task.setvariable` sets a later step's PATH) and
# `##teamcity[...]` TeamCity's. Text gitmem prints from memory or from the agent would run them in the human's CI.
@cache     # compiled on first use: a command that imports this module may print nothing
def _log_command_re() -> re.Pattern[str]:
    return re.compile(r"(?m)^[^\S\n]*:(?=:)|#(?=#[A-Za-z]*\[)")


def without_log_commands(text: str) -> str:
    """`text` as gitmem prints it: a zero-width space inside each `::` that starts a line and after the first `#`
    of each `##…[`, so no CI runner reads a command in it, and a reader sees the text as written. gitmem's own
    workflow commands (gitmem.views.actions, the `github` format) are written without it."""
    if "::" not in text and "##" not in text:
        return text
    return _log_command_re().sub(lambda found: found.group() + _ZERO_WIDTH, text)


def json_without_log_commands(text: str) -> str:
    """JSON `text` that no CI runner reads a command in, and that every JSON reader decodes to exactly the data:
    `#` is written as its escape `\\u0023` (in JSON it only occurs inside strings), and no line of JSON starts with
    `::`. `without_log_commands`' zero-width space would change the strings a tool compares (a path, an id)."""
    return text.replace("#", "\\u0023")
