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


HELP = (
    "Exit codes: 0 ok; 1 violations; 2 usage or config error; 3 cycle refused to start (dirty tree, lock, "
    "invalid memory); 4 cycle failed, conflicted or its push was refused, work saved on a branch; 5 history "
    "rewritten (verify, or an upstream a push refused to build on); 6 the push failed and the work is only on "
    "this machine's disk; 70 internal error (a bug: please report the traceback); 130 interrupted."
)


class GitmemError(Exception):
    """A known failure whose message tells the user what to do. `exit_code` says how the CLI exits, and
    `violations` (GM violations, when the failure has them) are listed under the message."""

    exit_code: int = ExitCode.USAGE

    def __init__(self, message: str = "", violations: Sequence[Any] | None = None) -> None:
        super().__init__(message)
        self.violations = list(violations or ())


class RunFailure(GitmemError):
    """A failure of the cycle or the close that is also a violation (GM7xx, GM8xx), so that machines read it
    through the same renderers as `check` (`gitmem.checks.violation.failure_violations`).

    `code` is a `gitmem.codes.Code`; `where` the path it concerns; `details` the GM violations behind it
    (for invalid memory), which the message already lists for people.
    """

    def __init__(self, message: str, *, code: Any, where: str, details: Sequence[Any] = ()) -> None:
        super().__init__(message)
        self.code = code
        self.where = where
        self.details = list(details)
