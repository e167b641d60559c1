"""`check` and `verify` over every workspace of a repository, the default when no `--workspace` is named.

A repository's workspaces are separate memories in one history: a commit that breaks one of them (resolves
its decision, empties its LOG) is as wrong as one that breaks the default memory, so checking only the
default would pass it. Each workspace is checked by its own config; what several report alike (a file they
share, GM903 over the other files, GM923) is reported once.
"""
from __future__ import annotations

from collections.abc import Callable

from gitmem.checks import check_and_verify
from gitmem.checks.check_and_verify import RangeResult
from gitmem.checks.violation import Violation
from gitmem.workspace import Workspace


def each_workspace(ws: Workspace) -> list[Workspace]:
    """`ws` and, when it is the default workspace, every workspace its config names, each with its config."""
    if ws.name:
        return [ws]
    return [ws, *(ws.with_config(ws.config.with_workspace(name)) for name, _ in ws.config.workspaces)]


def check_every(ws: Workspace, one: Callable[[Workspace], list[Violation]]) -> list[Violation]:
    """`one` (`check_and_verify.check_worktree`, a staged check) run for each workspace, the findings merged."""
    return sorted({v for each in each_workspace(ws) for v in one(each)})


def check_staged_every(ws: Workspace) -> list[Violation]:
    """What is staged, in every workspace the staged gitmem.yaml names, each judged by its staged config
    (`check_and_verify.staged_config`), so a commit that changes limits is checked by them. The workspaces are
    the commit's: a workspace only the work tree's gitmem.yaml names (not staged yet, right after `gitmem init`)
    failed the whole check as "unknown workspace"."""
    return check_every(ws.with_config(check_and_verify.staged_config(ws)), check_and_verify.check_staged)


def verify_every(ws: Workspace, start: str | None, end: str, *, hide: tuple[str, ...] = (),
                 progress: Callable[[int], None] | None = None) -> RangeResult:
    """`check_and_verify.verify_range` for each workspace. `commits` counts the range once; `progress` advances
    once per commit per workspace (see `span_work`)."""
    merged = RangeResult()
    found: set[Violation] = set()
    for each in each_workspace(ws):
        part = check_and_verify.verify_range(each, start, end, hide=hide, progress=progress)
        found.update(part.violations)
        merged.commits = max(merged.commits, part.commits)
        merged.before_adoption = max(merged.before_adoption, part.before_adoption)
        merged.rewritten = merged.rewritten or part.rewritten
        if part.rewritten:
            break         # the range is the same for every workspace: once is enough to say so
    merged.violations = sorted(found)
    return merged


def span_work(ws: Workspace, span: check_and_verify.Span) -> int:
    """How many steps `verify_every` reports through `progress`."""
    return check_and_verify.span_length(ws, span) * len(each_workspace(ws))
