"""GM923: a commit by the agent writes the memory of one workspace at most.

A cycle runs the agent of one workspace, and the runner puts back whatever it did to the others
(gitmem.cycle.foreign): so a commit authored as the agent that changes the files of two workspaces was not
made by the runner as it runs, and is reported whichever workspace is being checked. A human's commit may
change any workspace. A file two workspaces share (one ROADMAP) is each sharer's own (gitmem.config.ownership):
a commit is one workspace's when that workspace owns every memory file it changes, so a shared file neither
makes a commit cross-workspace nor covers a file only other workspaces own. What a merge brings from its other
parents is theirs, not the merge's.
"""
from __future__ import annotations

from collections.abc import Collection

from gitmem import codes
from gitmem.checks.inputs import CheckInput
from gitmem.checks.rule_inputs import authorship
from gitmem.checks.violation import Violation
from gitmem.gitio import Snapshot, same_blob


def check(inp: CheckInput, earlier: Collection[Violation] = ()) -> list[Violation]:
    by = authorship(inp)
    if inp.old is None or not inp.config.workspaces or not by.is_agent:
        return []
    # Imported here: a repository without workspaces (the pre-commit path's common case) never needs it.
    from gitmem.config.ownership import Ownership

    ownership = Ownership.of(inp.config)
    written = [path for path in ownership.owners
               if _changed(inp.old, inp.new, path) and all(_changed(other, inp.new, path) for other in inp.others)]
    if ownership.writers(written) != frozenset():
        return []       # no memory file written, or some workspace owns every one: that workspace's cycle
    names = sorted(set().union(*(ownership.owners_of(path) for path in written)))
    listed = ", ".join(name or "(default)" for name in names)
    # Up to rules 4 a shared file counted for nobody: a commit that wrote one workspace's own files at most
    # passed, so such old history still verifies (the `shared` variant is rules 5).
    alone = {name for path in written if not ownership.is_shared(path) for name in ownership.owners_of(path)}
    variant = by.variant if len(alone) > 1 else "shared"
    return [Violation.of(codes.CROSS_WORKSPACE_WRITE, path, 1, variant, count=len(names), names=listed, path=path)
            for path in written]


def _changed(old: Snapshot, new: Snapshot, path: str) -> bool:
    if same_blob(old, new, path):
        return False
    if old.oid(path) is not None and new.oid(path) is not None:
        return True       # both blob ids known and different (or the mode changed): no blob is read
    return old.read(path) != new.read(path)     # a link or a directory reads as None, as a missing file does
