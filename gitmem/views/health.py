"""What `gitmem status` says before the numbers: whether there is memory at all, and the template's
placeholders still in RULES.md (it goes into every prompt, so `<agent name>` would too)."""
from __future__ import annotations

from dataclasses import dataclass

from gitmem.checks.violation import Violation
from gitmem.config import REQUIRED_ROLES
from gitmem.errors import ExitCode, GitmemError
from gitmem.memory import placeholders
from gitmem.nofollow import files
from gitmem.workspace import Workspace


class NoMemory(GitmemError):
    """None of the memory files is there: status has nothing to report, and says how to start."""

    exit_code = ExitCode.USAGE


@dataclass(frozen=True)
class Placeholder:
    path: str
    line: int
    text: str


def missing_files(ws: Workspace) -> list[str]:
    """The required memory files (NOW, DECISIONS, LOG, LESSONS, RULES) that are not in the work tree. One that
    is there but is no regular file inside the tree (a link, a directory) is refused by name (FileRefused)."""
    return [ws.config.path(role) for role in REQUIRED_ROLES if files.size(ws.root, ws.config.path(role)) is None]


def require_memory(ws: Workspace) -> list[str]:
    """The missing memory files; NoMemory when all of them are missing (zeros would look healthy)."""
    missing = missing_files(ws)
    if len(missing) == len(REQUIRED_ROLES):
        where = f" for workspace {ws.name!r}" if ws.name else ""
        raise NoMemory(f"no gitmem memory here{where}: none of {', '.join(missing)} exists in {ws.root}; "
                       "run `gitmem init` to create it (or `gitmem demo` to see one)")
    return missing


def rules_placeholders(ws: Workspace) -> list[Placeholder]:
    """Template placeholders left in RULES.md, with their lines (`gitmem.memory.placeholders`)."""
    path = ws.config.path("rules")
    return [Placeholder(path, line, text) for line, text in placeholders.find(ws.read("rules"))]


def invalid_memory(ws: Workspace) -> list[Violation]:
    """What the next cycle would refuse to build on: errors in the memory files as they stand (a bad heading
    committed without the check), each with its fix (`gitmem.checks.standing`)."""
    from gitmem.checks.standing import standing

    return standing(ws.config, lambda path: files.read(ws.root, path))
