"""THE way gitmem opens the files it trusts: memory files, ROADMAP, `cycle.always_load` files and gitmem.yaml;
the agent's file tools (gitmem.agents.tools) open the work tree through it too, and walk folders with `walk`.

Such a file is a regular file inside the work tree, and nothing else is opened: a symbolic link (even one
that points back inside the tree), a directory, a submodule, a FIFO, a socket or a device, a path through a
linked directory or through a file, and anything in `.git` or outside the tree are refused with
`FileRefused` (exit 2), whose one line names the file and the fix. Missing is not refused: it is None.

`_open` is the one function that opens them. It walks the path one component at a time from the root of the
work tree with O_NOFOLLOW, so no link is followed on the way in, for reading or for writing. It looks at the
entry before opening it (a device or a FIFO is never opened), opens it non-blocking (a FIFO swapped in meanwhile
cannot hang a command), and checks with fstat what it opened, not what a name said a moment before. Writes are
atomic (a temporary file in the same directory, renamed over the target): a rename replaces a directory entry, it
never writes through a link. An append (LOG) refuses a file with other hard links, which it would change too.
"""
from __future__ import annotations

import errno
import os
import shutil
import stat
import time
from collections.abc import Callable, Iterator
from pathlib import Path, PurePosixPath
from typing import BinaryIO

from gitmem.errors import ExitCode, GitmemError

REGULAR, EXECUTABLE, LINK, TREE, GITLINK = 0o100644, 0o100755, 0o120000, 0o040000, 0o160000
BLOB_MODES = (REGULAR, EXECUTABLE)      # the only git modes a memory file may have
SPECIAL = 0o010000                       # not a git mode: a FIFO, socket or device in the work tree

_READ = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


class FileRefused(GitmemError):
    """A trusted file is not a regular file inside the work tree; nothing was read or written."""

    exit_code = ExitCode.USAGE

    def __init__(self, rel: str, what: str, fix: str | None = None) -> None:
        self.path, self.what = rel, what
        if fix is None:
            fix = ("gitmem reads and writes it only as a regular file inside the work tree: move it away and put "
                   f"a regular file there (`git checkout HEAD -- {rel}` restores the committed one)")
        super().__init__(f"{rel} {what}; {fix}")


# What the system says of a name it cannot hold (ENAMETOOLONG), for every path a user or a config names.
NAME_TOO_LONG = "its name is too long for the file system (at most 255 bytes a name, 4096 a path)"


# A write the system refuses whatever the file's own permissions say: a read-only mount, or a sandbox (an agent
# CLI's read-only mode, bubblewrap's --ro-bind, Landlock, AppArmor). Not a full disk, not a broken file system.
READ_ONLY_FIX = ("gitmem writes memory only where the repository is writable: run the command outside the "
                 "read-only sandbox or mount, or let it write the work tree (Codex: `-s workspace-write`)")


def os_reason(err: OSError, *, mode_allows: bool = False) -> tuple[str, str] | None:
    """(what happened, the fix) for an OS error that says something about the place rather than the file: a
    read-only file system, a refusal the permission bits do not explain (`mode_allows`), a full disk. None for
    the rest, which the caller words."""
    if err.errno == errno.EROFS:
        return "the file system is read-only here (a read-only sandbox or mount)", READ_ONLY_FIX
    if err.errno in (errno.EACCES, errno.EPERM) and mode_allows:
        return ("permission denied although its permissions let you write it, so a sandbox or security policy "
                "refuses writes here", READ_ONLY_FIX)
    if err.errno in (errno.ENOSPC, errno.EDQUOT):
        return "no space is left on the device (or the disk quota is reached)", "free some space, then run " \
            "the command again"
    return None


