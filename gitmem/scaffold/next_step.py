"""What to do after `gitmem init`: the one step that makes the git hooks run, for the hooks this machine can run."""
from __future__ import annotations

import shlex
import shutil
import sys
from pathlib import Path

PRE_COMMIT_INSTALL = "pre-commit install --hook-type pre-commit --hook-type pre-push"
FIX_FIRST = "fix what is named above, then run `gitmem init` again"
COMMIT_NEXT = ("commit the memory files: the git hooks run `gitmem check` before each commit, `gitmem verify` "
               "before each push")


def next_step(plain_hooks: bool, hooks: list[str], in_place: list[str], hooks_path: str | None = None,
              where: Path | None = None, *, refused: bool = False) -> str:
    """What to do after init: when it `refused` something (a gitmem.yaml it cannot read), the fix (FIX_FIRST);
    else, for the hooks this machine can run: nothing to install when both hooks are already there
    (`pre-commit install` was run, or gitmem's plain hooks are in). With core.hooksPath set
    (`hooks_path`), `pre-commit install` refuses to install, so the step is gitmem's plain hooks in that folder.
    A command to run starts with `cd` into the repository when the shell stands outside it (`where`, see
    `outside`): `pre-commit install` acts on the repository it is run in."""
    go = f"cd {shlex.quote(str(where))} && " if where is not None else ""
    if refused:
        return FIX_FIRST
    if plain_hooks:
        return COMMIT_NEXT if hooks else "no hook was installed: see the message above"
    if set(in_place) >= {"pre-commit", "pre-push"}:
        return COMMIT_NEXT
    if hooks_path is not None:
        return (f"core.hooksPath is set ({hooks_path}), where `pre-commit install` refuses to install: run "
                f"`{go}gitmem init --plain-hooks` to put gitmem's hooks there, or add `gitmem check` (pre-commit) "
                "and `gitmem verify --pre-push` (pre-push) to the hooks that folder runs")
    if shutil.which("pre-commit"):
        return go + PRE_COMMIT_INSTALL
    beside = Path(sys.executable).parent / "pre-commit"      # in gitmem's own venv, not activated
    if beside.is_file():
        return f"{go}{shlex.quote(str(beside))} {PRE_COMMIT_INSTALL.removeprefix('pre-commit ')}"
    return (f"pip install pre-commit && {go}{PRE_COMMIT_INSTALL}   "
            "(or, without the pre-commit framework: gitmem init --plain-hooks)")


def outside(directory: Path) -> Path | None:
    """`directory` as given, when the shell's folder is not in it (`gitmem init my-agent`); None when it is."""
    try:
        here, there = Path.cwd().resolve(), directory.resolve()
    except OSError:         # the shell's folder was removed: it is in no repository
        return directory
    return None if here == there or there in here.parents else directory
