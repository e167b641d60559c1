"""Which workspaces own a memory file: the one policy the runner, the GM923 check and recall read.

A memory file belongs to every workspace whose config names it ("" is the default workspace). A file that two
or more workspaces name (one ROADMAP for all) is shared: it is each sharer's own and no one else's. So:
- a cycle of one workspace may write its own files and the ones it shares; every other memory file is foreign
  to it (gitmem.cycle.foreign puts the agent's edits of those back);
- a commit by the agent is one workspace's work when some workspace owns every memory file it changes, and
  GM923 otherwise (gitmem.checks.cross_workspace), so a shared file never makes a commit cross-workspace,
  nor hides the foreign files beside it;
- recall shows a shared file, and a commit that changed only files shared by the same workspaces, to each of
  those workspaces (gitmem.recall.index).
Everything is read from the config at hand: nothing here opens gitmem.yaml again.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import Protocol

DEFAULT = ""     # the default workspace's name


class NamesWorkspaces(Protocol):
    """What ownership reads of a config (gitmem.config.Config): a protocol, not the class, because the config
    module asks this one for its foreign paths, and the two must not import each other around a circle."""

    def workspace_paths(self) -> dict[str, dict[str, str]]: ...


@dataclass(frozen=True)
class Ownership:
    """Every memory file of a repository with the workspaces that own it and the role each gives it.

    `places` lists the workspaces in the config's order, the default one first: (name, ((role, path), ...)).
    """

    places: tuple[tuple[str, tuple[tuple[str, str], ...]], ...]

    @classmethod
    def of(cls, config: NamesWorkspaces) -> Ownership:
        return cls(tuple((name, tuple(paths.items())) for name, paths in config.workspace_paths().items()))

    @cached_property
    def owners(self) -> Mapping[str, frozenset[str]]:
        """path -> the workspaces that name it, for every memory file."""
        found: dict[str, set[str]] = {}
        for name, paths in self.places:
            for _, path in paths:
                found.setdefault(path, set()).add(name)
        return {path: frozenset(names) for path, names in found.items()}

    def owners_of(self, path: str) -> frozenset[str]:
        """The workspaces whose memory `path` is; empty for a file that is no workspace's memory."""
        return self.owners.get(path, frozenset())

    def is_shared(self, path: str) -> bool:
        return len(self.owners_of(path)) > 1

    def role_of(self, path: str) -> str | None:
        """The role the first workspace naming `path` gives it (sharers may name it for different roles)."""
        return next((role for _, paths in self.places for role, named in paths if named == path), None)

    def foreign_to(self, workspace: str) -> dict[str, tuple[str, str]]:
        """The memory files `workspace` does not own, path -> (the first workspace owning it, its role there):
        what a cycle of that workspace may not write."""
        found: dict[str, tuple[str, str]] = {}
        for name, paths in self.places:
            for role, path in paths:
                if workspace not in self.owners_of(path):
                    found.setdefault(path, (name, role))
        return found

    def writers(self, paths: Iterable[str]) -> frozenset[str] | None:
        """The workspaces that own every memory file among `paths` (other files are no workspace's and are
        left out): who could have written them all. None when `paths` holds no memory file."""
        held = [self.owners_of(path) for path in paths if path in self.owners]
        if not held:
            return None
        return frozenset.intersection(*held)


def shared_label(owners: Iterable[str]) -> str:
    """The one name recall files a shared file's documents under: its owners joined by `/`, which no workspace
    name holds, so it never reads as one workspace ("default" standing for the default one)."""
    return "/".join(sorted(name or "default" for name in owners))
