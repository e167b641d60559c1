"""A project's own pytest settings that decide where pytest looks for files to import (`norecursedirs`) and which
it imports there (`python_files`).

pytest takes its settings from the first of these files at the top of the tree that is pytest's (pytest 9's
`_pytest.config.findpaths.CONFIG_LOADERS_BY_NAME`): `pytest.toml` and `.pytest.toml` (their `[pytest]` table, in
TOML's own types) and `pytest.ini` and `.pytest.ini` (whatever they hold), `pyproject.toml` with a `[tool.pytest]`
table (TOML's types) or a `[tool.pytest.ini_options]` one, `tox.ini` with a `[pytest]` section, `setup.cfg` with a
`[tool:pytest]` one. A `norecursedirs` there replaces pytest's default
list whole: `norecursedirs = docs` sends pytest into `build/`, `dist/`, `node_modules/` and every dot folder,
which the default keeps it out of (a virtualenv stays out either way). A `python_files` there replaces the default
`test_*.py *_test.py` the same way: `python_files = check_*.py` makes pytest import `check_evil.py`. What the runner's
look after the agent (gitmem.agents.bytecode) must know of, for a `conftest.py` planted in a git-ignored `build/`,
or a `check_evil.py` anywhere pytest goes, then runs at the human's next `pytest`. A `testpaths` names where
pytest starts when run at the top with no argument (`StartPaths`): such a folder is collected whatever
`norecursedirs` says (a virtualenv too), such a file imported whatever its name, and the conftest.py of each folder
on the way to one runs. An `addopts` is read as pytest's command line: `-o`/`--override-ini` of those settings,
`--doctest-modules` (every module it finds imported) and `--doctest-glob` (more doctest files run). The other
settings import no other file: `python_classes` and `python_functions` choose
what is collected inside a module pytest imports anyway.

Read bounded (MAX_BYTES), never through a link out of the tree nor from a FIFO (gitmem.confined); a file that is
not pytest's, or that pytest could not parse either, gives nothing.
"""
from __future__ import annotations

import configparser
import fnmatch
import os
import shlex
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from gitmem.config.nesting import loads_toml
from gitmem.confined.files import FileRefused, open_read

# pytest's own defaults, which a project's settings replace
DEFAULT_NORECURSE = ("*.egg", ".*", "_darcs", "build", "CVS", "dist", "node_modules", "venv", "{arch}")
DEFAULT_PYTHON_FILES = ("test_*.py", "*_test.py")
# (file at the top of the tree, its pytest section), in pytest's order; the TOML files' tables are _from_toml's
SETTINGS_FILES = (("pytest.toml", ""), (".pytest.toml", ""), ("pytest.ini", "pytest"), (".pytest.ini", "pytest"),
                  ("pyproject.toml", ""), ("tox.ini", "pytest"), ("setup.cfg", "tool:pytest"))
MAX_BYTES = 1024 * 1024          # a settings file, not a document

Reader = Callable[[str], bytes | None]      # a file's bytes at the top of the tree, by name; None when absent


@dataclass(frozen=True)
class PytestSettings:
    """Where pytest recurses and what it imports there: pytest's default for what a project's settings leave out."""

    norecursedirs: tuple[str, ...] = DEFAULT_NORECURSE
    python_files: tuple[str, ...] = DEFAULT_PYTHON_FILES
    testpaths: tuple[str, ...] = ()
    doctest_modules: bool = False          # `--doctest-modules` in addopts: pytest imports every module it finds
    doctest_globs: tuple[str, ...] = ()    # `--doctest-glob` in addopts: more doctest files it runs


PATHS_KEYS = ("norecursedirs", "python_files", "testpaths")     # settings of PytestSettings, as the files spell them
KEYS = (*PATHS_KEYS, "addopts")      # what is read: addopts may set or override them


def project_settings(read: Reader) -> PytestSettings:
    """The settings the project's pytest settings file gives (files read through `read`), as pytest finds it."""
    for name, section in SETTINGS_FILES:
        data = read(name)
        if data is None or len(data) > MAX_BYTES:
            continue
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            return PytestSettings()                # pytest stops at it too, and fails
        pytests, found = _from_toml(text, own=name != "pyproject.toml") if name.endswith(".toml") else _from_ini(
            text, section, always=name.endswith("pytest.ini"))
        if pytests:
            return _with_addopts(found)
    return PytestSettings()


def _with_addopts(found: dict[str, tuple[str, ...]]) -> PytestSettings:
    """The settings a file gives, with what its `addopts` adds to them as pytest's command line would:
    `-o`/`--override-ini` of one of PATHS_KEYS, `--doctest-modules` and `--doctest-glob`."""
    values = {key: found[key] for key in PATHS_KEYS if key in found}
    modules, globs = False, []
    words = found.get("addopts", ())
    for at, word in enumerate(words):
        following = words[at + 1] if at + 1 < len(words) else ""
        if word == "--doctest-modules":
            modules = True
        elif word in ("--doctest-glob", "-o", "--override-ini"):
            word = f"{word}={following}" if word != "-o" else f"-o{following}"
        if word.startswith("--doctest-glob="):
            globs.append(word.partition("=")[2])
        elif word.startswith(("-o", "--override-ini=")):
            key, _, setting = word.removeprefix("--override-ini=").removeprefix("-o").partition("=")
            if key in PATHS_KEYS:
                values[key] = _words(setting)
    return PytestSettings(**values, doctest_modules=modules, doctest_globs=tuple(globs))


