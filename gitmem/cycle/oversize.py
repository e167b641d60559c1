"""Files too big to commit: the runner keeps them out of its commits (GitHub refuses files over 100 MB).

A changed file over `cycle.max_file_bytes` is moved to `.git/gitmem/held/cycle-N/<path>`, never deleted, and
the work tree gets back what HEAD has there (nothing, for a new file). So the cycle commits without it, the
next cycle starts from a clean tree, and nothing is lost. Memory files are exempt from the cycle's own commit:
their growth is judged by the GM rules (GM307 for a LOG entry), and a long-lived LOG outgrows any fixed size.
"""
from __future__ import annotations

import os
import shutil
import stat
from collections.abc import Iterable
from dataclasses import dataclass

from gitmem import gitio
from gitmem.workspace import Workspace
from gitmem.workspace.statedir import state_directory

HELD_DIR = "held"


@dataclass(frozen=True)
class Held:
    path: str          # repo-relative, where the file was
    size: int          # its size in bytes
    kept: str          # where it is now

    def note(self, limit: int) -> str:
        return (f"kept {self.path} ({self.size} bytes) out of the commit: it is over cycle.max_file_bytes="
                f"{limit}; it was moved to {self.kept}")


def hold_out(ws: Workspace, paths: Iterable[str], cycle: int, *, exempt: Iterable[str] = ()) -> list[Held]:
    """Move every regular file of `paths` over the limit out of the work tree; returns what was held."""
    limit, skip = ws.config.cycle.max_file_bytes, set(exempt)
    held: list[Held] = []
    for rel in paths:
        full = ws.root / rel
        try:
            found = os.lstat(full)
        except OSError:
            continue
        if rel in skip or not stat.S_ISREG(found.st_mode) or found.st_size <= limit:
            continue
        target = state_directory(gitio.state_dir(ws.repo)) / HELD_DIR / f"cycle-{cycle}" / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.move(str(full), str(target))
        gitio.restore_paths(ws.repo, [rel])        # HEAD's version back, if it has one
        held.append(Held(rel, found.st_size, str(target)))
    return held
