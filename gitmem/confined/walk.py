"""Walking a folder tree as `os.walk` does (top down, links not followed, `dirs` pruned in place), without its
recursion: a tree an agent nests a thousand folders deep would end `os.walk`, `Path.rglob` and any recursive
walker with a RecursionError, and the cycle with a traceback."""
from __future__ import annotations

import os
from collections import deque
from collections.abc import Iterator


def walk_tree(top: str | os.PathLike[str], *,
              breadth_first: bool = False) -> Iterator[tuple[str, list[str], list[str]]]:
    """(folder, dirs, names) for `top` and every folder under it, as `os.walk(top)` yields them; the caller may
    remove entries from `dirs` to skip them. A folder that cannot be listed is skipped. One queue, no recursion.
    `breadth_first`: every folder of one depth before any deeper one, for a walk that may stop early and should
    have seen what lies near the top by then (one vast folder is not walked to its end first)."""
    pending = deque([os.fspath(top)])
    while pending:
        folder = pending.popleft() if breadth_first else pending.pop()
        dirs: list[str] = []
        names: list[str] = []
        try:
            with os.scandir(folder) as entries:
                for entry in entries:
                    try:
                        is_dir = entry.is_dir(follow_symlinks=False)
                    except OSError:
                        is_dir = False
                    (dirs if is_dir else names).append(entry.name)
        except OSError:
            continue
        yield folder, dirs, names
        pending.extend(os.path.join(folder, name) for name in (dirs if breadth_first else reversed(dirs)))


def remove_tree(top: str | os.PathLike[str]) -> None:
    """`shutil.rmtree(top)` without its recursion: every entry under `top`, deepest first, links removed as links
    (never followed), then `top`. Raises OSError as rmtree does when something cannot be removed."""
    folders: list[str] = []
    for folder, _, names in walk_tree(top):
        folders.append(folder)
        for name in names:
            os.unlink(os.path.join(folder, name))
    for folder in reversed(folders):
        os.rmdir(folder)
