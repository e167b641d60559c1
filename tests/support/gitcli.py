"""The git executable, for tests that drive it as a user would: one way to run it, one clean environment.

The environment has no GIT_* or PRE_COMMIT* variables from outside (a surrounding hook or CI), no system
config, and a global config of the test's choosing (none by default), so tests never depend on the machine.
"""
from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Mapping
from pathlib import Path

from tests.support.helpers import HUMAN

GIT = shutil.which("git") or "git"


def isolated_env(base: Mapping[str, str] | None = None, *, who: tuple[str, str] | None = None,
                 global_config: Path | None = None) -> dict[str, str]:
    """`base` (default: os.environ) without git's and pre-commit's variables, and with `who` as author and
    committer when given. `global_config` is created empty when missing."""
    env = {k: v for k, v in (os.environ if base is None else base).items() if not k.startswith(("GIT_", "PRE_COMMIT"))}
    if global_config is not None and not global_config.exists():
        global_config.write_text("", encoding="utf-8")
    env.update(GIT_CONFIG_GLOBAL=str(global_config) if global_config is not None else os.devnull,
               GIT_CONFIG_NOSYSTEM="1", GIT_TERMINAL_PROMPT="0")
    if who is not None:
        env.update(GIT_AUTHOR_NAME=who[0], GIT_AUTHOR_EMAIL=who[1], GIT_COMMITTER_NAME=who[0],
                   GIT_COMMITTER_EMAIL=who[1])
    return env


def run_git(cwd: Path, *args: str, env: Mapping[str, str] | None = None,
            check: bool = True) -> subprocess.CompletedProcess[str]:
    """`git ARGS` in `cwd`; a failure raises with git's output when `check`."""
    done = subprocess.run([GIT, *args], cwd=cwd, env=dict(env) if env is not None else isolated_env(who=HUMAN),
                          capture_output=True, text=True, check=False)
    if check and done.returncode != 0:
        raise AssertionError(f"git {' '.join(args)} failed ({done.returncode}):\n{done.stdout}{done.stderr}")
    return done


def git(cwd: Path, *args: str, who: tuple[str, str] = HUMAN) -> str:
    """`git ARGS` as `who`; its standard output."""
    return run_git(cwd, *args, env=isolated_env(who=who)).stdout


def protect_branches(origin: Path, *patterns: str) -> None:
    """A pre-receive hook in the bare `origin` that refuses pushes to the branches matching `patterns` (shell
    globs such as `main` or `gitmem/*`) with GitHub's words for a protected branch: git then reports
    `[remote rejected] (pre-receive hook declined)`, as it reports GitHub's `protected branch hook declined`."""
    cases = "|".join(f"refs/heads/{pattern}" for pattern in patterns)
    hook = origin / "hooks" / "pre-receive"
    hook.write_text("#!/bin/sh\nwhile read old new ref; do\n  case \"$ref\" in\n"
                    f"    {cases})\n"
                    "      echo \"error: GH006: Protected branch update failed for $ref.\" >&2\n"
                    "      echo \"error: Changes must be made through a pull request.\" >&2\n"
                    "      exit 1 ;;\n  esac\ndone\nexit 0\n", encoding="utf-8")
    hook.chmod(0o755)
