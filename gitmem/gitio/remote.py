"""Remotes: fetch and push, and the few commands that must behave exactly like git's own.

Fetch and push go through the `git` executable on purpose: it honours the user's credential helpers, SSH
agent and `http.extraheader`, none of which libgit2 reads. In GitHub Actions the token comes from
GITMEM_GIT_TOKEN, per command (`token_config`): the checkout keeps no credentials in .git/config.
"""
from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Mapping
from pathlib import Path

import pygit2

from gitmem.gitio.history import resolve_revision
from gitmem.gitio.repository import Repo, RepoError, config_value, git_dir, root


class GitCommandError(RepoError):
    """A `git` subprocess failed; `output` holds what it printed (already in the message, scrubbed by callers)."""

    def __init__(self, message: str, output: str = "", rejected: bool = False, refused: bool = False) -> None:
        super().__init__(message)
        self.output = output
        self.rejected = rejected    # a race: someone pushed first (non-fast-forward, fetch first); try again
        self.refused = refused      # for good: a hook, branch protection or a ruleset declined the ref


TOKEN_ENV = "GITMEM_GIT_TOKEN"


def token_config(environ: Mapping[str, str], *, variable: str = TOKEN_ENV) -> dict[str, str]:
    """The token in GITMEM_GIT_TOKEN (or `variable`: `gitmem fleet` reads GITMEM_FLEET_TOKEN) as an
    `http.<server>/.extraheader` for one git command, in git's
    GIT_CONFIG_COUNT/KEY/VALUE variables: like `git -c`, but out of the command line (other processes can
    read argv) and never written to .git/config, where the agent could read it.

    An empty value first drops any Authorization header already configured for the server (a checkout
    that persisted its own credentials), so git never sends two.
    """
    token = environ.get(variable, "")
    if not token:
        return {}
    import base64

    server = (environ.get("GITHUB_SERVER_URL") or "https://github.com").rstrip("/") + "/"
    basic = base64.b64encode(f"x-access-token:{token}".encode()).decode("ascii")
    try:
        count = int(environ.get("GIT_CONFIG_COUNT") or 0)
    except ValueError:
        count = 0
    key = f"http.{server}.extraheader"
    return {f"GIT_CONFIG_KEY_{count}": key, f"GIT_CONFIG_VALUE_{count}": "",
            f"GIT_CONFIG_KEY_{count + 1}": key, f"GIT_CONFIG_VALUE_{count + 1}": f"AUTHORIZATION: basic {basic}",
            "GIT_CONFIG_COUNT": str(count + 2)}


def run_git(repo: Repo, *args: str, timeout: float = 300, stdin: str | None = None,
            as_configured: bool = False) -> str:
    """`git ARGS` in the work tree. `as_configured` asks git about its config exactly as it stands (where the
    hooks are), for a command that runs nothing; otherwise nothing the work tree names runs."""
    env = {**os.environ, "GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C"}
    env.update(token_config(os.environ))
    options = [] if as_configured else _runs_nothing_of_the_tree(repo)
    try:
        done = subprocess.run(["git", *options, *args], cwd=root(repo), env=env,
                              capture_output=True, text=True, timeout=timeout, input=stdin)
    except FileNotFoundError:
        raise GitCommandError("the `git` executable is needed to fetch and push; install git") from None
    except subprocess.TimeoutExpired:
        raise GitCommandError(f"`git {args[0]}` timed out after {timeout:.0f}s") from None
    output = (done.stdout + done.stderr).strip()
    if done.returncode != 0:
        rejected = "[rejected]" in output or "non-fast-forward" in output or "fetch first" in output
        raise GitCommandError(f"`git {' '.join(args[:1])}` failed: {output[-600:]}", output, rejected,
                              refused_for_good(output))
    return output


def _runs_nothing_of_the_tree(repo: Repo) -> list[str]:
    """Options that keep gitmem's own git commands from running a program the work tree names. An agent writes
    the work tree: a hooks folder kept there (`core.hooksPath`) may hold its hook until the cycle puts the folder
    back, and no fetch or push needs a file system monitor. The config itself, and what it includes, are git
    state the cycle's guard has put back before any of these commands runs (gitmem.gitio.state)."""
    options = ["-c", "core.fsmonitor=false"]
    hooks = config_value(repo, "core.hooksPath")
    if hooks:
        tree = root(repo)
        place = Path(os.path.expanduser(hooks))
        written = Path(os.path.abspath(place if place.is_absolute() else tree / place))
        # Judged as written and as resolved: a folder of the tree that is a link into .git is still the tree's
        # (the agent can make the link, and write .git/gitmem/ from the box).
        if any(_in_tree(path, tree, git_dir(repo)) for path in (written, Path(os.path.realpath(written)))):
            options += ["-c", f"core.hooksPath={os.devnull}"]
    return options


def _in_tree(path: Path, tree: Path, git: Path) -> bool:
    """Whether `path` is in the work tree and not in its git directory, by the tree's path as given and as
    resolved."""
    return any(path.is_relative_to(top) and not path.is_relative_to(inside)
               for top, inside in ((Path(os.path.abspath(tree)), Path(os.path.abspath(git))),
                                   (Path(os.path.realpath(tree)), Path(os.path.realpath(git)))))


# What a host says when its protection declines a ref: GitHub's protected branch (GH006) and rulesets (GH013).
HOST_REFUSALS = ("GH006", "GH013", "protected branch")
# `[remote rejected] (reason)`: a hook's or the host's answer, the same on every try, except for these races
# on the remote's own ref update, which the next try can win.
RACE_REASONS = ("cannot lock ref", "failed to update ref", "incorrect old value")
REMOTE_REJECTED = re.compile(r"\[remote rejected\][^\n(]*\(([^)\n]*)\)")


