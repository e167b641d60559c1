"""Bytecode caches, and the files pytest collects by name: what a tool runs from anywhere in the work tree.

Python imports `__pycache__/mod.cpython-3X.pyc` instead of `mod.py` when the header's size and mtime match
the source (a hash-based pyc marked unchecked is never compared at all), and a sourceless `mod.pyc` with no
`mod.py` beside it is imported as it is. Both are git-ignored (the template's .gitignore): an agent that writes
one with the source's size and mtime runs its code at the human's next import, outside any box, with no diff.
Ruby's bootsnap (`tmp/cache/bootsnap/`, in every Rails app, `tmp/` ignored) keys its compiled files the
same way. Unlike the trust anchors (gitmem.agents.ignored_tool_dirs), these lie anywhere in the tree, where the agent
rightly writes (running the tests makes them), so no mount can make them read-only; but they are only
caches: the runtime rebuilds one from its source whenever it is missing. So, by mechanism, in every mode:
after the agent's processes are ended the runner removes every cache entry with a ctime at or after the
snapshot the guard took before the agent ran (`fresh`, `remove_swept`), and says how many in the cycle's output.
What the human imports next is compiled from the source the diff shows.

ctime, as for the anchors: the agent can put an mtime back, never a ctime; a `__pycache__` directory made or
replaced during the cycle (a rename keeps its files' ctimes) has its every entry removed; a link in place
of either is removed too (it would load from outside the tree). The walk skips `.git` and the trust
anchors (read-only in the box, reported without it) and stops at MAX_ENTRIES, which `Sweep.cut_short` says.

The same walk finds the files pytest runs by their name alone (`RunByName`: every `conftest.py`, a module its
`python_files` names, by default `test_*.py` and `*_test.py`, and a doctest file, `test*.txt`, whose `>>>` lines it
runs) made or changed during the cycle, in the folders pytest recurses into (`Recursion`): by default not `.*`,
`build`, `dist`, `node_modules`, `venv`, `*.egg`, nor a virtualenv; but a project's own settings
(gitmem.agents.pytest_settings) replace either list: `norecursedirs = docs` sends pytest into `build/` too, and
`python_files = check_*.py` makes it import `check_evil.py`; `testpaths` starts it in a folder whatever
norecursedirs says (a virtualenv too), on a file whatever its name, and runs the conftest.py of each folder on the
way. A folder is looked into, and a file taken, where pytest would under its default or under any settings the
caller names (the project's before the agent and after it, which the agent may have rewritten): never less than the
default. pytest reads no .gitignore, so one the agent plants in a git-ignored folder (`tmp/conftest.py`) runs at the
human's next `pytest` with no diff to review. They are no caches: the runner holds the git-ignored ones
(gitmem.cycle.oversize `hold_runnable`, GM776) where the human can read them, and the diff shows the rest. Python's
own startup files (`sitecustomize.py`, `usercustomize.py`, `*.pth`) run only from an interpreter's site folders: the
venvs, which are trust anchors.

Not here, on purpose: `node_modules` (the agent may rightly install packages, whose install scripts run
anyway; what the human runs from it is the project's own), direnv's `.envrc` (run only after `direnv allow`
of that exact content), `.tool-versions` (names a version, runs nothing), and build outputs such as
`target/` or `dist/` (not loaded in place of a source the human reads; removing them would cost a rebuild).
"""
from __future__ import annotations

import fnmatch
import os
import re
import stat
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from gitmem.agents.ignored_tool_dirs import IGNORED_TOOL_DIRS
from gitmem.agents.pytest_settings import PytestSettings, StartPaths

PYCACHE = "__pycache__"
SUFFIXES = (".pyc",)                       # what Python loads; `.pyo` has not been read since Python 3.5
CACHE_DIRS = ("tmp/cache/bootsnap",)       # whole directories of compiled files, from the top of the tree
CACHE_NAMES = frozenset(path.rsplit("/", 1)[-1] for path in CACHE_DIRS)
SKIPPED = (".git", *IGNORED_TOOL_DIRS)         # names skipped at the top of the tree
# What pytest imports by name whatever its settings say: every conftest.py, and (`--doctest-glob`'s default) a
# doctest file whose `>>>` lines it runs; a module only with this suffix, whatever `python_files` says. It never
# recurses into a virtualenv (pyvenv.cfg) nor a `__pycache__`, whatever norecursedirs says.
PYTEST_CONFTEST = "conftest.py"
PYTHON_SUFFIX = ".py"
DOCTEST_PREFIX, DOCTEST_SUFFIX = "test", ".txt"        # `test*.txt`
STARTED_SUFFIXES = (PYTHON_SUFFIX, ".txt", ".rst")     # a file pytest is started on: a module, or doctests
VENV_MARK = "pyvenv.cfg"
MAX_ENTRIES = 1_000_000                    # the walk's bound: a large monorepo with its node_modules


