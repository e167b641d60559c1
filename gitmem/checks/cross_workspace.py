"""GM923: a commit by the agent writes the memory of one workspace at most.

A cycle runs the agent of one workspace, and the runner puts back whatever it did to the others
(gitmem.cycle.foreign): so a commit authored as the agent that changes the files of two workspaces was not
made by the runner as it runs, and is reported whichever workspace is being checked. A human's commit may
change any workspace. A file two workspaces share (one ROADMAP) belongs to neither alone and is not counted;
what a merge brings from its other parents is theirs, not the merge's.
"""
from __future__ import annotations

from gitmem import codes
from gitmem.checks import CheckInput
from gitmem.checks.rule_inputs import authorship
from gitmem.checks.violation import Violation
from gitmem.config import Config
from gitmem.gitio import Snapshot, same_blob


def owned_paths(config: Config) -> dict[str, str]:
    """Path -> workspace name ("" the default one) for the memory files that belong to one workspace only."""
    owners: dict[str, set[str]] = {}
    for name, paths in config.workspace_paths().items():
        for path in paths.values():
            owners.setdefault(path, set()).add(name)
    return {path: next(iter(names)) for path, names in owners.items() if len(names) == 1}


def check(inp: CheckInput) -> list[Violation]:
    by = authorship(inp)
    if inp.old is None or not inp.config.workspaces or not by.is_agent:
        return []
    written: dict[str, list[str]] = {}
    for path, name in owned_paths(inp.config).items():
        if _changed(inp.old, inp.new, path) and all(_changed(other, inp.new, path) for other in inp.others):
            written.setdefault(name, []).append(path)
    if len(written) < 2:
        return []
    names = ", ".join(name or "(default)" for name in sorted(written))
    return [Violation.of(codes.CROSS_WORKSPACE_WRITE, path, 1, by.variant, count=len(written), names=names, path=path)
            for paths in written.values() for path in paths]


def _changed(old: Snapshot, new: Snapshot, path: str) -> bool:
    if same_blob(old, new, path):
        return False
    if old.oid(path) is not None and new.oid(path) is not None:
        return True       # both blob ids known and different (or the mode changed): no blob is read
    return old.read(path) != new.read(path)     # a link or a directory reads as None, as a missing file does