def refused_for_good(output: str) -> bool:
    """Whether git's output says the remote declined a pushed ref for a reason that waiting cannot change: a
    pre-receive or update hook, branch protection, a ruleset. The one rule that tells a refusal from a race."""
    if any(mark in output for mark in HOST_REFUSALS):
        return True
    return any(not reason.strip().startswith(RACE_REASONS) for reason in REMOTE_REJECTED.findall(output))


def remote_names(repo: Repo) -> list[str]:
    return [name for name in repo.raw.remotes.names() if name is not None]


def remote_branch_oid(repo: Repo, remote: str, branch: str) -> str | None:
    ref = repo.raw.references.get(f"refs/remotes/{remote}/{branch}")
    return str(ref.peel(pygit2.Commit).id) if ref is not None else None


def set_remote_branch(repo: Repo, remote: str, branch: str, target: str) -> None:
    """Point refs/remotes/<remote>/<branch> at `target`: put back what a fetch moved."""
    repo.raw.references.create(f"refs/remotes/{remote}/{branch}", pygit2.Oid(hex=target), force=True)


def upstream_of(repo: Repo, branch: str) -> tuple[str, str]:
    """(remote, remote branch) from branch.<name>.remote/merge, defaulting to origin and the same name."""
    remote = config_value(repo, f"branch.{branch}.remote") or "origin"
    merge = config_value(repo, f"branch.{branch}.merge")
    return remote, merge.removeprefix("refs/heads/") if merge else branch


def fetch(repo: Repo, remote: str, branch: str) -> str | None:
    """Fetch one branch into refs/remotes/<remote>/<branch>; its tip, or None when the remote lacks it."""
    try:
        run_git(repo, "fetch", "--quiet", "--no-tags", remote,
                f"+refs/heads/{branch}:refs/remotes/{remote}/{branch}")
    except GitCommandError as err:
        if "couldn't find remote ref" in err.output:
            return None
        raise
    return remote_branch_oid(repo, remote, branch)


def fetch_prefixed(repo: Repo, remote: str, prefix: str) -> None:
    """Fetch every branch named `prefix*` into refs/remotes/<remote>/, pruning ones deleted there."""
    run_git(repo, "fetch", "--quiet", "--no-tags", "--prune", remote,
            f"+refs/heads/{prefix}*:refs/remotes/{remote}/{prefix}*")


def fetch_objects(repo: Repo, remote: str) -> None:
    """Fetch every branch of `remote` into refs/remotes/<remote>/ (no tags): objects a prune lost come back."""
    run_git(repo, "fetch", "--quiet", "--no-tags", "--no-write-fetch-head", remote,
            f"+refs/heads/*:refs/remotes/{remote}/*")


def push(repo: Repo, remote: str, source: str, branch: str) -> None:
    """Push `source` (a rev) to refs/heads/<branch> on `remote`, never forced. Rejections set `.rejected`."""
    run_git(repo, "push", "--quiet", "--porcelain", remote, f"{resolve_revision(repo, source)}:refs/heads/{branch}")


def checkout_branch(repo: Repo, name: str, target: str) -> None:
    """`git checkout -B NAME TARGET`: the branch at `target`, checked out (the work tree must be clean)."""
    run_git(repo, "checkout", "--quiet", "-B", name, target)


def set_config(repo: Repo, key: str, value: str) -> None:
    """`git config KEY VALUE` in the repository's own config."""
    run_git(repo, "config", key, value)


def hooks_dir(repo: Repo) -> Path:
    """Where git runs this repository's hooks from (core.hooksPath, else the git dir's hooks/), as git says."""
    found = Path(run_git(repo, "rev-parse", "--git-path", "hooks", as_configured=True).strip())
    return found if found.is_absolute() else root(repo) / found


def merge_file_markers(repo: Repo, ours: Path, base: Path, theirs: Path, labels: tuple[str, str, str]) -> bool:
    """git's own line merge of three files into `ours`, with conflict markers where the sides collide (`git
    merge-file`): True when it merged cleanly. What a merge driver leaves when it cannot merge by its rules."""
    try:
        run_git(repo, "merge-file", "-L", labels[0], "-L", labels[1], "-L", labels[2], str(ours), str(base),
                str(theirs))
    except GitCommandError:
        return False
    return True


# git merge names each commit it merges in its drivers' environment: GITHEAD_<id>=<the name it was given>.
_MERGED_COMMIT = re.compile(r"^GITHEAD_([0-9a-f]{40}|[0-9a-f]{64})$")


def merge_in_progress(repo: Repo, environ: Mapping[str, str]) -> tuple[str, str, str] | None:
    """(fork, upstream, tip) of what git is doing while it runs a merge driver: `tip` lands on `upstream`, both
    split from `fork`. A `git merge` names the one commit it merges in its drivers' environment (upstream is
    HEAD); a rebase replays the commits up to its `orig-head` onto its `onto`, one at a time. None when git names
    none (an octopus, a cherry-pick) or the ids do not resolve: the driver then judges by the three texts alone."""
    merging = [found.group(1) for name in environ if (found := _MERGED_COMMIT.match(name))]
    raw = repo.raw
    try:
        if len(merging) == 1:
            upstream, tip = str(raw.head.target), merging[0]
        else:
            rebasing = git_dir(repo) / "rebase-merge"
            upstream, tip = ((rebasing / name).read_text(encoding="utf-8").strip() for name in ("onto", "orig-head"))
        fork = raw.merge_base(raw[upstream].peel(pygit2.Commit).id, raw[tip].peel(pygit2.Commit).id)
    except (OSError, UnicodeDecodeError, ValueError, KeyError, pygit2.GitError):
        return None
    return (str(fork), upstream, tip) if fork is not None else None
