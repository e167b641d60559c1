"""`.git/gitmem/`: gitmem's own directory (the cycle lock, the recall index, caches, held files).

Everything in it is disposable, so the fix for a file, a link or anything else in its place is to remove it.
"""
from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from gitmem.config.nesting import loads_json
from gitmem.confined.files import mode_allows, os_reason
from gitmem.errors import ExitCode, GitmemError

# The daily close's cache of lesson confirmations (gitmem.close.backing). Named here, with the directory that
# holds it, because the cycle's guard (below the close) puts it back silently after an agent's run.
CONFIRMATIONS_CACHE = "confirmations.json"


class StateDirError(GitmemError):
    """`.git/gitmem/` is not a directory gitmem can use; the message says how to repair it."""

    exit_code = ExitCode.USAGE


def state_directory(path: Path) -> Path:
    """`path` (`.git/gitmem/`) as a real directory, created when missing; a link is refused, never followed."""
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        reason = os_reason(err, mode_allows=mode_allows(path))
        if reason is not None and not os.path.lexists(path):      # nothing stands there: the place refused
            raise unusable(path, err) from None
    if path.is_symlink() or not path.is_dir():
        what = "a symbolic link" if path.is_symlink() else "not a directory"
        raise StateDirError(f"{path} is {what}; it holds only gitmem's lock and caches: remove it "
                            f"(`rm -r {path}`) and run the command again")
    return path


def unusable(path: Path, err: OSError) -> StateDirError:
    """A state-directory file the system will not let gitmem create or open: a read-only `.git` (a read-only
    sandbox), a full disk. The memory files are fine; removing anything would not help."""
    reason = os_reason(err, mode_allows=mode_allows(path))
    if reason is None:
        return StateDirError(f"{path} cannot be used ({err.strerror}); it holds only gitmem's lock and caches: "
                             f"remove it (`rm -r {path}`) and run the command again")
    return StateDirError(f"{path} cannot be written: {reason[0]}; gitmem takes its write lock there before it "
                         f"writes memory, so nothing was changed: {reason[1]}")


def read_cache(path: Path | None) -> dict[str, Any]:
    """A JSON cache in the state directory; {} when it is missing, unreadable or not an object."""
    if path is None:
        return {}
    try:
        data = loads_json(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def write_cache(path: Path, data: dict[str, Any]) -> None:
    """Replace a JSON cache whole (a reader never sees half of one); a read-only `.git` only costs the work
    the cache would have saved, next time."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps(data), encoding="utf-8")
        os.replace(tmp, path)
    except OSError:
        pass
