"""Pull-request mode: memory goes to one branch (`gitmem/memory`) and one open PR, never straight to main.

`prepare_branch` runs before the cycle or close: it continues an earlier memory branch that origin still
holds (its PR is open), or starts the branch from HEAD. `publish_branch` pushes it (never forced), and
`pr_text` words the PR's title and body from LOG and DECISIONS. The REST calls live in gitmem.github.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from gitmem import repo as git
from gitmem import sync
from gitmem.config import Config
from gitmem.memory import log
from gitmem.memory.text import one_line

DEFAULT_BRANCH = "gitmem/memory"
BASE_KEY = "gitmem-base"     # branch.<memory branch>.gitmem-base: the branch `prepare` started from

Repository = Any   # a pygit2.Repository; only gitmem.repo imports pygit2


@dataclass(frozen=True)
class Prepared:
    branch: str
    base: str
    commit: str
    continued: bool      # True: an earlier memory branch (from origin or local) was checked out


def prepare_branch(repository: Repository, *, branch: str = DEFAULT_BRANCH, remote: str = "origin") -> Prepared:
    """Check out `branch`: the newest of origin's and the local one, or a new one from HEAD."""
    current = git.current_branch(repository)
    head = git.head_commit(repository)
    if current is None or head is None:
        raise git.RepoError("pull-request mode starts from a branch with commits (e.g. main); HEAD is "
                            f"{'detached' if head is not None else 'unborn'}: `git switch main` first")
    if git.dirty_files(repository):
        raise git.RepoError("the work tree has uncommitted changes; commit or stash them before "
                            "`gitmem github prepare` switches branches")
    base = _config_value(repository, f"branch.{branch}.{BASE_KEY}") if current == branch else current
    base = base or current
    remote_tip = git.fetch(repository, remote, branch) if remote in git.remote_names(repository) else None
    local_tip = str(git.resolve(repository, branch).id) if git.branch_exists(repository, branch) else None
    start = _newest(repository, [tip for tip in (remote_tip, local_tip) if tip], branch)
    # A memory branch that main already contains (its PR was merged) is done: start again from HEAD.
    continued = start is not None and not git.is_ancestor(repository, git.resolve(repository, start), head)
    target = start if continued else str(head.id)
    if local_tip is not None and not git.is_ancestor(repository, git.resolve(repository, local_tip),
                                                     git.resolve(repository, target)):
        raise git.RepoError(f"local branch {branch} has commits that {target[:10]} lacks; push or rename "
                            f"it (git branch -m {branch} {branch}-old) and run again")
    git.run_git(repository, "checkout", "--quiet", "-B", branch, target)
    git.run_git(repository, "config", f"branch.{branch}.remote", remote)
    git.run_git(repository, "config", f"branch.{branch}.merge", f"refs/heads/{branch}")
    git.run_git(repository, "config", f"branch.{branch}.{BASE_KEY}", base)
    return Prepared(branch, base, target, continued)


def _newest(repository: Repository, tips: list[str], branch: str) -> str | None:
    """The tip that contains the others; two diverged tips need a human."""
    if not tips:
        return None
    best = tips[0]
    for tip in tips[1:]:
        a, b = git.resolve(repository, best), git.resolve(repository, tip)
        if git.is_ancestor(repository, a, b):
            best = tip
        elif not git.is_ancestor(repository, b, a):
            raise git.RepoError(f"local {branch} and the remote one have diverged; merge them by hand "
                                f"(git switch {branch} && git pull), then run again")
    return best


def _config_value(repository: Repository, key: str) -> str | None:
    try:
        return git.run_git(repository, "config", "--get", key).strip() or None
    except git.GitCommandError:
        return None


def recorded_base(repository: Repository, branch: str) -> str | None:
    """The branch `prepare_branch` started `branch` from, if it ran in this clone."""
    return _config_value(repository, f"branch.{branch}.{BASE_KEY}")


def publish_branch(repository: Repository, config: Config, *, branch: str, remote: str,
                   scrub: Callable[[str], str]) -> sync.SyncResult:
    """Push `branch` to `remote` (never forced; rebased onto it first if someone pushed to it)."""
    from gitmem.merge import resolver_for

    if git.current_branch(repository) != branch:
        raise git.RepoError(f"HEAD is on {git.current_branch(repository) or 'a detached HEAD'}, not {branch}; "
                            "run `gitmem github prepare` before the cycle or close")
    return sync.publish(repository, conflict_branch=f"{branch}-conflict", remote=remote, branch=branch,
                        scrub=scrub, resolver=resolver_for(config))


def proposed_commits(repository: Repository, remote: str, base: str) -> list[tuple[str, str]]:
    """(short id, subject) of the commits on HEAD that `remote`/`base` lacks, oldest first."""
    base_tip = git.fetch(repository, remote, base) if remote in git.remote_names(repository) else None
    if base_tip is None and git.branch_exists(repository, base):
        base_tip = str(git.resolve(repository, base).id)
    return [(str(c.id)[:10], c.message.split("\n", 1)[0]) for c in git.walk_range(repository, base_tip, "HEAD")]


def pr_text(log_text: str, waiting: list[Any], commits: list[tuple[str, str]], *, phase: str,
            branch: str, base: str) -> tuple[str, str]:
    """The PR's title (the latest LOG entry) and body (that entry, the commits, the decisions waiting)."""
    entries = log.parse(log_text).entries
    last = entries[-1] if entries else None
    if last is None:
        title = f"gitmem: {phase}"
    elif last.cycle is None:
        title = f"gitmem: close {one_line(last.get('Day') or '') or last.when.day.isoformat()}"
    else:
        task = one_line(last.get("Task") or "")
        title = f"gitmem: cycle {last.cycle} · {last.outcome}" + (f" · {task}" if task else "")
    title = title if len(title) <= 120 else title[:119] + "…"
    lines = [f"Memory written by gitmem ({phase}) in pull-request mode. Merge to land it on `{base}`; "
             f"while this PR is open, later runs add their commits to `{branch}` and update it.", ""]
    if last is not None:
        lines += [f"### Latest LOG entry: {last.heading().removeprefix('## ')}", ""]
        lines += [f"- {key}: {one_line(last.get(key) or '')}" for key in ("Task", "Result", "Day", "Cycles",
                                                                          "Summary", "Plan")
                  if last.get(key)]
        lines.append("")
    lines += [f"### Commits ({len(commits)})", ""] + [f"- `{sha}` {subject}" for sha, subject in commits]
    lines += ["", f"### Decisions waiting ({len(waiting)})", ""]
    for item in waiting:
        recommendation = f" — recommends: {one_line(item.recommendation)}" if item.recommendation else ""
        lines.append(f"- **{item.id}** {item.title}{recommendation} (asked {item.asked or '?'})")
    if waiting:
        lines += ["", "Answer one in a separate PR against the default branch: edit DECISIONS.md on GitHub, or run "
                  '`gitmem decision answer D-NNNN --answer "…"` and push.']
    else:
        lines.append("none")
    return title, "\n".join(lines) + "\n"


def waiting_decisions(decisions_text: str, config: Config, now: datetime) -> list[Any]:
    from gitmem.pending import pending

    return pending(decisions_text, config, now=now)
