"""GM925: a clone whose `.gitattributes` has the memory files merged by gitmem's merge driver (gitmem.publish.driver),
and whose git config has no such driver. git copies `.gitattributes` with a clone and never its config, so until
`gitmem init` runs in the clone, a `git pull --rebase` or `git merge` falls back to git's line merge and the memory
files conflict line by line. One small file read and one config lookup a run (`gitmem check`, `gitmem status`),
never a walk over memory."""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from gitmem import codes, gitio
from gitmem.checks.violation import Violation
from gitmem.confined import files

if TYPE_CHECKING:
    from gitmem.workspace import Workspace

NAME = "gitmem"     # `merge=gitmem` in .gitattributes, `merge.gitmem.driver` in .git/config
ATTRIBUTES = ".gitattributes"


def clone_setup(ws: Workspace) -> list[Violation]:
    """What this clone lacks that its repository uses (GM925), said once a run; nothing outside git."""
    try:
        missing = driver_missing(ws.repo, gitio.root(ws.repo)) if ws.state_dir is not None else None
    except gitio.RepoError:
        return []
    return [missing] if missing is not None else []


def driver_missing(repo: gitio.Repo, root: Path) -> Violation | None:
    """GM925 at the first `.gitattributes` line naming the driver, when this clone's git config has none."""
    try:
        data = files.read_bytes(root, ATTRIBUTES)
    except (OSError, files.FileRefused):
        return None
    wanted = f"merge={NAME}".encode()
    if data is None or wanted not in data:
        return None
    found = next(((number, line) for number, line in enumerate(data.splitlines(), 1)
                  if not line.lstrip().startswith(b"#") and wanted in line.split()), None)
    if found is None or gitio.config_value(repo, f"merge.{NAME}.driver") is not None:
        return None
    number, line = found
    return Violation.of(codes.MERGE_DRIVER_MISSING, ATTRIBUTES, number,
                        attribute=line.decode("utf-8", "replace").strip(), name=NAME)
