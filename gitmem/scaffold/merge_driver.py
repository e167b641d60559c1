"""Registering the memory merge driver (gitmem.publish.driver): `merge.gitmem.*` in the repository's own git
config and `<memory file> merge=gitmem` lines in .gitattributes. What is there already stays: a driver of the
same name configured otherwise, or a file with its own `merge=` attribute, is left as it is and named."""
from __future__ import annotations

import shlex
import sys
from pathlib import Path

from gitmem import gitio
from gitmem.checks.clone_setup import ATTRIBUTES, NAME
from gitmem.confined import files

HEADER = "# Memory files merge by memory rules in a local git merge or rebase (added by gitmem init)"


def driver_command() -> str:
    """What git runs: this gitmem, by the interpreter that runs it now."""
    return f"{shlex.quote(sys.executable)} -m gitmem merge-driver %O %A %B %P"


def register(target: Path, paths: list[str]) -> tuple[list[str], list[str]]:
    """(what was added, what was left as it is and why) for the repository at `target` and memory `paths`."""
    added: list[str] = []
    kept: list[str] = []
    repo = gitio.open_repo(target)
    driver = gitio.config_value(repo, f"merge.{NAME}.driver")
    if driver is None:
        gitio.set_config(repo, f"merge.{NAME}.name", "gitmem: memory files merge by memory rules")
        gitio.set_config(repo, f"merge.{NAME}.driver", driver_command())
        added.append(f"merge.{NAME}.driver (git config)")
    elif "merge-driver" not in driver:
        kept.append(f"merge.{NAME}.driver is set to something else in git config ({driver}); left as it is")
    raw = files.read_bytes(target, ATTRIBUTES) or b""
    lines = raw.decode("utf-8", "replace").splitlines()
    have = {line.split()[0]: line for line in lines if line.strip() and not line.lstrip().startswith("#")}
    wanted = []
    for path in paths:
        line = have.get(path) or have.get(f"/{path}")
        if line is None or "merge=" not in line:
            wanted.append(f"/{path} merge={NAME}")
        elif f"merge={NAME}" not in line:
            kept.append(f"{ATTRIBUTES} already gives {path} its own merge attribute ({line.strip()}); left as it is")
    if wanted:
        newline = b"\r\n" if b"\r\n" in raw else b"\n"
        addition = (b"" if not raw or raw.endswith(b"\n") else newline) + (newline if raw.strip() else b"")
        addition += newline.join(line.encode("utf-8") for line in [HEADER, *wanted]) + newline
        files.write_bytes(target, ATTRIBUTES, raw + addition)
        added.append(ATTRIBUTES)
    return added, kept
