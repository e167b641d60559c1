"""What `gitmem status` says before the numbers: whether there is memory at all, the template's
placeholders still in RULES.md (it goes into every prompt, so `<agent name>` would too), and a newest entry
dated ahead of the clock (another writer's clock ran fast: gitmem.checks.written_times)."""
from __future__ import annotations

import shlex
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from gitmem import codes
from gitmem.checks.violation import Violation
from gitmem.config import REQUIRED_ROLES
from gitmem.confined import files
from gitmem.errors import ExitCode, GitmemError
from gitmem.memory import placeholders
from gitmem.memory.clock_skew import beyond, spoken
from gitmem.workspace import Workspace
from gitmem.workspace.head_and_tail import FileSource


class NoMemory(GitmemError):
    """None of the memory files is there: status has nothing to report, and says how to start."""

    exit_code = ExitCode.USAGE


@dataclass(frozen=True)
class Placeholder:
    path: str
    line: int
    text: str
    code: str       # GM717, and its message: the very line the cycle's refusal prints
    message: str


def missing_files(ws: Workspace) -> list[str]:
    """The required memory files (NOW, DECISIONS, LOG, LESSONS, RULES) that are not in the work tree. One that
    is there but is no regular file inside the tree (a link, a directory) is refused by name (FileRefused)."""
    return [ws.config.path(role) for role in REQUIRED_ROLES if files.file_size(ws.root, ws.config.path(role)) is None]


def require_memory(ws: Workspace) -> list[str]:
    """The missing memory files; NoMemory when all of them are missing (zeros would look healthy)."""
    missing = missing_files(ws)
    if len(missing) == len(REQUIRED_ROLES):
        if ws.bare:
            raise NoMemory(f"{ws.root} is a bare repository: it holds history, no memory files; clone it and run "
                           "gitmem in the clone")
        where = f" for workspace {ws.name!r}" if ws.name else ""
        raise NoMemory(f"no gitmem memory here{where}: none of {', '.join(missing)} exists in {ws.root}; "
                       f"run `{init_to_run(ws.root)}` to create it (or `gitmem demo` to see one)")
    return missing


def init_to_run(root: Path) -> str:
    """The `gitmem init` that creates memory at the repository's `root`. From a subfolder a bare `gitmem init`
    is refused (a non-empty folder inside a repository) or, in an empty one, makes a second repository there,
    so the command names the root, quoted for the shell, unless the shell already stands in it."""
    try:
        here = Path.cwd().resolve() == root.resolve()
    except OSError:          # the shell's folder was removed
        here = False
    return "gitmem init" if here else shlex.join(["gitmem", "init", str(root)])


def rules_placeholders(ws: Workspace) -> list[Placeholder]:
    """Template placeholders left in RULES.md, with their lines (`gitmem.memory.placeholders`)."""
    path = ws.config.path("rules")
    found = [(Violation.of(codes.CYCLE_RULES_PLACEHOLDERS, path, line, "line", text=text), text)
             for line, text in placeholders.find_placeholders(ws.read("rules"))]
    return [Placeholder(v.path, v.line, text, v.code, v.message) for v, text in found]


def undecodable_read(path: str, source: FileSource) -> list[Violation]:
    """GM902 for each line with bytes that are not UTF-8 in what `source` read of LOG at `path`: the entries status
    shows. Decoding all of LOG for it would cost status 130 ms at 100x; `gitmem check --worktree` reads every
    byte."""
    return sorted(Violation.of(codes.NOT_UTF8, path, source.line_at(offset), byte=offset, reason=why)
                  for offset, why in source.undecodable.items())


def invalid_memory(ws: Workspace) -> list[Violation]:
    """What the next cycle would refuse to build on: errors in the memory files as they stand (a bad heading
    committed without the check), each with its fix (`gitmem.checks.standing`)."""
    from gitmem.checks.standing import standing

    return standing(ws.config, lambda path: files.read_bytes(ws.root, path))
@dataclass(frozen=True)
class DatedAhead:
    path: str
    line: int
    what: str
    when: str
    ahead: str


def dated_ahead(ws: Workspace, moment: datetime) -> list[DatedAhead]:
    """LOG's newest entry and NOW's top block when dated more than CLOCK_SKEW after `moment`: the clock that
    wrote them ran fast. The entries after them will be dated earlier (GM310), and `verify` flags such an entry
    when it reaches a branch (GM309); nothing is stuck, but the human should set that clock right."""
    from gitmem.memory import now
    from gitmem.workspace.head_and_tail import read_head, second_heading

    found: list[DatedAhead] = []
    newest = ws.log_tail(1).entries
    top = now.parse(read_head(ws.root, ws.config.path("now"), second_heading), max_blocks=1).top
    for role, item, what in (("log", newest[-1] if newest else None, "LOG's newest entry"),
                             ("now", top, "NOW's top block")):
        gap = beyond(item.when.moment, moment) if item is not None else None
        if item is not None and gap is not None:
            found.append(DatedAhead(ws.config.path(role), item.line, what, str(item.when), spoken(gap)))
    return found