def failed(rel: str, err: OSError, doing: str, root: Path | None = None) -> FileRefused | None:
    """The refusal for an OS error while `doing` (reading, writing) `rel` in the work tree at `root`; None for an
    OSError without an errno, which gitmem's own code raised: that is a bug, and keeps its traceback."""
    if err.errno is None:
        return None
    if err.errno == errno.ENAMETOOLONG:
        return FileRefused(rel, f"cannot be {doing}: {NAME_TOO_LONG}", "give a shorter name")
    reason = os_reason(err, mode_allows=root is not None and mode_allows(root / rel))
    if reason is not None:
        return FileRefused(rel, f"cannot be {doing}: {reason[0]}; nothing was changed", reason[1])
    if err.errno in (errno.EACCES, errno.EPERM):
        return FileRefused(rel, f"cannot be {doing} (permission denied)",
                           f"give yourself read and write access: chmod u+rw {rel}")
    return FileRefused(rel, f"could not be {doing} ({err.strerror}); nothing was changed",
                       "repair the file system (or the disk), then run the command again")


def mode_allows(path: Path) -> bool:
    """Whether the permission bits let this user write `path` (or create it) and its folder: then a refusal comes
    from elsewhere. Only words a message; access(2) follows links, which does not matter for that."""
    try:
        there = os.access(path, os.F_OK, follow_symlinks=False)
        return os.access(path.parent, os.W_OK) and (not there or os.access(path, os.W_OK))
    except (OSError, ValueError):
        return False


def describe_mode(mode: int) -> str:
    """What a git (or work-tree) mode is, as `FileRefused` says it: `is a symbolic link`."""
    return {LINK: "is a symbolic link", TREE: "is a directory", GITLINK: "is a submodule"}.get(
        mode, "is not a regular file (a FIFO, socket or device)")


def _parts(rel: str) -> list[str]:
    """The components of a repo-relative path, refusing what cannot be a path inside the work tree."""
    path = PurePosixPath(rel)
    parts = [part for part in path.parts if part != "."]
    if not rel or path.is_absolute() or not parts or ".." in parts or "\\" in rel or "\0" in rel:
        raise FileRefused(rel or "''", "is not a path inside the work tree",
                          "name a file relative to the repository root, without `..`")
    if any(_is_git(part) for part in parts):
        raise FileRefused(rel, "is inside a .git directory", "memory lives in the work tree, never in .git")
    return parts


def _is_git(name: str) -> bool:
    return name.casefold().rstrip(". ") == ".git"     # `.GIT`, `.git.`: the same on some disks


def _what(dir_fd: int, name: str) -> str | None:
    """Why the entry `name` is not a regular file; None when it is one or is missing."""
    try:
        found = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except OSError:
        return None
    return _kind(found, dir_fd, name)


def _kind(found: os.stat_result, dir_fd: int, name: str) -> str | None:
    if stat.S_ISREG(found.st_mode):
        return None
    if stat.S_ISDIR(found.st_mode):
        return describe_mode(GITLINK if _holds_git(dir_fd, name) else TREE)
    return describe_mode(LINK if stat.S_ISLNK(found.st_mode) else SPECIAL)


def _holds_git(dir_fd: int, name: str) -> bool:
    """Whether the directory `name` holds a `.git` entry: a submodule (or a nested repository)."""
    try:
        inner = os.open(name, _DIR, dir_fd=dir_fd)
    except OSError:
        return False
    try:
        os.stat(".git", dir_fd=inner, follow_symlinks=False)
        return True
    except OSError:
        return False
    finally:
        os.close(inner)


def _walk(root: Path, parts: list[str], rel: str, *, make: bool, repair: bool = False) -> int:
    """An fd of the directory holding `parts[-1]`, reached without following any link; `make` creates
    missing directories, `repair` also replaces a link or a file on the way with a directory (putting a tree
    back as git has it). Raises FileNotFoundError when one is missing and `make` is false."""
    dir_fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        for depth, part in enumerate(parts[:-1]):
            try:
                inner = os.open(part, _DIR, dir_fd=dir_fd)
            except FileNotFoundError:
                if not make:
                    raise
                os.mkdir(part, 0o777, dir_fd=dir_fd)
                inner = os.open(part, _DIR, dir_fd=dir_fd)
            except OSError as err:
                if err.errno not in (errno.ENOTDIR, errno.ELOOP):
                    raise
                if repair:          # the entry itself goes, never what a link points to
                    os.unlink(part, dir_fd=dir_fd)
                    os.mkdir(part, 0o777, dir_fd=dir_fd)
                    inner = os.open(part, _DIR, dir_fd=dir_fd)
                    os.close(dir_fd)
                    dir_fd = inner
                    continue
                where = "/".join(parts[:depth + 1])
                what = _what(dir_fd, part) or "is not a directory"
                raise FileRefused(rel, f"is inside {where}, which {what}",
                                  f"make {where} a plain directory of the work tree") from None
            os.close(dir_fd)
            dir_fd = inner
        return dir_fd
    except BaseException:
        os.close(dir_fd)
        raise


