"""Reading a file the agent may have written, at a bounded cost: `regular_stat` and `read_bounded`.

The configs in the work tree (a nested clone's, what they include) and a `.git` pointer are the agent's to write
between two boxes, so such a path may lead to anything: a FIFO (a read that waits for a writer), a link to
`/proc/kmsg` (a regular file whose read blocks for good), or a 78 MB config (`git config --list` took 208 s
and 5.2 GB to list one). So only a regular file is read, never one under the kernel's folders (KERNEL_FOLDERS),
opened non-blocking and checked with fstat after the open, and no more of it than a bound; MAX_CONFIG_BYTES is the
one bound of every config file the box strips or reads for its includes.
"""
from __future__ import annotations

import os
import stat
from pathlib import Path

MAX_CONFIG_BYTES = 1 << 20      # of any config file the box strips, or reads for the files it includes
# Where the kernel keeps files whose read may block or never end (/proc/kmsg, a tty, /dev/zero): never read.
KERNEL_FOLDERS = (Path("/proc"), Path("/sys"), Path("/dev"))
_READ = os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC


def regular_stat(path: Path) -> os.stat_result | None:
    """`path`'s lstat when it is a regular file (a link is not one), outside KERNEL_FOLDERS; else None."""
    if in_kernel_folder(path):
        return None
    try:
        found = os.lstat(path)
    except OSError:
        return None
    return found if stat.S_ISREG(found.st_mode) else None


def in_kernel_folder(path: Path) -> bool:
    real = Path(os.path.realpath(path))
    return any(real.is_relative_to(folder) for folder in KERNEL_FOLDERS)


def read_bounded(path: Path, limit: int, *, follow_links: bool = True) -> bytes | None:
    """The first `limit` bytes of `path`, when it is a non-empty regular file outside KERNEL_FOLDERS (reached
    through no link at its last step, unless `follow_links`); None otherwise, or when it cannot be read."""
    if in_kernel_folder(path):
        return None
    try:
        fd = os.open(path, _READ | (0 if follow_links else os.O_NOFOLLOW))
    except OSError:
        return None
    try:
        found = os.fstat(fd)        # what was opened, not what the name said a moment before
        if not stat.S_ISREG(found.st_mode) or found.st_size == 0:
            return None
        chunks: list[bytes] = []
        left = limit
        while left > 0:
            chunk = os.read(fd, min(left, 1 << 16))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
        return b"".join(chunks)
    except OSError:
        return None
    finally:
        os.close(fd)
