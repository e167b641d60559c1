"""Files of git state, captured when a cycle starts and put back when the agent is done.

What git runs (hooks, `core.hooksPath`, config, filters named in attributes) and what it sees (ignore files,
grafts, alternates, shallow, gitmem's own state) lives in files an agent with a shell can edit. The runner
captures them before the agent starts (`gitmem.gitio.state_paths`) and, after it, puts every one back as it
was: changed files restored, deleted ones recreated, new ones removed. Nothing here follows a symlink, at any
component of a path: a link the agent planted is removed as a link, never written through. Every folder on the
way to a captured place that was a real folder when the cycle started must be one still: inside the git
directory, a link (or file) the agent put in its place is taken away and the folder made again, with the captured
state in it; outside it, the place is left alone and reported. The agent's versions of what it changed are kept
aside (the caller says where) for the human to inspect. No git here: plain files.
"""
from __future__ import annotations

import hashlib
import os
import shutil
import stat
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from gitmem.confined.walk import remove_tree, walk_tree
from gitmem.gitio import StatePath

IN_MEMORY = 1 << 20          # files up to this size are held in memory; bigger ones are copied to a temp dir
ASIDE_MAX = 1 << 20          # the agent's version of a changed file is kept aside up to this size


@dataclass(frozen=True)
class StateEntry:
    kind: str                 # file | link | dir | other (a FIFO, a device: recorded, never read)
    mode: int = 0
    size: int = 0
    digest: str = ""
    data: bytes | None = None     # a small file's bytes
    spill: Path | None = None     # a big file's copy
    target: str = ""              # a link's target


@dataclass(frozen=True)
class StateChange:
    label: str                # `.git/hooks/pre-commit`, `~/.gitconfig`
    what: str                 # added | changed | deleted
    inside: bool              # inside the git directory
    aside: bytes | None = None    # the agent's version, when small enough to keep
    found: str = ""               # what the agent left there: file | link | dir | other ("" when it was deleted)


@dataclass(frozen=True)
class Folder:
    mode: int
    identity: tuple[int, int]     # device and inode: the same folder wherever the agent moved it

    @classmethod
    def at(cls, path: Path) -> Folder | None:
        """The real folder at `path` (not a link to one), or None."""
        try:
            info = os.lstat(path)
        except OSError:
            return None
        return cls(stat.S_IMODE(info.st_mode), (info.st_dev, info.st_ino)) if stat.S_ISDIR(info.st_mode) else None