def _open(root: Path, rel: str, flags: int, *, make_parents: bool = False) -> int:
    """THE open of a trusted file: an fd of the regular file `rel` inside the work tree at `root`.

    `flags` add to O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC. Raises FileNotFoundError when it is missing,
    FileRefused when it is anything but a regular file inside the tree, OSError for the rest (a full disk).
    """
    parts = _parts(rel)
    dir_fd = _walk(root, parts, rel, make=make_parents)
    try:
        what = _what(dir_fd, parts[-1])      # a device or FIFO is refused before it is ever opened
        if what is not None:
            raise FileRefused(rel, what)
        try:
            fd = os.open(parts[-1], flags | _READ, 0o644, dir_fd=dir_fd)
        except OSError as err:
            if err.errno in (errno.ELOOP, errno.EISDIR, errno.ENXIO, errno.ENOTDIR, errno.EOPNOTSUPP):
                raise FileRefused(rel, _what(dir_fd, parts[-1]) or "is not a regular file") from None
            refused = None if isinstance(err, FileNotFoundError) else failed(rel, err, "opened", root)
            if refused is not None:         # the OS said no: not a bug
                raise refused from None
            raise
        found = os.fstat(fd)
        what = _kind(found, dir_fd, parts[-1])
        if what is not None:
            os.close(fd)
            raise FileRefused(rel, what)
        os.set_blocking(fd, True)
        return fd
    finally:
        os.close(dir_fd)


# -- reading -----------------------------------------------------------------------------------------------

def open_read(root: Path, rel: str) -> BinaryIO | None:
    """The file open for reading in binary mode; None when it is missing."""
    try:
        return os.fdopen(_open(root, rel, os.O_RDONLY), "rb")
    except FileNotFoundError:
        return None


def read_bytes(root: Path, rel: str) -> bytes | None:
    """The file's bytes; None when it is missing. A large file that has settled is read once per process
    (`_SettledReads`): the same bytes object answers again while the file is unchanged."""
    found = read_with_stat(root, rel)
    return found[0] if found is not None else None


# -- what a process may remember of a file -----------------------------------------------------------------

# A file last changed this long before a process looked at it is taken as unchanged while its identity is: any
# write after that moves its ctime to the clock's now, which no writer can set back (utime sets mtime, and moves
# ctime to now). A file changed more recently is "racily clean", as git says: a second write in the same clock
# tick, of the same size, would leave its identity as it was. Coarser than any file system gitmem runs on.
SETTLED_NS = 2_000_000_000


def file_identity(found: os.stat_result) -> tuple[int, ...]:
    """The stat fields any change to a file's bytes moves: device, inode, size, mtime and ctime."""
    return (found.st_dev, found.st_ino, found.st_size, found.st_mtime_ns, found.st_ctime_ns)


def has_settled(found: os.stat_result, now_ns: int) -> bool:
    """Whether what a process learned of the file as `found` describes it may be kept for as long as
    `file_identity` stays the same (see SETTLED_NS); a change time in the future never settles."""
    return found.st_ctime_ns + SETTLED_NS <= now_ns


