"""Read-only copies of other repositories: `gitmem fleet` reads each agent's memory from a clone in its cache.

A copy is fetched with the `git` executable (credential helpers, SSH agents and `http.extraheader` work as they
do for git itself), shallow (one commit is all the memory files need), and incrementally after the first time:
later fetches send only what changed. Nothing is ever pushed from it. The copy has a work tree of its own, in
the cache, so the memory readers open it as they open any work tree; hooks never run there (`core.hooksPath`
points at an empty directory), and git's own protections against a hostile checkout (no `.git` entries, links
checked out as links, which the readers refuse) apply.
"""
from __future__ import annotations

import fcntl
import os
import shutil
import signal
import subprocess
import time
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

import pygit2

from gitmem.gitio.remote import GitCommandError, token_config
from gitmem.gitio.repository import Repo, open_repo, references

COPY_REF = "refs/remotes/origin/"            # the agent's branch and its gitmem/* branches land under it
# In the copy's .git while its last fetch failed: the work tree is the last good one, older than the remote.
FETCH_FAILED_MARK = "gitmem-last-fetch-failed"
WAITING_PREFIX = "gitmem/"                    # branches the runner makes for a human: proposal, cycle, salvage
# Pull-request mode's own branch, and its successors after a squash merge (`gitmem/memory-2`): it waits in its pull
# request, never among the branches left for the human (gitmem.publish.pullrequest opens it).
MEMORY_BRANCH = "gitmem/memory"
TURN_SUFFIX = ".lock"                         # beside the copy: `<copy>.lock`, whose flock is a reader's turn


def _git(cwd: Path, args: list[str], *, deadline: float, budget: float, environ: Mapping[str, str],
         token_variable: str) -> str:
    """Run git, killed with everything it started once `deadline` (monotonic) passes: a transport helper
    (git-remote-https, ssh) holds the output pipes too, so killing git alone would leave the wait hanging."""
    env = {key: value for key, value in environ.items() if key not in ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE")}
    # No prompt for a password nobody is there to type; no Git LFS download of the agent's large files.
    env.update({"GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C", "GIT_LFS_SKIP_SMUDGE": "1"})
    env.update(token_config(environ, variable=token_variable))
    try:
        process = subprocess.Popen(["git", *args], cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                                   stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                   start_new_session=True)
    except FileNotFoundError:
        raise GitCommandError("the `git` executable is needed to fetch; install git") from None
    try:
        output, _ = process.communicate(timeout=max(0.1, deadline - time.monotonic()))
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.communicate()
        # The killed git leaves its lock files (shallow.lock, index.lock, a ref's .lock): every later fetch of
        # this copy would fail on them. They are this process's own, in this process's own cache.
        for lock in (cwd / ".git").rglob("*.lock"):
            lock.unlink(missing_ok=True)
        raise GitCommandError(f"`git {args[0]}` did not finish within the {budget:g}s timeout") from None
    output = output.strip()
    if process.returncode != 0:
        lines = output.splitlines()
        said = next((line for line in lines if line.startswith(("fatal:", "error:"))), lines[-1] if lines else "")
        raise GitCommandError(f"`git {args[0]}` failed: {said[-300:] or f'exit status {process.returncode}'}", output)
    return output


def fetch_copy(dest: Path, url: str, branch: str | None, *, timeout: float, environ: Mapping[str, str],
               token_variable: str) -> tuple[Repo, str]:
    """The read-only copy of `url` at `dest`, fetched now: its work tree holds `branch` (default: the remote's
    HEAD), and refs/remotes/origin/gitmem/* the branches that wait for a human. Returns (repo, branch name
    checked out, or "HEAD"). GitCommandError when git cannot fetch (the message is git's own line), or when the
    whole takes longer than `timeout` seconds.

    A named `branch` is followed to its newest successor (`gitmem/memory-2` once pull-request mode's first pull
    request was squash-merged, and its branch perhaps deleted; `my-memory-2` for a `--branch my-memory`): the one
    the agent's runs write now (`copy_branch`). When none is left: the remote's HEAD for `gitmem/memory`, else
    GitCommandError (a misspelt branch is not read as another)."""
    deadline = time.monotonic() + timeout
    if (dest / ".git").is_dir():
        try:
            pygit2.Repository(str(dest))
        except pygit2.GitError:      # a copy damaged on disk is fetched again from nothing: it is only a cache
            shutil.rmtree(dest)
    if not (dest / ".git").is_dir():
        dest.mkdir(parents=True, exist_ok=True, mode=0o700)
        made = pygit2.init_repository(str(dest), initial_head="main")
        hooks = dest / ".git" / "no-hooks"
        hooks.mkdir(exist_ok=True)
        for key, value in (("core.hooksPath", str(hooks)), ("gc.auto", "0"), ("fetch.recurseSubmodules", "false"),
                           ("core.fsmonitor", "false"), ("protocol.ext.allow", "never")):
            made.config[key] = value
    # A named branch is followed to its newest successor (`successor_number`): fetched by a pattern, so that a
    # deleted one and the next name are both seen; under gitmem/ the waiting branches' pattern fetches it.
    specs = ["+HEAD:" + COPY_REF + "HEAD", f"+refs/heads/{WAITING_PREFIX}*:{COPY_REF}{WAITING_PREFIX}*"]
    if branch and not branch.startswith(WAITING_PREFIX):
        specs.append(f"+refs/heads/{branch}*:{COPY_REF}{branch}*")

    def git(*args: str) -> str:
        return _git(dest, list(args), deadline=deadline, budget=timeout, environ=environ,
                    token_variable=token_variable)

    mark = dest / ".git" / FETCH_FAILED_MARK
    try:
        # One fetch: the remote's HEAD and the branch, shallow, and every gitmem/* branch's tip (pruned when the
        # remote deleted it).
        git("fetch", "--quiet", "--no-tags", "--prune", "--depth=1", "--no-write-fetch-head", "--", url, *specs)
        name = copy_branch(open_repo(dest), branch)
        if branch and name == "HEAD" and branch != MEMORY_BRANCH:
            raise GitCommandError(f"the remote has no branch {branch} (nor {branch}-2, … after it)")
        git("-c", "advice.detachedHead=false", "checkout", "--quiet", "--force", "--detach", f"{COPY_REF}{name}")
        git("clean", "--quiet", "-d", "--force", "-x")
    except GitCommandError:
        mark.touch()
        raise
    mark.unlink(missing_ok=True)
    return open_repo(dest), name


@contextmanager
def copy_turn(dest: Path, *, wait: float) -> Iterator[None]:
    """This process's turn at the copy at `dest`, from its fetch to the end of its reading: two fleet reads at once
    (a human's `gitmem fleet status` during a cron job's report) would otherwise fetch into one copy together,
    and one would fail on the other's `shallow.lock`, or read a work tree the other is checking out. An flock on
    `<dest>.lock`, beside the copy (a damaged copy is removed whole): the kernel drops it when its holder dies,
    so nothing is ever stale. GitCommandError when the turn does not come within `wait` seconds."""
    path = dest.with_name(dest.name + TURN_SUFFIX)
    try:
        dest.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | getattr(os, "O_NOFOLLOW", 0), 0o600)
    except OSError:
        # A cache this process cannot write (read-only, not a folder): no fetch of its can run there either, so
        # there is no turn to take; reading it `--offline` says what it finds, as it always did.
        yield
        return
    try:
        deadline = time.monotonic() + wait
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    raise GitCommandError(f"another gitmem fleet read held its copy for more than {wait:g}s; "
                                          "run the command again") from None
                time.sleep(0.05)
        yield
    finally:
        os.close(fd)          # closing the descriptor releases the flock