@dataclass
class Sweep:
    """What one look after the agent found: the cache entries it made or changed, relative to the root."""

    paths: list[str] = field(default_factory=list)
    runnable: list[str] = field(default_factory=list)   # files pytest runs by name (`RunByName`)
    cut_short: bool = False                # the tree holds over MAX_ENTRIES entries: the rest was not looked at


def fresh(root: Path, since_ns: int, settings: Iterable[PytestSettings] = ()) -> Sweep:
    """The bytecode cache entries under `root` (files or links) with a ctime at or after `since_ns`, and every
    entry of a cache directory that itself is; and (`runnable`) the files pytest runs by name with such a ctime,
    in the folders it recurses into, under its default or any of the project's pytest `settings`."""
    found = Sweep()
    every = [PytestSettings(), *settings]
    recursion = Recursion(each.norecursedirs for each in every)
    by_name = RunByName((pattern for each in every for pattern in each.python_files),
                        every_module=any(each.doctest_modules for each in every),
                        doctests=(pattern for each in every for pattern in each.doctest_globs))
    start = StartPaths(path for each in every for path in each.testpaths)
    pending = [_Folder(str(root), "", collected=True, on_way=bool(start))]
    count = 0
    while pending:
        folder = pending.pop()
        try:
            with os.scandir(folder.path) as entries:
                for entry in entries:
                    count += 1
                    if count > MAX_ENTRIES:
                        found.cut_short = True
                        return found
                    name = entry.name
                    if not folder.rel and name in SKIPPED:
                        continue
                    if folder.cache or name == PYCACHE or name.endswith(SUFFIXES) or name in CACHE_NAMES:
                        _look(entry, folder, since_ns, found, pending)
                    elif entry.is_dir(follow_symlinks=False):      # the common case: no stat, no call
                        on_way = folder.on_way and start.leads_to(f"{folder.rel}{name}")
                        pending.append(_Folder(entry.path, f"{folder.rel}{name}/", on_way=on_way, collected=(
                            folder.collected and recursion.goes_into(name, entry.path)) or (
                            on_way and start.names(f"{folder.rel}{name}"))))
                    elif folder.collected and by_name.runs(name, entry.path) or folder.on_way and _started(
                            start, name, f"{folder.rel}{name}"):
                        _look_runnable(entry, folder, since_ns, found)
        except OSError:
            continue
    found.runnable = _outside_venvs(root, found.runnable, start)
    return found


def _started(start: StartPaths, name: str, rel: str) -> bool:
    """Whether pytest runs the file `rel` (named `name`) as `testpaths` leads it there: the conftest.py of each
    folder on the way, and a file it names, whatever its name, that pytest runs when started on it."""
    return name == PYTEST_CONFTEST or (name.endswith(STARTED_SUFFIXES) and start.names(rel))


@dataclass(frozen=True)
class _Folder:
    path: str
    rel: str                   # relative to the root, with a trailing `/`; "" for the root
    cache: bool = False        # inside a cache directory: every entry is a cache
    renewed: bool = False      # inside one made or replaced during the cycle: every entry counts as changed
    collected: bool = False    # a folder pytest recurses into (`Recursion`), and each above it, or `testpaths` names
    on_way: bool = False       # a folder on the way to what `testpaths` names (`StartPaths`), or one it names


class Patterns:
    """Shell patterns matched as pytest matches them (`fnmatch_ex`): one without `/` against a name, one with it
    against the whole path (as `*/<pattern>`)."""

    def __init__(self, patterns: Iterable[str]) -> None:
        patterns = list(patterns)
        self._names = _regex(p for p in patterns if "/" not in p)
        self._paths = _regex(f"*/{p}" for p in patterns if "/" in p) if any("/" in p for p in patterns) else None

    def match(self, name: str, path: str) -> bool:
        """Whether one of the patterns matches the entry `name` at the absolute `path`."""
        return bool(self._names.match(name) or (self._paths is not None and self._paths.match(path)))


class Recursion:
    """The folders pytest recurses into under one of several `norecursedirs` settings (each a tuple of patterns),
    a virtualenv aside (`_outside_venvs`)."""

    def __init__(self, settings: Iterable[tuple[str, ...]]) -> None:
        self._settings = [Patterns(patterns) for patterns in dict.fromkeys(settings)]

    def goes_into(self, name: str, path: str) -> bool:
        """Whether pytest recurses into the folder at `path` (named `name`) under any setting."""
        if name == PYCACHE:
            return False
        return any(not patterns.match(name, path) for patterns in self._settings)