class _SettledReads:
    """The bytes of the large files this process read, by the identity that described them: a cycle's steps and
    a close's each read the 75 MB LOG and the 10 MB NOW again, and the parses shared by identity
    (`gitmem.memory.once`) answer at once for the same bytes object. Only a file that had settled when its read
    began is kept (`has_settled`), so a file written just before is read again every time."""

    FROM = 1 << 20              # smaller files cost less to read than to keep
    KEPT = 8                    # files: the memory files of two workspaces

    def __init__(self) -> None:
        # (root, path) -> (the bytes, the stat that describes them); the newest last. One version a path, so a
        # file rewritten meanwhile does not keep its old bytes alive.
        self._kept: dict[tuple[str, str], tuple[bytes, os.stat_result]] = {}

    def get(self, place: tuple[str, str], opened: os.stat_result) -> tuple[bytes, os.stat_result] | None:
        known = self._kept.get(place)
        return known if known is not None and file_identity(known[1]) == file_identity(opened) else None

    def keep(self, place: tuple[str, str], found: os.stat_result, data: bytes, began_ns: int) -> None:
        self._kept.pop(place, None)
        if not has_settled(found, began_ns):
            return
        self._kept[place] = (data, found)
        while len(self._kept) > self.KEPT:
            del self._kept[next(iter(self._kept))]


_settled = _SettledReads()


def kept_bytes(root: Path, rel: str, found: os.stat_result) -> bytes | None:
    """The bytes of the file that this process read and kept (`_SettledReads`), when `found`, the file's stat
    now, still describes them; else None."""
    known = _settled.get((os.fspath(root), rel), found)
    return known[0] if known is not None else None


def read_with_stat(root: Path, rel: str) -> tuple[bytes, os.stat_result | None] | None:
    """The file's bytes and the stat that describes them (`stat_of_read`); None when it is missing. A large file
    that has settled is read once per process (`_SettledReads`)."""
    handle = open_read(root, rel)
    if handle is None:
        return None
    with handle:
        opened = os.fstat(handle.fileno())
        if opened.st_size < _SettledReads.FROM:
            return stat_of_read(handle)
        place = (os.fspath(root), rel)
        known = _settled.get(place, opened)
        if known is not None:
            return known
        began = time.time_ns()
        data, described = stat_of_read(handle)
        if described is not None:
            _settled.keep(place, described, data, began)
        return data, described


def stat_of_read(handle: BinaryIO) -> tuple[bytes, os.stat_result | None]:
    """Everything left in `handle`, read from its start, and the file's stat when it describes those bytes:
    taken before and after the read, and given only when the two agree and the size is what was read (a file
    written meanwhile gets None). Git's index keeps this stat with the file's blob id: a file whose stat still
    matches is known to hold that blob, and no status reads it again."""
    before = os.fstat(handle.fileno())
    data = handle.read()
    after = os.fstat(handle.fileno())
    same = (before.st_mtime_ns, before.st_ctime_ns, before.st_size) == (after.st_mtime_ns, after.st_ctime_ns,
                                                                         after.st_size)
    return data, after if same and after.st_size == len(data) else None


def read_text(root: Path, rel: str) -> str:
    """The file decoded as memory is (`gitmem.memory.decoding.decode_file_text`: never split into lines, which a 75 MB
    LOG read whole would be 1.3 million of); "" when it is missing."""
    from gitmem.memory.decoding import decode_file_text

    data = read_bytes(root, rel)
    return decode_file_text(data) if data is not None else ""


def file_size(root: Path, rel: str) -> int | None:
    """The file's size in bytes; None when it is missing."""
    handle = open_read(root, rel)
    if handle is None:
        return None
    with handle:
        return os.fstat(handle.fileno()).st_size