def last_fetch_failed(dest: Path) -> bool:
    """Whether the copy at `dest` holds an older state than its remote because its last fetch failed: a reader
    without the network (`--offline`) must not take it for the agent as it is now."""
    return (dest / ".git" / FETCH_FAILED_MARK).exists()


def is_memory_branch(name: str) -> bool:
    """Whether `name` (a branch, without a remote) is pull-request mode's memory branch, which waits in its PR."""
    return successor_number(name, MEMORY_BRANCH) is not None


def copy_branch(copy: Repo, branch: str | None) -> str:
    """The branch a fetched copy reads for fleet.yaml's `branch` (None: the remote's HEAD): the newest of that
    branch and its successors the copy holds (`newest_successor`), else the remote's HEAD."""
    if branch is None:
        return "HEAD"
    names = [ref.removeprefix(COPY_REF) for ref in references(copy, COPY_REF)]
    return newest_successor(names, branch) or "HEAD"


def successor_number(name: str, branch: str) -> int | None:
    """Where `name` stands among `branch`'s successors: `branch` is 1, `branch-N` is N (pull-request mode starts
    the next name when a pull request of the last one was squash-merged or closed: gitmem.publish.pullrequest);
    None for any other name."""
    if name == branch:
        return 1
    rest = name.removeprefix(branch + "-") if name.startswith(branch + "-") else ""
    return int(rest) if rest.isascii() and rest.isdigit() and len(rest) <= 18 else None


def newest_successor(names: Iterable[str], branch: str) -> str | None:
    """Of `names`, the successor of `branch` with the highest number (`successor_number`); None when none is."""
    found = [(number, name) for name in names if (number := successor_number(name, branch)) is not None]
    return max(found)[1] if found else None


def waiting_branches(repo: Repo, *, copy: bool) -> list[str]:
    """The `gitmem/*` branches that wait for a human: in a fetched copy, those of its remote; in an agent's own
    clone, the local ones and those its remotes have (`remote/gitmem/...` when only a remote has it). Never the
    memory branch of pull-request mode (`is_memory_branch`)."""
    names = references(repo)
    if copy:
        found = [n.removeprefix(COPY_REF) for n in names if n.startswith(COPY_REF + WAITING_PREFIX)]
        return [n for n in found if not is_memory_branch(n)]
    local = [n.removeprefix("refs/heads/") for n in names if n.startswith("refs/heads/" + WAITING_PREFIX)
             and not is_memory_branch(n.removeprefix("refs/heads/"))]
    remote = [n.removeprefix("refs/remotes/") for n in names if n.startswith("refs/remotes/")
              and n.removeprefix("refs/remotes/").partition("/")[2].startswith(WAITING_PREFIX)
              and not is_memory_branch(n.removeprefix("refs/remotes/").partition("/")[2])]
    return local + [n for n in remote if n.partition("/")[2] not in local]


def cache_home(environ: Mapping[str, str]) -> Path:
    """$XDG_CACHE_HOME/gitmem (default ~/.cache/gitmem): outside every work tree."""
    base = environ.get("XDG_CACHE_HOME") or ""
    return (Path(base) if os.path.isabs(base) else Path.home() / ".cache") / "gitmem"