@dataclass
class FileState:
    places: list[StatePath]
    entries: dict[Path, StateEntry | None] = field(default_factory=dict)     # root path -> None when absent
    tree: dict[Path, StateEntry] = field(default_factory=dict)              # every path under each root
    folders: dict[Path, Folder] = field(default_factory=dict)     # each real folder on the way to a root
    spill_dir: Path | None = None

    @classmethod
    def capture(cls, places: list[StatePath]) -> FileState:
        state = cls(places)
        for place in places:
            state._capture(place.path)
            for folder in place.path.parents:
                if folder not in state.folders and (seen := Folder.at(folder)) is not None:
                    state.folders[folder] = seen
        return state

    def _capture(self, root: Path) -> None:
        entry = self._entry(root)
        self.entries[root] = entry
        if entry is None:
            return
        self.tree[root] = entry
        if entry.kind == "dir":
            for path in _walk(root):
                found = self._entry(path)
                if found is not None:
                    self.tree[path] = found

    def _entry(self, path: Path) -> StateEntry | None:
        """What is at `path`, with a regular file's content kept (in memory, or copied aside when big)."""
        seen = _peek(path)
        if seen is None or seen.kind != "file":
            return seen
        mode, size = seen.mode, seen.size
        try:
            if size <= IN_MEMORY:
                data = _read(path)
                return StateEntry("file", mode, len(data), hashlib.sha256(data).hexdigest(), data=data)
            if self.spill_dir is None:
                self.spill_dir = Path(tempfile.mkdtemp(prefix="gitmem-guard-"))
            copy = self.spill_dir / f"{len(self.tree)}-{path.name}"
            digest = _copy_hashing(path, copy)
        except OSError:           # unreadable (another user's file): the agent cannot change it either
            return StateEntry("other", mode=stat.S_IFREG | mode)
        return StateEntry("file", mode, size, digest, spill=copy)

    # -- after the agent ----------------------------------------------------------------------------------
    def restore(self, *, skip_aside: tuple[str, ...] = ()) -> list[StateChange]:
        """Put every captured place back; return what differed (and the agent's version, where kept)."""
        changes: list[StateChange] = []
        for place in self.places:
            changes += self._restore(place, skip_aside)
        self.discard()
        return changes

    def _restore(self, place: StatePath, skip_aside: tuple[str, ...]) -> list[StateChange]:
        changes, blocked = self._plain_way(place)
        if blocked:
            return changes
        return changes + self._restore_root(place, skip_aside)

    def _plain_way(self, place: StatePath) -> tuple[list[StateChange], bool]:
        """Every folder on the way to `place` that was a real folder at the capture is one again (outermost
        first), so nothing after this follows a link: below the git directory, whatever the agent put there
        instead is removed (as a link, never followed) and the folder made again; elsewhere the place is not
        touched (the folders are the user's) and reported. Blocked when the place must be left alone."""
        changes: list[StateChange] = []
        for folder in reversed(place.path.parents):
            was = self.folders.get(folder)
            if was is None:
                continue
            found = _peek(folder)
            if found is None or found.kind == "dir":      # a folder deleted is made again as the place is put back
                continue
            label = _label(place, folder)
            if place.base is None or not folder.is_relative_to(place.base) or folder == place.base:
                changes.append(StateChange(place.label, f"changed, not put back: the folder {label} is now a "
                                           f"{found.kind}", place.inside, found=found.kind))
                return changes, True
            aside = _aside(folder, found)
            try:
                _remove(folder, found)
                _make_again(folder, was, found)
            except OSError as err:
                changes.append(StateChange(label, f"changed, could not be put back: {err.strerror or err}",
                                           place.inside, aside, found.kind))
                return changes, True
            changes.append(StateChange(label, "changed", place.inside, aside, found.kind))
        return changes, False

    def _restore_root(self, place: StatePath, skip_aside: tuple[str, ...]) -> list[StateChange]:
        root = place.path
        before = {path: entry for path, entry in self.tree.items() if path == root or path.is_relative_to(root)}
        now: dict[Path, StateEntry] = {}
        if (top := _peek(root)) is not None:
            now[root] = top
            if top.kind == "dir":
                now.update((path, found) for path in _walk(root) if (found := _peek(path)) is not None)
        changes: list[StateChange] = []
        gone: list[Path] = []          # directories removed whole: what was under them went along
        for path in sorted(set(before) | set(now), key=lambda p: (len(p.parts), str(p))):
            old, new = before.get(path), now.get(path)
            under = any(path.is_relative_to(top) for top in gone)
            if under:
                if old is not None:
                    _put(path, old)
                continue
            if old is not None and new is not None and _same(old, new, path):
                continue
            if old is not None and new is not None and old.kind == new.kind == "dir":
                os.chmod(path, old.mode)
                continue
            label = _label(place, path)
            keep = new is not None and not any(path.name.startswith(s) for s in skip_aside)
            aside = _aside(path, new) if keep and new is not None else None
            what = "added" if old is None else "deleted" if new is None else "changed"
            try:
                if new is not None:
                    _remove(path, new)
                    if new.kind == "dir":
                        gone.append(path)
                if old is not None and old.kind != "other":
                    _put(path, old)
            except OSError as err:
                what += f", could not be put back: {err.strerror or err}"
            changes.append(StateChange(label, what, place.inside, aside, new.kind if new is not None else ""))
        return changes

    def discard(self) -> None:
        if self.spill_dir is not None:
            shutil.rmtree(self.spill_dir, ignore_errors=True)
            self.spill_dir = None


def _make_again(folder: Path, was: Folder, found: StateEntry) -> None:
    """The folder again where the agent's link was. When the link led to this very folder (the agent moved it:
    the same device and inode), it is moved back whole, with what no capture holds (a submodule's objects and
    references); anything else the link led to is left where it is, and the folder is made anew."""
    if found.kind == "link":
        real = Path(os.path.realpath(os.path.join(folder.parent, found.target)))
        moved = Folder.at(real)
        if moved is not None and moved.identity == was.identity:
            try:
                os.rename(real, folder)
                os.chmod(folder, was.mode)
                return
            except OSError:
                pass            # another file system, or gone meanwhile: made anew
    os.mkdir(folder, was.mode)
    os.chmod(folder, was.mode)


def _label(place: StatePath, path: Path) -> str:
    """How a report names `path`, a place itself, a path under it, or a folder on the way to it."""
    if path.is_relative_to(place.path):
        return place.label + path.as_posix()[len(place.path.as_posix()):]
    up = len(place.path.parts) - len(path.parts)
    return "/".join(place.label.split("/")[:-up]) or path.as_posix()


