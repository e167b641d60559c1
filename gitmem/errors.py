"""Exit codes and the one error type every library error derives from.

A library error carries its exit code; `gitmem.cli.main` maps them all in one place. The codes have one
meaning each across all commands and are documented in `gitmem --help` and the README.
"""
from __future__ import annotations

from collections.abc import Sequence
from enum import IntEnum
from typing import Any


class ExitCode(IntEnum):
    OK = 0                # clean / done
    VIOLATIONS = 1        # memory format violations found, or a write refused as invalid
    USAGE = 2             # bad arguments, bad config, not a git repository
    DIRTY = 3             # the cycle refused to start: uncommitted changes, a held lock, or invalid memory
    SALVAGED = 4          # the cycle failed or could not push; its work is safe on a named branch
    REWRITTEN = 5         # history was rewritten: `verify`'s range, or the upstream a push would build on
    LOCAL_ONLY = 6        # the push failed, its fallback branch too: the work is only on this machine's disk
    INTERNAL = 70         # a bug in gitmem: the traceback is printed for the report
    INTERRUPTED = 130     # stopped with Ctrl-C
    OUTPUT_CLOSED = 141   # what it printed went to a pipe whose reader had stopped reading (128 + SIGPIPE, as git)


# What each code means, in `gitmem --help` and in each command's own `Exit codes:` paragraph.
MEANINGS: dict[ExitCode, str] = {
    ExitCode.OK: "ok",
    ExitCode.VIOLATIONS: "violations",
    ExitCode.USAGE: "usage or config error",
    ExitCode.DIRTY: "cycle refused to start (dirty tree, lock, invalid memory)",
    ExitCode.SALVAGED: "cycle failed, conflicted or its push was refused, work saved on a branch",
    ExitCode.REWRITTEN: "history rewritten (verify, or an upstream a push refused to build on)",
    ExitCode.LOCAL_ONLY: "the push failed and the work is only on this machine's disk",
    ExitCode.INTERNAL: "internal error (a bug: please report the traceback)",
    ExitCode.INTERRUPTED: "interrupted",
    ExitCode.OUTPUT_CLOSED: "output closed (the reader of its pipe stopped reading)",
}
# Every command can end with these, so each command's paragraph ends with them.
ALWAYS = (ExitCode.INTERNAL, ExitCode.INTERRUPTED, ExitCode.OUTPUT_CLOSED)


def _paragraph(meanings: dict[ExitCode, str]) -> str:
    return "Exit codes: " + "; ".join(f"{int(code)} {meaning}" for code, meaning in meanings.items()) + "."


HELP = _paragraph(MEANINGS)


def exit_codes_help(meanings: dict[ExitCode, str]) -> str:
    """One command's `Exit codes:` paragraph for its --help: every code it can return, worded for it (the
    codes it does not word keep their general meaning), then the ones every command can return."""
    return _paragraph({**meanings, **{code: MEANINGS[code] for code in ALWAYS if code not in meanings}})


class GitmemError(Exception):
    """A known failure whose message tells the user what to do. `exit_code` says how the CLI exits, and
    `violations` (GM violations, when the failure has them) are listed under the message."""

    exit_code: int = ExitCode.USAGE
    # Set by a command that answered this failure in its own JSON already (`cycle --json`'s refusal), so that the
    # error map's JSON answer to --json is not printed a second time.
    shown_as_json: bool = False

    def __init__(self, message: str = "", violations: Sequence[Any] | None = None) -> None:
        super().__init__(message)
        self.violations = list(violations or ())


class RunFailure(GitmemError):
    """A failure of the cycle or the close that is also a violation (GM7xx, GM8xx), so that machines read it
    through the same renderers as `check` (`gitmem.checks.violation.failure_violations`).

    `code` is a `gitmem.codes.Code`; `where` and `line` the path and line it concerns (a memory file's line, a
    gitmem.yaml setting's, or line 1 of a file or ref no line of which means anything); `details` the GM violations
    behind it (for invalid memory), which the message already lists for people.
    """

    def __init__(self, message: str, *, code: Any, where: str, line: int = 1, details: Sequence[Any] = ()) -> None:
        super().__init__(message)
        self.code = code
        self.where = where
        self.line = line
        self.details = list(details)
