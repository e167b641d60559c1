"""Starting an agent: `init` from the template, and the offline `demo`."""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from gitmem.errors import GitmemError


def make_directory(target: Path, error: type[GitmemError]) -> None:
    """`mkdir -p target`; a refusal from the system (permissions, a file in the way) becomes `error`, which
    says what to do. Errors without an errno are bugs, not the user's: they are raised as they are."""
    try:
        target.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        if err.errno is None:
            raise
        raise error(f"cannot create {target}: {err.strerror}; give a directory you can write to") from None
