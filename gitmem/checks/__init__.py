"""The GM rules over an old and a new snapshot of memory. No git here: snapshots come from `gitmem.repo`."""
from __future__ import annotations

from dataclasses import dataclass

from gitmem.checks.violation import Violation
from gitmem.config import Config
from gitmem.snapshot import Snapshot


@dataclass(frozen=True)
class CheckInput:
    config: Config
    old: Snapshot | None          # None: no previous state (unborn HEAD), every file is new
    new: Snapshot
    author_email: str | None = None   # who makes the new state; GM207 compares it with agent.email


def run_checks(inp: CheckInput) -> list[Violation]:
    from gitmem.checks import decisions, lessons, log, now, repo_wide, rules

    found: list[Violation] = []
    found += repo_wide.check(inp)
    broken = {v.path for v in found if v.code == "GM902"}
    for family in (now, decisions, log, lessons, rules):
        found += family.check(inp, skip=broken)
    return sorted(set(found))


def has_errors(violations: list[Violation]) -> bool:
    return any(v.is_error for v in violations)