def mode(root: Path, rel: str) -> int | None:
    """The git mode the work tree gives `rel` (REGULAR, EXECUTABLE, LINK, TREE, GITLINK, or SPECIAL); None when
    it is missing. A path through a link or a file has the mode of that link or file."""
    try:
        parts = _parts(rel)
    except FileRefused:
        return SPECIAL
    try:
        dir_fd = _walk(root, parts, rel, make=False)
    except FileNotFoundError:
        return None
    except FileRefused as err:
        return LINK if "symbolic link" in err.what else SPECIAL
    try:
        found = os.stat(parts[-1], dir_fd=dir_fd, follow_symlinks=False)
    except (FileNotFoundError, NotADirectoryError):
        return None
    finally:
        os.close(dir_fd)
    if stat.S_ISREG(found.st_mode):
        return EXECUTABLE if found.st_mode & 0o100 else REGULAR
    if stat.S_ISLNK(found.st_mode):
        return LINK
    if stat.S_ISDIR(found.st_mode):
        return GITLINK if os.path.lexists(root / rel / ".git") else TREE
    return SPECIAL


def why_refused(root: Path, rel: str) -> str | None:
    """Why `rel` cannot be read as a trusted file (`is a symbolic link`); None when it can or is missing."""
    try:
        handle = open_read(root, rel)
    except FileRefused as err:
        return err.what
    if handle is not None:
        handle.close()
    return None


def walk(root: Path, rel: str = ".", *, recursive: bool = True) -> Iterator[tuple[str, bool]]:
    """(repo-relative path, is a directory) of the regular files and plain directories under the directory `rel`
    ("." is the root), sorted within each directory, its directories first; `recursive` goes down into them.

    Nothing is followed: the walk goes down from an fd of each directory, reached as `_open` reaches a file, so a
    link (even one that stays inside the tree), a FIFO, a device or anything named .git is skipped, never read.
    FileRefused when `rel` is not a plain directory of the work tree; FileNotFoundError when it is missing.
    """
    if rel in ("", "."):
        top = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    else:
        parts = _parts(rel)
        dir_fd = _walk(root, parts, rel, make=False)
        try:
            top = os.open(parts[-1], _DIR | os.O_NONBLOCK, dir_fd=dir_fd)
        except OSError as err:
            if err.errno not in (errno.ENOTDIR, errno.ELOOP):
                raise
            raise FileRefused(rel, _what(dir_fd, parts[-1]) or "is not a directory",
                              "name a plain directory of the work tree") from None
        finally:
            os.close(dir_fd)

    def plain(fd: int, name: str, kind: Callable[[int], bool]) -> bool:
        try:
            return not _is_git(name) and kind(os.stat(name, dir_fd=fd, follow_symlinks=False).st_mode)
        except OSError:
            return False

    try:
        for here, dirs, names, fd in os.fwalk(".", dir_fd=top, follow_symlinks=False):
            base = PurePosixPath(rel, here)
            kept = sorted(name for name in dirs if plain(fd, name, stat.S_ISDIR))
            dirs[:] = kept if recursive else []
            yield from (((base / name).as_posix(), True) for name in kept)
            yield from (((base / name).as_posix(), False) for name in sorted(names) if plain(fd, name, stat.S_ISREG))
    finally:
        os.close(top)


# -- writing -----------------------------------------------------------------------------------------------

def write_bytes(root: Path, rel: str, data: bytes) -> None:
    """Replace the file's content atomically (created with its directories when missing); its mode is kept.

    A crash leaves the old file or the new one, never half of one.
    """
    parts = _parts(rel)
    dir_fd = _walk(root, parts, rel, make=True)
    name = parts[-1]
    try:
        try:
            old = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
        except FileNotFoundError:
            old = None
        if old is not None and not stat.S_ISREG(old.st_mode):
            raise FileRefused(rel, _kind(old, dir_fd, name) or "is not a regular file")
        try:
            _replace(dir_fd, name, data, old.st_mode & 0o777 if old is not None else 0o644)
        except OSError as err:          # a full disk, a read-only file system: the old file is untouched
            raise failed(rel, err, "written", root) or err from None
    finally:
        os.close(dir_fd)