def tree_reader(root: Path) -> Reader:
    """`Reader` of the work tree at `root`: a regular file inside it, at most MAX_BYTES of it."""

    def read(name: str) -> bytes | None:
        try:
            handle = open_read(root, name)
        except (FileRefused, OSError):
            return None
        if handle is None:
            return None
        with handle:
            return handle.read(MAX_BYTES + 1)

    return read


Found = tuple[bool, dict[str, tuple[str, ...]]]     # (the file is pytest's, the settings of KEYS it gives)


def _from_ini(text: str, section: str, *, always: bool) -> Found:
    """The settings in an ini file's `section`. The file is pytest's where it has that section, and a
    `pytest.ini` whatever it holds."""
    parser = configparser.ConfigParser(interpolation=None, strict=False)
    try:
        parser.read_string(text)
    except configparser.Error:
        return always, {}
    if not parser.has_section(section):
        return always, {}
    values = {key: parser.get(section, key, fallback=None) for key in KEYS}
    return True, {key: _words(value) for key, value in values.items() if value is not None}


def _from_toml(text: str, *, own: bool) -> Found:
    """The settings in a TOML file: `pytest.toml`'s `[pytest]` table (`own`: the file is pytest's whatever it holds),
    or pyproject.toml's `[tool.pytest]` table (TOML's types) or else its `[tool.pytest.ini_options]` (either makes
    the file pytest's)."""
    try:
        data = loads_toml(text)
    except ValueError:           # TooDeep too
        return own, {}
    if own:
        options: object = data.get("pytest")
    else:
        tool = data.get("tool")
        table = tool.get("pytest") if isinstance(tool, dict) else None
        if not isinstance(table, dict):
            return False, {}
        native = {key: value for key, value in table.items() if key != "ini_options"}
        options = native or table.get("ini_options")
        if not isinstance(options, dict):
            return False, {}
    found: dict[str, tuple[str, ...]] = {}
    for key in KEYS:
        value = options.get(key) if isinstance(options, dict) else None
        if isinstance(value, str):
            found[key] = _words(value)
        elif isinstance(value, list):
            found[key] = tuple(item for item in value if isinstance(item, str))
    return True, found


def _words(value: str) -> tuple[str, ...]:
    """An ini value as pytest splits a list of arguments (shell words)."""
    try:
        return tuple(shlex.split(value))
    except ValueError:
        return tuple(value.split())


class StartPaths:
    """The paths `testpaths` patterns name, as pytest expands them (`glob`, `**` recursive, from the top of the
    tree; one outside it is no path of the tree's). Matched per name, iteratively (an agent's tree may nest a
    thousand folders); a dot name a `*` would skip in glob is matched too, never fewer."""

    def __init__(self, patterns: Iterable[str]) -> None:
        self._patterns = [tuple(part for part in pattern.split("/") if part not in ("", "."))
                          for pattern in dict.fromkeys(patterns) if not os.path.isabs(pattern) and ".." not in
                          pattern.split("/")]

    def __bool__(self) -> bool:
        return bool(self._patterns)

    def names(self, rel: str) -> bool:
        """Whether a pattern names the path `rel` (from the top, no trailing `/`)."""
        parts = rel.split("/")
        return any(len(pattern) in _reached(pattern, parts) for pattern in self._patterns)

    def leads_to(self, rel: str) -> bool:
        """Whether `rel` is a path a pattern names or a folder on the way to one."""
        parts = rel.split("/")
        return any(_reached(pattern, parts) for pattern in self._patterns)


def _reached(pattern: tuple[str, ...], parts: list[str]) -> set[int]:
    """How many parts of `pattern` the path `parts` can have matched, each way it can (`**` takes any number)."""
    states = _past_globstars(pattern, {0})
    for part in parts:
        following = set()
        for at in states:
            if at < len(pattern) and pattern[at] == "**":
                following.add(at)
            elif at < len(pattern) and fnmatch.fnmatchcase(part, pattern[at]):
                following.add(at + 1)
        states = _past_globstars(pattern, following)
        if not states:
            break
    return states


def _past_globstars(pattern: tuple[str, ...], states: set[int]) -> set[int]:
    """`states`, and past each `**` they stand at (it may take no part at all)."""
    found, pending = set(states), list(states)
    while pending:
        at = pending.pop()
        if at < len(pattern) and pattern[at] == "**" and at + 1 not in found:
            found.add(at + 1)
            pending.append(at + 1)
    return found
