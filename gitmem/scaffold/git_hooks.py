"""`gitmem init --plain-hooks`: the plain git hooks, for repositories without the pre-commit framework."""
from __future__ import annotations

import os
import shutil
import stat
from pathlib import Path

from gitmem.packaged import packaged_dir

HOOKS = ("pre-commit", "pre-push")


def hooks_source() -> Path:
    """The hooks shipped in the wheel (`gitmem/_hooks/`), or `hooks/` beside the package in a source checkout."""
    return packaged_dir("_hooks", "hooks", "hooks")


def install_hooks(hooks_dir: Path) -> tuple[list[str], list[str], list[str]]:
    """Copy each hook into `hooks_dir` (executable) unless a hook of that name is there already.

    Returns (installed, already gitmem's, someone else's): a foreign hook is never replaced.
    """
    source = hooks_source()
    installed: list[str] = []
    same: list[str] = []
    foreign: list[str] = []
    hooks_dir.mkdir(parents=True, exist_ok=True)
    for name in HOOKS:
        ours = (source / name).read_bytes()
        target = hooks_dir / name
        if os.path.lexists(target):
            (same if target.is_file() and target.read_bytes() == ours else foreign).append(name)
            continue
        shutil.copyfile(source / name, target)
        mode = target.stat().st_mode
        target.chmod(mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
        installed.append(name)
    return installed, same, foreign