def _replace(dir_fd: int, name: str, data: bytes, mode_bits: int) -> None:
    tmp = f".{name}.{os.getpid()}.{os.urandom(4).hex()}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600, dir_fd=dir_fd)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fchmod(handle.fileno(), mode_bits)
            os.fsync(handle.fileno())
        os.replace(tmp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
    except BaseException:
        try:
            os.unlink(tmp, dir_fd=dir_fd)
        except FileNotFoundError:
            pass
        raise


def open_append(root: Path, rel: str) -> BinaryIO:
    """The existing file open for appending (and for cutting back what an append added, with truncate)."""
    fd = _open(root, rel, os.O_RDWR | os.O_APPEND)
    links = os.fstat(fd).st_nlink
    if links > 1:
        os.close(fd)
        raise FileRefused(rel, f"has {links} hard links, and an append would change the other ones too",
                          f"give it a file of its own: cp {rel} {rel}.new && mv {rel}.new {rel}")
    return os.fdopen(fd, "r+b")


def remove_file(root: Path, rel: str) -> None:
    """Delete the file (never what a link points to); nothing when it is missing."""
    parts = _parts(rel)
    try:
        dir_fd = _walk(root, parts, rel, make=False)
    except FileNotFoundError:
        return
    try:
        what = _what(dir_fd, parts[-1])
        if what is not None and "symbolic link" not in what:
            raise FileRefused(rel, what)
        os.unlink(parts[-1], dir_fd=dir_fd)
    except FileNotFoundError:
        pass
    finally:
        os.close(dir_fd)


# -- any entry of the tree, as git puts it back ------------------------------------------------------------

def _tree_parts(rel: str) -> list[str]:
    """The components of a path of the work tree as git names it (any name but `..`, never absolute)."""
    parts = [part for part in PurePosixPath(rel).parts if part != "."]
    if not parts or PurePosixPath(rel).is_absolute() or ".." in parts or "\0" in rel:
        raise FileRefused(rel or "''", "is not a path inside the work tree",
                          "name a file relative to the repository root, without `..`")
    return parts


def remove_entry(root: Path, rel: str) -> None:
    """Remove whatever is at `rel` (a file, a link, a whole directory), reached one component at a time
    without following a link: when a link or a file stands where a folder was, nothing of the tree is there,
    and nothing is removed."""
    parts = _tree_parts(rel)
    try:
        dir_fd = _walk(root, parts, rel, make=False)
    except (FileNotFoundError, FileRefused):
        return
    try:
        found = os.stat(parts[-1], dir_fd=dir_fd, follow_symlinks=False)
        if stat.S_ISDIR(found.st_mode):
            shutil.rmtree(parts[-1], dir_fd=dir_fd)      # by fds, never through a link inside
        else:
            os.unlink(parts[-1], dir_fd=dir_fd)
    except FileNotFoundError:
        pass
    finally:
        os.close(dir_fd)


def put_entry(root: Path, rel: str, data: bytes, git_mode: int) -> None:
    """Make `rel` the file (REGULAR, EXECUTABLE) or link (LINK, `data` its target) git holds, whatever is there:
    every folder on the way becomes a real one (a link or a file there is replaced, never followed), a
    directory at `rel` goes, and the file replaces the old entry by a rename."""
    parts = _tree_parts(rel)
    dir_fd = _walk(root, parts, rel, make=True, repair=True)
    name = parts[-1]
    try:
        try:
            found = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
            if stat.S_ISDIR(found.st_mode):
                shutil.rmtree(name, dir_fd=dir_fd)
            elif git_mode == LINK:
                os.unlink(name, dir_fd=dir_fd)
        except FileNotFoundError:
            pass
        if git_mode == LINK:
            os.symlink(os.fsdecode(data), name, dir_fd=dir_fd)
        else:
            _replace(dir_fd, name, data, 0o755 if git_mode == EXECUTABLE else 0o644)
    finally:
        os.close(dir_fd)


def plain_way(root: Path, rel: str) -> bool:
    """Whether every folder on the way to `rel` is a plain directory of the tree, or missing (then nothing
    further down exists either): no link or file planted there, reached as `remove_entry` reaches it."""
    parts = _tree_parts(rel)
    try:
        os.close(_walk(root, parts, rel, make=False))
    except FileNotFoundError:
        return True
    except FileRefused:
        return False
    return True
