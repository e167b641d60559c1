"""The rules gitmem.yaml's values obey: gitmem.yaml is data, and an agent or a careless edit can write anything
in it. One function per kind of value, used by `gitmem.config` for both of its readers (the plain-YAML fast
reader and ruamel.yaml), so both accept and refuse exactly the same values.

- Text holds no control characters (NUL, CR, escapes, Unicode line separators): they end up in file names,
  commit identities, prompts and terminal output.
- Numbers are finite and within the range their field declares (`bounded_field`): a timeout of 10**30 seconds or a
  `nan` score is a mistake or an attack, never a setting.
- File names are plain names; memory directories stay inside the work tree and outside `.git` in any spelling
  that a file system may treat as `.git`; no two roles of one memory share a file.
"""
from __future__ import annotations

import math
import unicodedata
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import Field, field
from pathlib import PurePosixPath
from typing import Any

RANGE = "range"
MAX_NAME_BYTES = 255            # a file name, as most file systems allow
MAX_DIR_CHARS = 1024
MAX_TEXT_CHARS = 10_000
# Fields without a declared range still get a finite, sane one.
DEFAULT_RANGE: tuple[float, float] = (0, 1_000_000_000)


# The rules above are new in this release. A config already in history was judged without them, and "new rules
# judge new bytes": `lenient()` reads such a config by the rules it was written under (types, plain names,
# inside the repository, nothing negative). Only the config being committed, or used to run, is strict.
_LENIENT: ContextVar[bool] = ContextVar("lenient", default=False)


@contextmanager
def lenient() -> Iterator[None]:
    token = _LENIENT.set(True)
    try:
        yield
    finally:
        _LENIENT.reset(token)


# What a field of each Python type holds, as a person writing YAML calls it.
EXPECTED = {"int": "a whole number", "float": "a number", "str": "text", "bool": "true or false"}


def kind_in_words(value: Any) -> str:
    """A YAML value as a person reads it, the value itself and what kind it is: `true (true or false)`, `nothing
    (the key is empty)`, `1.5 (a number with a fraction)`, `'ten' (text)`, `a list`. Never Python's names
    (`True`, `None`, `NoneType`, ruamel's `CommentedMap`)."""
    from datetime import date

    if value is None:
        return "nothing (the key is empty)"
    if isinstance(value, bool):
        return f"{str(value).lower()} (a yes/no value)"
    if isinstance(value, int):
        return f"{value} (a whole number)"
    if isinstance(value, float):
        if not math.isfinite(value):
            return f"{value!r} (no finite number)"
        # YAML reads 1e3 and 65000.0 as decimals though they hold no fraction: say what was written, not why.
        return f"{value!r} (a number with a fraction)" if not value.is_integer() else f"{value!r} (a decimal number)"
    if isinstance(value, str):
        return f"{value!r} (text)"
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, date):       # YAML reads an unquoted 2020-01-01 as a date
        return f"a date ({value.isoformat()})"
    return f"a {type(value).__name__}"


LEAST_BECAUSE = "least_because"


def bounded_field(default: Any, low: float, high: float, *, least_because: str = "") -> Any:
    """A dataclass field whose value must lie in [low, high]; `least_because` says why `low` (in the error)."""
    return field(default=default, metadata={RANGE: (low, high), LEAST_BECAUSE: least_because})


def number_problem(spec: Field[Any], value: float) -> str | None:
    """Why `value` cannot be the number `spec` holds; None when it can."""
    low, high = spec.metadata.get(RANGE, DEFAULT_RANGE)
    if value < 0 and low >= 0:
        return f"must not be negative, got {value!r}"
    if _LENIENT.get():
        return None
    if isinstance(value, float) and not math.isfinite(value):
        return f"must be a finite number, got {value!r}"
    if value < low:
        because = spec.metadata.get(LEAST_BECAUSE)
        return f"must be at least {_as_written(low)}, got {value!r}" + (f": {because}" if because else "")
    if value > high:
        return f"must be at most {_as_written(high)}, got {value!r}"
    return None


