"""Starting an agent: `init` from the template, and the offline `demo`."""
from __future__ import annotations

import errno
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from gitmem.confined.files import NAME_TOO_LONG

if TYPE_CHECKING:
    from gitmem.errors import GitmemError


@contextmanager
def directory_named(target: Path, error: type[GitmemError]) -> Iterator[None]:
    """Around everything done with `target`, a directory the user named (`init DIR`, `demo DIR`): a refusal
    from the system (permissions, a file in the way, a name too long, a loop of links) becomes `error`, one line
    that says what to do. Even looking at such a name raises (Path.exists() does for ENAMETOOLONG). Errors
    without an errno are bugs, not the user's: they are raised as they are."""
    try:
        yield
    except OSError as err:
        if err.errno is None:
            raise
        why = NAME_TOO_LONG if err.errno == errno.ENAMETOOLONG else err.strerror
        raise error(f"cannot create {target}: {why}; give a directory you can write to") from None


def make_directory(target: Path, error: type[GitmemError]) -> None:
    """`mkdir -p target`, its refusals as `error` (`directory_named`)."""
    with directory_named(target, error):
        target.mkdir(parents=True, exist_ok=True)
