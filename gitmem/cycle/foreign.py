"""Other workspaces' memory: a cycle of one workspace writes only its own.

A repository can hold several agents as workspaces (`workspaces:` in gitmem.yaml). The cycle of one runs
one agent, whose word is no more the other agents' than the human's: an edit of another workspace's memory
file (resolving its decision, emptying its LOG, rewriting its NOW, LESSONS or RULES) is put back as HEAD has
it, whole, and one note per file goes to the cycle's Evidence. A file two workspaces share (one ROADMAP for
all) belongs to both and is judged as the cycle's own.
"""
from __future__ import annotations

from gitmem import gitio
from gitmem.workspace import Workspace


def touched(ws: Workspace) -> dict[str, list[str]]:
    """The other workspaces' memory paths the work tree changed, each with the dirty paths at or under it (a
    directory the agent put where the file was)."""
    foreign = ws.config.foreign_paths()
    if not foreign:
        return {}
    found: dict[str, list[str]] = {}
    for path, _ in gitio.dirty_files(ws.repo):
        for target in foreign:
            if path == target or path.startswith(f"{target}/"):
                found.setdefault(target, []).append(path)
    return found


def revert(ws: Workspace) -> list[str]:
    """Put the other workspaces' memory files back as HEAD holds them; one note per file, for Evidence."""
    changed = touched(ws)
    if not changed:
        return []
    gitio.restore_paths(ws.repo, [path for paths in changed.values() for path in paths] + list(changed))
    foreign, own = ws.config.foreign_paths(), ws.name or "the default workspace"
    notes = []
    for target in sorted(changed):
        name, role = foreign[target]
        notes.append(f"reverted the agent's edit of {target}, the {role.upper()} of workspace "
                     f"{name or '(default)'} (a cycle of {own} writes only its own memory)")
    return notes