class RunByName:
    """The files pytest runs by their name in a folder it recurses into, under any of the `python_files` patterns
    given: every conftest.py, a module (`.py`) a pattern names (any, with `--doctest-modules`), and a doctest file
    by the default glob or one `--doctest-glob` gives."""

    def __init__(self, python_files: Iterable[str], *, every_module: bool = False,
                 doctests: Iterable[str] = ()) -> None:
        self._modules = Patterns(dict.fromkeys((PYTEST_CONFTEST, *python_files, *(["*.py"] if every_module else []))))
        globs = list(dict.fromkeys(doctests))
        self._doctests = Patterns(globs) if globs else None

    def runs(self, name: str, path: str) -> bool:
        """Whether pytest runs the file `name` at the absolute `path`."""
        if name.endswith(PYTHON_SUFFIX):
            return self._modules.match(name, path)
        return (name.startswith(DOCTEST_PREFIX) and name.endswith(DOCTEST_SUFFIX)) or (
            self._doctests is not None and self._doctests.match(name, path))


def may_run(name: str) -> bool:
    """Whether pytest may run a file of this name under some settings: any module (a `python_files` pattern can
    name any) and a doctest file by the default glob; what the runner holds where pytest may go (`.git/`, under
    such settings) never keeps such a name (gitmem.cycle.oversize)."""
    return name.endswith(PYTHON_SUFFIX) or (name.startswith(DOCTEST_PREFIX) and name.endswith(DOCTEST_SUFFIX))


def _regex(patterns: Iterable[str]) -> re.Pattern[str]:
    """One expression matching what any of the shell `patterns` matches (none: nothing)."""
    parts = [fnmatch.translate(pattern) for pattern in patterns]
    return re.compile("|".join(parts) if parts else "(?!)")


def _outside_venvs(root: Path, paths: list[str], start: StartPaths) -> list[str]:
    """`paths` but those inside a virtualenv (a folder holding pyvenv.cfg), which pytest never recurses into
    unless `testpaths` leads it there: looked up for what the walk found only, each folder once, not for every
    folder of the tree; from the top down, without recursion (a file may lie a thousand folders deep)."""
    venv: dict[str, bool] = {"": False}

    def inside(folder: str) -> bool:
        below = []
        while folder not in venv:
            below.append(folder)
            folder = os.path.dirname(folder)
        found = venv[folder]
        for each in reversed(below):
            found = found or (os.path.isfile(os.path.join(root, each, VENV_MARK)) and not (
                start and start.leads_to(each)))
            venv[each] = found
        return found

    return [rel for rel in paths if not inside(os.path.dirname(rel))]


def _look_runnable(entry: os.DirEntry[str], folder: _Folder, since_ns: int, found: Sweep) -> None:
    """A file pytest collects (or a link in its place): recorded when made or changed since `since_ns`."""
    try:
        info = entry.stat(follow_symlinks=False)
    except OSError:
        return
    if (stat.S_ISREG(info.st_mode) or stat.S_ISLNK(info.st_mode)) and info.st_ctime_ns >= since_ns:
        found.runnable.append(f"{folder.rel}{entry.name}")


def _look(entry: os.DirEntry[str], folder: _Folder, since_ns: int, found: Sweep, pending: list[_Folder]) -> None:
    """One entry of the walk: queue a directory, record a cache entry made or changed since `since_ns`."""
    rel = f"{folder.rel}{entry.name}"
    is_dir = entry.is_dir(follow_symlinks=False)
    cache = folder.cache or entry.name == PYCACHE or rel in CACHE_DIRS or (
        not is_dir and entry.name.endswith(SUFFIXES))
    if not cache:
        if is_dir:
            pending.append(_Folder(entry.path, f"{rel}/"))
        return          # the common case: no stat at all
    try:
        changed = folder.renewed or entry.stat(follow_symlinks=False).st_ctime_ns >= since_ns
    except OSError:
        return
    if changed:
        found.paths.append(rel)
    if is_dir:
        pending.append(_Folder(entry.path, f"{rel}/", True, changed))


def remove_swept(root: Path, sweep: Sweep) -> list[str]:
    """Remove the entries `sweep` found, deepest first; returns those removed (a directory only when empty)."""
    removed = []
    for rel in sorted(sweep.paths, key=lambda p: p.count("/"), reverse=True):
        place = root / rel
        try:
            info = place.lstat()
            if stat.S_ISDIR(info.st_mode):
                place.rmdir()
            else:
                place.unlink()
        except OSError:
            continue
        removed.append(rel)
    return removed


def removal_note(removed: list[str], cut_short: bool) -> str:
    """The cycle's message: how many were removed, and whether the walk stopped early."""
    said = ""
    if removed:
        listing = ", ".join(removed[:5]) + (" …" if len(removed) > 5 else "")
        said = (f"removed {len(removed)} bytecode cache entries made or changed during the cycle ({listing}): git "
                "ignores them and the runtime would run them in place of their source; the next import rebuilds them")
    if cut_short:
        said += ("; " if said else "") + (f"the work tree holds over {MAX_ENTRIES} entries: bytecode caches "
                                          "past them were not looked at")
    return said
