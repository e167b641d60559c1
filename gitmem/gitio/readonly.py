"""Read-only copies of other repositories: `gitmem fleet` reads each agent's memory from a clone in its cache.

A copy is fetched with the `git` executable (credential helpers, SSH agents and `http.extraheader` work as they
do for git itself), shallow (one commit is all the memory files need), and incrementally after the first time:
later fetches send only what changed. Nothing is ever pushed from it. The copy has a work tree of its own, in
the cache, so the memory readers open it as they open any work tree; hooks never run there (`core.hooksPath`
points at an empty directory), and git's own protections against a hostile checkout (no `.git` entries, links
checked out as links, which the readers refuse) apply.
"""
from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping
from pathlib import Path

from gitmem.gitio.remote import GitCommandError, token_config
from gitmem.gitio.repository import Repo, open_repo

COPY_REF = "refs/remotes/origin/"            # the agent's branch and its gitmem/* branches land under it
WAITING_PREFIX = "gitmem/"                    # branches the runner makes for a human: proposal, cycle, salvage


def _git(cwd: Path, args: list[str], *, timeout: float, environ: Mapping[str, str], token_variable: str) -> str:
    env = {**environ, "GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C", "GIT_CONFIG_NOSYSTEM": "1"}
    env.pop("GIT_DIR", None)
    env.pop("GIT_WORK_TREE", None)
    env.pop("GIT_INDEX_FILE", None)
    env.update(token_config(environ, variable=token_variable))
    try:
        done = subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout,
                              stdin=subprocess.DEVNULL)
    except FileNotFoundError:
        raise GitCommandError("the `git` executable is needed to fetch; install git") from None
    except subprocess.TimeoutExpired:
        raise GitCommandError(f"`git {args[0]}` timed out after {timeout:.0f}s") from None
    output = (done.stdout + done.stderr).strip()
    if done.returncode != 0:
        lines = output.splitlines()
        said = next((line for line in lines if line.startswith(("fatal:", "error:"))), lines[-1] if lines else "")
        raise GitCommandError(f"`git {args[0]}` failed: {said[-300:] or f'exit status {done.returncode}'}", output)
    return output


def fetch_copy(dest: Path, url: str, branch: str | None, *, timeout: float, environ: Mapping[str, str],
               token_variable: str) -> tuple[Repo, str]:
    """The read-only copy of `url` at `dest`, fetched now: its work tree holds `branch` (default: the remote's
    HEAD), and refs/remotes/origin/gitmem/* the branches that wait for a human. Returns (repo, branch name
    checked out, or "HEAD"). GitCommandError when git cannot fetch; the message is git's last line."""
    if not (dest / ".git").is_dir():
        dest.mkdir(parents=True, exist_ok=True, mode=0o700)
        _git(dest, ["init", "--quiet", "--template=", "."], timeout=timeout, environ=environ,
             token_variable=token_variable)
        hooks = dest / ".git" / "no-hooks"
        hooks.mkdir(exist_ok=True)
        for key, value in (("core.hooksPath", str(hooks)), ("core.symlinks", "true"), ("gc.auto", "0"),
                           ("fetch.recurseSubmodules", "false"), ("core.fsmonitor", "false")):
            _git(dest, ["config", key, value], timeout=timeout, environ=environ, token_variable=token_variable)
    name = branch or "HEAD"
    source = f"refs/heads/{branch}" if branch else "HEAD"
    # One fetch: the branch, shallow, and every gitmem/* branch's tip (pruned when the remote deleted it).
    _git(dest, ["fetch", "--quiet", "--no-tags", "--prune", "--depth=1", "--no-write-fetch-head", "--", url,
                f"+{source}:{COPY_REF}{name}", f"+refs/heads/{WAITING_PREFIX}*:{COPY_REF}{WAITING_PREFIX}*"],
         timeout=timeout, environ=environ, token_variable=token_variable)
    _git(dest, ["-c", "advice.detachedHead=false", "checkout", "--quiet", "--force", "--detach",
                f"{COPY_REF}{name}"], timeout=timeout, environ=environ, token_variable=token_variable)
    _git(dest, ["clean", "--quiet", "-d", "--force", "-x"], timeout=timeout, environ=environ,
         token_variable=token_variable)
    return open_repo(dest), name


def waiting_branches(repo: Repo, *, copy: bool) -> list[str]:
    """The `gitmem/*` branches that wait for a human: in a fetched copy, those of its remote; in an agent's own
    clone, the local ones and those its remotes have (`remote/gitmem/...` when only a remote has it)."""
    names = sorted(repo.raw.references)
    if copy:
        return [n.removeprefix(COPY_REF) for n in names if n.startswith(COPY_REF + WAITING_PREFIX)]
    local = [n.removeprefix("refs/heads/") for n in names if n.startswith("refs/heads/" + WAITING_PREFIX)]
    remote = [n.removeprefix("refs/remotes/") for n in names if n.startswith("refs/remotes/")
              and n.removeprefix("refs/remotes/").partition("/")[2].startswith(WAITING_PREFIX)]
    return local + [n for n in remote if n.partition("/")[2] not in local]


def cache_home(environ: Mapping[str, str]) -> Path:
    """$XDG_CACHE_HOME/gitmem (default ~/.cache/gitmem): outside every work tree."""
    base = environ.get("XDG_CACHE_HOME") or ""
    return (Path(base) if os.path.isabs(base) else Path.home() / ".cache") / "gitmem"
