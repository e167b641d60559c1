"""Tools the slow tests install for themselves, and the loud skip where they cannot.

`npm_ci(package_dir, name, label)` installs a committed npm lock once per lock file into a cache directory outside the
work tree ($GITMEM_TEST_CACHE, default ~/.cache/gitmem-tests), so a session, and the next one on the same
machine, pays for `npm ci` once. Where npm is missing or the install fails it raises Unavailable, whose message
is the skip reason for `skip_loudly`.
"""
from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import shutil
import subprocess
import tempfile
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import NoReturn

import pytest


class Unavailable(Exception):
    """The tool cannot be had here; the message is the skip reason."""


def cache_dir() -> Path:
    return Path(os.environ.get("GITMEM_TEST_CACHE") or Path.home() / ".cache" / "gitmem-tests")


def skip_loudly(what: str, reason: object) -> NoReturn:
    """Skip, and say so in the warnings summary too, which a quiet run (`-q`, no `-rs`) still prints."""
    warnings.warn(f"{what} skipped: {reason}", stacklevel=2)
    pytest.skip(str(reason))


def npm_ci(package_dir: Path, name: str, label: str, *, scripts: bool, timeout: int) -> Path:
    """The directory holding node_modules of `package_dir`'s package-lock.json, installed with `npm ci` into
    `<cache>/<name>-<hash of the lock>`; `label` says in messages what it is for."""
    lock = (package_dir / "package-lock.json").read_bytes()
    manifest = (package_dir / "package.json").read_bytes()
    key = hashlib.sha256(lock + manifest).hexdigest()[:16]
    home = cache_dir() / f"{name}-{key}"
    if (home / ".complete").exists():
        return home
    npm = shutil.which("npm")
    if npm is None:
        raise Unavailable(f"npm is not installed (Debian: `apt-get install -y npm`), so {label} cannot be installed")
    cache_dir().mkdir(parents=True, exist_ok=True)
    with one_installer_at_a_time(cache_dir() / f".{name}-{key}.lock"):
        if (home / ".complete").exists():
            return home
        building = Path(tempfile.mkdtemp(prefix=f".{name}-{key}-", dir=cache_dir()))
        (building / "package.json").write_bytes(manifest)
        (building / "package-lock.json").write_bytes(lock)
        argv = [npm, "ci", "--no-audit", "--no-fund", "--loglevel=error", *([] if scripts else ["--ignore-scripts"])]
        done = subprocess.run(argv, cwd=building, capture_output=True, text=True, timeout=timeout)
        if done.returncode != 0:
            shutil.rmtree(building, ignore_errors=True)
            raise Unavailable(f"`npm ci` of {label} failed (is the npm registry reachable?): "
                              f"{done.stderr.strip()[-500:]}")
        (building / ".complete").write_text("ok\n")
        try:
            os.replace(building, home)
        except OSError:                      # another session finished first
            shutil.rmtree(building, ignore_errors=True)
    return home


@contextlib.contextmanager
def one_installer_at_a_time(lock_path: Path) -> Iterator[None]:
    """Held by one installer at a time across processes: the suite's workers (pytest-xdist) and another session
    on the same machine would otherwise each run the same `npm ci`."""
    lock_path.parent.mkdir(parents=True, exist_ok=True)
    with open(lock_path, "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)