def _walk(root: Path) -> list[Path]:
    return [Path(folder) / name for folder, dirs, names in walk_tree(root) for name in [*dirs, *names]]


def _peek(path: Path) -> StateEntry | None:
    """What is at `path` now, without copying it: size and a digest only for regular files."""
    try:
        info = os.lstat(path)
    except OSError:
        return None
    if stat.S_ISLNK(info.st_mode):
        return StateEntry("link", target=os.readlink(path))
    if stat.S_ISDIR(info.st_mode):
        return StateEntry("dir", mode=stat.S_IMODE(info.st_mode))
    if not stat.S_ISREG(info.st_mode):
        return StateEntry("other", mode=info.st_mode)
    return StateEntry("file", stat.S_IMODE(info.st_mode), info.st_size)


def _same(old: StateEntry, new: StateEntry, path: Path) -> bool:
    if old.kind != new.kind:
        return False
    if old.kind == "link":
        return old.target == new.target
    if old.kind == "other":
        return old.mode == new.mode
    if old.kind == "dir":
        return old.mode == new.mode
    if old.size != new.size or old.mode != new.mode:
        return False
    try:
        return _digest(path) == old.digest
    except OSError:
        return False


def _aside(path: Path, entry: StateEntry) -> bytes | None:
    if entry.kind == "link":
        return f"symlink to {entry.target}\n".encode()
    if entry.kind != "file" or entry.size > ASIDE_MAX:
        return None
    try:
        return _read(path)
    except OSError:
        return None


def remove_path(path: Path) -> None:
    """Remove whatever is at `path` (a link as a link, a directory with what it holds); gone already is fine."""
    found = _peek(path)
    if found is not None:
        _remove(path, found)


def _remove(path: Path, entry: StateEntry) -> None:
    try:
        if entry.kind == "dir":
            _open_to_owner(path)
            remove_tree(path)
        else:
            os.unlink(path)
    except FileNotFoundError:
        pass


def _open_to_owner(top: Path) -> None:
    """Every folder under `top` (the agent's, about to be removed) open to its owner: in one the agent made
    read-only, a `conftest.py` it planted in `.git/gitmem` (writable in the box) could not be removed, and ran at the
    human's next pytest where a project's settings send it into `.git/`. (No mode stops root.)"""
    pending = [os.fspath(top)]
    while pending:
        folder = pending.pop()
        try:
            mode = stat.S_IMODE(os.lstat(folder).st_mode)
            if mode & stat.S_IRWXU != stat.S_IRWXU:
                os.chmod(folder, mode | stat.S_IRWXU)
            with os.scandir(folder) as entries:
                pending.extend(entry.path for entry in entries if entry.is_dir(follow_symlinks=False))
        except OSError:
            continue


def _put(path: Path, entry: StateEntry) -> None:
    _real_parents(path)
    if entry.kind == "dir":
        os.makedirs(path, exist_ok=True)
        os.chmod(path, entry.mode)
    elif entry.kind == "link":
        os.symlink(entry.target, path)
    elif entry.kind == "file":
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
        with os.fdopen(fd, "wb") as sink:
            if entry.data is not None:
                sink.write(entry.data)
            elif entry.spill is not None:
                with entry.spill.open("rb") as source:
                    shutil.copyfileobj(source, sink)
        os.chmod(tmp, entry.mode)
        os.replace(tmp, path)


def _real_parents(path: Path) -> None:
    """Make the parent a real directory: a link or file the agent put where a directory was goes first."""
    parent = path.parent
    try:
        info = os.lstat(parent)
    except FileNotFoundError:
        _real_parents(parent)
        os.mkdir(parent)
        return
    if not stat.S_ISDIR(info.st_mode):
        os.unlink(parent)
        os.mkdir(parent)


def _read(path: Path) -> bytes:
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    with os.fdopen(fd, "rb") as handle:
        return handle.read()


def _digest(path: Path) -> str:
    digest = hashlib.sha256()
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    with os.fdopen(fd, "rb") as handle:
        while chunk := handle.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def _copy_hashing(source: Path, copy: Path) -> str:
    digest = hashlib.sha256()
    fd = os.open(source, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    with os.fdopen(fd, "rb") as handle, copy.open("wb") as sink:
        while chunk := handle.read(1 << 20):
            digest.update(chunk)
            sink.write(chunk)
    return digest.hexdigest()