def _as_written(bound: float) -> str:
    """A bound as a person would write it in gitmem.yaml: 10000000, not `:g`'s 1e+07; 0.5 stays 0.5."""
    return str(int(bound)) if float(bound).is_integer() else f"{bound:g}"


def _bad_character(text: str, *, path: bool) -> str | None:
    for char in text:
        category = unicodedata.category(char)
        # Cc: C0/C1 controls, DEL. Zl/Zp: line and paragraph separators. In a path, Cf too: zero-width and
        # direction marks make two names look alike (`.g‌it`), and file systems may ignore them.
        if category in ("Cc", "Zl", "Zp") or (path and category == "Cf"):
            return f"U+{ord(char):04X}"
    return None


def text_problem(text: str) -> str | None:
    """Why a config string cannot be used; None when it can."""
    if _LENIENT.get():
        return None
    bad = _bad_character(text, path=False)
    if bad is not None:
        return f"must not contain control characters (found {bad})"
    if len(text) > MAX_TEXT_CHARS:
        return f"is {len(text)} characters long; at most {MAX_TEXT_CHARS}"
    return None


def name_problem(name: str) -> str | None:
    """Why `name` cannot be a memory file name (a plain name in the memory directory); None when it can."""
    if not name or "/" in name or "\\" in name or name.startswith("."):
        return "must be a plain file name"
    if _LENIENT.get():
        return None
    bad = _bad_character(name, path=True)
    if name.strip() != name:
        return "must be a plain file name"
    if bad is not None:
        return f"must be a plain file name without control or invisible characters (found {bad})"
    if len(name.encode("utf-8")) > MAX_NAME_BYTES:
        return f"must be a file name of at most {MAX_NAME_BYTES} bytes"
    if name.casefold() == "gitmem.yaml":
        return "must not be gitmem.yaml, which holds the config itself"
    return None


def _is_git_dir(part: str) -> bool:
    # `.git` as any file system may read it: any case, trailing dots or spaces (Windows), the 8.3 short name.
    folded = part.casefold().rstrip(". ")
    return folded in (".git", "git~1")


def directory_problem(directory: str) -> str | None:
    """Why `directory` cannot hold memory (relative to the work tree); None when it can."""
    if _LENIENT.get():
        parts = PurePosixPath(directory).parts
        return "must stay inside the repository" if directory.startswith("/") or ".." in parts else None
    bad = _bad_character(directory, path=True)
    if bad is not None:
        return f"must not contain control or invisible characters (found {bad})"
    if len(directory) > MAX_DIR_CHARS:
        return f"must be at most {MAX_DIR_CHARS} characters"
    parts = PurePosixPath(directory).parts
    if directory.startswith("/") or "\\" in directory or ".." in parts or (parts and parts[0].endswith(":")):
        return "must stay inside the repository"
    if any(_is_git_dir(part) for part in parts):
        return "must not be inside .git: git's own files are not memory"
    if any(len(part.encode("utf-8")) > MAX_NAME_BYTES for part in parts):
        return f"has a directory name over {MAX_NAME_BYTES} bytes"
    return None


def workspace_name_problem(name: str) -> str | None:
    if _LENIENT.get():
        return None
    bad = _bad_character(name, path=True)
    if not name or "/" in name or "\\" in name or name.startswith((".", "-")) or bad is not None or len(name) > 100:
        return "must be a short name without slashes, control or invisible characters"
    return None


def shared_files(places: Iterable[tuple[str, str, dict[str, str]]]) -> tuple[str, str, str] | None:
    """(key, other key, path) of the first memory file two roles share; None if none.

    `places` holds (key prefix, memory_dir, role -> file name). Paths are compared case-insensitively and
    normalised, so `NOW.md` and `now.md`, or `a/./LOG.md` and `a/LOG.md`, are one file on some systems.
    (Two workspaces may name the same directory: that is one memory under two names, not two roles.)"""
    if _LENIENT.get():
        return None
    seen: dict[str, str] = {}
    for prefix, directory, names in places:
        for role, name in names.items():
            path = str(PurePosixPath(directory) / name).casefold()
            key = f"{prefix}files.{role}"
            if path in seen:
                return key, seen[path], str(PurePosixPath(directory) / name)
            seen[path] = key
    return None
