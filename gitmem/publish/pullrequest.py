"""Pull-request mode: memory goes to one branch (`gitmem/memory`) and one open PR, never straight to main.

`prepare_branch` runs before the cycle or close: it continues the memory branch whose PR is still open,
or starts one from HEAD (`gitmem/memory`, or `gitmem/memory-2`… when an old branch's PR was squash-merged
or closed: nothing is ever force-pushed or deleted). `publish_branch` pushes it, and `pr_text` words the
PR's title and body from LOG and DECISIONS. The REST calls live in gitmem.publish.github_api.
"""
from __future__ import annotations

import html
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from gitmem import gitio
from gitmem.memory import log
from gitmem.memory.decisions import Waiting
from gitmem.memory.display import unlinked
from gitmem.memory.lines import one_line
from gitmem.publish.push import SyncResult, publish
from gitmem.secrets import scrub
from gitmem.workspace import Workspace

DEFAULT_BRANCH = gitio.MEMORY_BRANCH
MAX_COMMITS_LISTED = 40     # a PR left open for weeks keeps a readable body
BASE_KEY = "gitmem-base"     # branch.<memory branch>.gitmem-base: the branch `prepare` started from

@dataclass(frozen=True)
class Prepared:
    branch: str
    base: str
    commit: str
    continued: bool      # True: an earlier memory branch (from origin or local) was checked out


def prepare_branch(repo: gitio.Repo, *, branch: str = DEFAULT_BRANCH, remote: str = "origin",
                   is_open: Callable[[str], bool] | None = None,
                   catch_up: Callable[[str, str, str], str] | None = None) -> Prepared:
    """Check out the memory branch to continue, or start one from HEAD.

    With `is_open` (does this branch have an open PR?), a branch whose PR was squash- or rebase-merged, or
    closed, is left alone and the next free name (`gitmem/memory-2`, …) starts from HEAD; without it, an
    existing branch that HEAD does not contain is taken to have its PR open.

    A continued branch that lacks commits HEAD has (a human's session or answer landed on the base while its PR
    was open) continues from `catch_up(HEAD, name, tip)`: the commit that brings them in, which contains the tip,
    so the branch moves on without a force-push (`pr_workflow.base_catch_up`).
    """
    current = gitio.current_branch(repo)
    head = gitio.head_id(repo)
    if current is None or head is None:
        raise gitio.RepoError("pull-request mode starts from a branch with commits (e.g. main); HEAD is "
                            f"{'detached' if head is not None else 'unborn'}: `git switch main` first")
    if gitio.dirty_files(repo):
        raise gitio.RepoError("the work tree has uncommitted changes; commit or stash them before "
                            "`gitmem github prepare` switches branches")
    base = recorded_base(repo, current) or current
    if branch == base or not gitio.is_branch_name(branch):
        # The memory branch is what the PR proposes to `base`: the base itself would take the cycle's commit
        # directly (what pull-request mode exists to avoid), and `refs/heads/x` would make a branch of that name.
        raise gitio.RepoError(f"--branch {branch!r} cannot be the memory branch: "
                              + (f"it is the branch the pull request goes into ({base}); "
                                 if branch == base else "it is not a plain branch name; ")
                              + f"use a branch of its own, as the default `{DEFAULT_BRANCH}` is")
    has_remote = remote in gitio.remote_names(repo)
    names = _memory_branches(repo, branch, remote, has_remote and is_open is not None)
    taken = False
    for name in names:                                   # the newest name first
        tip = _tip(repo, name, remote if has_remote else None)
        if tip is None or gitio.is_ancestor(repo, tip, head):
            continue                                     # absent, or merged into HEAD with its history
        if is_open is not None and not is_open(name):
            taken = True                                 # its PR was squash-merged or closed: leave it be
            continue
        if catch_up is not None and not gitio.is_ancestor(repo, head, tip):
            tip = catch_up(head, name, tip)
        return _switch(repo, name, tip, base, remote, continued=True)
    fresh = branch if not taken else _free_name(names, branch)
    return _switch(repo, fresh, head, base, remote, continued=False)


def _memory_branches(repo: gitio.Repo, branch: str, remote: str, all_of_them: bool) -> list[str]:
    """`branch` and, when asked, its numbered successors (`branch-2`, …: gitio.successor_number, the one numbering
    the fleet follows too) on the remote, newest first."""
    if not all_of_them:
        if remote in gitio.remote_names(repo):
            gitio.fetch(repo, remote, branch)
        return [branch]
    gitio.fetch_prefixed(repo, remote, branch)
    found = {branch}
    for ref in gitio.references(repo):
        for prefix in (f"refs/remotes/{remote}/", "refs/heads/"):
            if ref.startswith(prefix) and gitio.successor_number(ref[len(prefix):], branch) is not None:
                found.add(ref[len(prefix):])
    return sorted(found, key=lambda name: _number(name, branch), reverse=True)


def _number(name: str, branch: str) -> int:
    return gitio.successor_number(name, branch) or 1


def _free_name(names: list[str], branch: str) -> str:
    return f"{branch}-{max(_number(name, branch) for name in names) + 1}"


def _tip(repo: gitio.Repo, name: str, remote: str | None) -> str | None:
    """The newest of the remote's and the local `name`; None when neither exists."""
    remote_tip = gitio.remote_branch_oid(repo, remote, name) if remote else None
    local_tip = gitio.resolve_revision(repo, name) if gitio.branch_exists(repo, name) else None
    return _newest(repo, [tip for tip in (remote_tip, local_tip) if tip], name)


def _switch(repo: gitio.Repo, name: str, target: str, base: str, remote: str, *,
            continued: bool) -> Prepared:
    if gitio.branch_exists(repo, name) and not gitio.is_ancestor(repo, name, target):
        raise gitio.RepoError(f"local branch {name} has commits that {target[:10]} lacks; push or rename "
                            f"it (git branch -m {name} {name}-old) and run again")
    gitio.checkout_branch(repo, name, target)
    gitio.set_config(repo, f"branch.{name}.remote", remote)
    gitio.set_config(repo, f"branch.{name}.merge", f"refs/heads/{name}")
    gitio.set_config(repo, f"branch.{name}.{BASE_KEY}", base)
    return Prepared(name, base, target, continued)


def _newest(repo: gitio.Repo, tips: list[str], branch: str) -> str | None:
    """The tip that contains the others; two diverged tips need a human."""
    if not tips:
        return None
    best = tips[0]
    for tip in tips[1:]:
        if gitio.is_ancestor(repo, best, tip):
            best = tip
        elif not gitio.is_ancestor(repo, tip, best):
            raise gitio.RepoError(f"local {branch} and the remote one have diverged; merge them by hand "
                                f"(git switch {branch} && git pull), then run again")
    return best


def recorded_base(repo: gitio.Repo, branch: str) -> str | None:
    """The branch `prepare_branch` started `branch` from, if it ran in this clone."""
    return gitio.config_value(repo, f"branch.{branch}.{BASE_KEY}")


def publish_branch(ws: Workspace, *, branch: str, remote: str) -> SyncResult:
    """Push `branch` to `remote` (never forced; rebased onto it first if someone pushed to it, merging and
    renumbering `ws`'s memory by its rules), then any local salvage branches."""
    from gitmem.publish.merge import resolver_for

    repo = ws.repo
    if gitio.current_branch(repo) != branch:
        raise gitio.RepoError(f"HEAD is on {gitio.current_branch(repo) or 'a detached HEAD'}, not {branch}; "
                            "run `gitmem github prepare` before the cycle or close")
    result = publish(repo, conflict_branch=f"{branch}-conflict", remote=remote, branch=branch,
                     resolver=resolver_for(ws.config), workspace=ws.name or None)
    if result.ok:
        # A failed cycle's work is on a local salvage branch; the runner is thrown away after the job.
        for name in runner_kept_branches(repo):
            try:
                gitio.push(repo, remote, name, name)
                result.messages.append(f"pushed {name} (a cycle's work kept off the branch) to {remote}")
            except gitio.GitCommandError as err:
                result.messages.append(f"could not push {name}: {scrub(str(err))}")
    return result


KEPT_PREFIXES = ("refs/heads/gitmem/salvage/", "refs/heads/gitmem/proposal/", "refs/heads/gitmem/local/")


def runner_kept_branches(repo: gitio.Repo) -> list[str]:
    """Local branches the runner kept a cycle's work on, to publish beside the memory branch: a failed cycle's
    (`gitmem/salvage/*`), edits of protected paths awaiting a decision (`gitmem/proposal/*`) and commits made
    in the checkout during a cycle (`gitmem/local/*`)."""
    return [ref.removeprefix("refs/heads/") for prefix in KEPT_PREFIXES for ref in gitio.references(repo, prefix)]


def proposed_commits(repo: gitio.Repo, remote: str, base: str) -> list[tuple[str, str]]:
    """(short id, subject) of the commits on HEAD that `remote`/`base` lacks, oldest first."""
    base_tip = gitio.fetch(repo, remote, base) if remote in gitio.remote_names(repo) else None
    if base_tip is None and gitio.branch_exists(repo, base):
        base_tip = gitio.resolve_revision(repo, base)
    return [(c.short, c.subject) for c in gitio.walk_range(repo, base_tip, "HEAD")]


# What GitHub acts on in a PR's text besides references (display.unlinked): HTML (a comment `<!--` hides the rest of
# the body, the decisions waiting among it; an image calls a tracker), Markdown links, images and emphasis.
_MARKUP = re.compile(r"[\\`*_\[\]!|~]")


def for_pr(text: str) -> str:
    """The agent's text (a task, a result, a commit subject, a decision) as a PR shows it: on one line, shown as
    written and acting on nothing: markup escaped, and a zero-width space after each `@`, `#` and `GH-`, so
    that no user is notified, no issue is linked and none is closed when the human merges."""
    shown = html.escape(one_line(text), quote=False)
    shown = _MARKUP.sub(lambda found: "\\" + found.group(), shown)
    return unlinked(shown)


def pr_text(log_text: str, waiting: Sequence[Waiting], commits: list[tuple[str, str]], *, phase: str,
            branch: str, base: str) -> tuple[str, str]:
    """The PR's title (the latest LOG entry) and body (that entry, the commits, the decisions waiting). Every
    text the agent wrote goes through `for_pr` (the title, plain text on GitHub, only through its references)."""
    entries = log.parse(log_text).entries
    last = entries[-1] if entries else None
    if last is None:
        title = f"gitmem: {phase}"
    elif last.cycle is None:
        title = f"gitmem: close {one_line(last.get('Day') or '') or last.when.day.isoformat()}"
    else:
        task = unlinked(one_line(last.get("Task") or ""))
        title = f"gitmem: cycle {last.cycle} · {last.outcome}" + (f" · {task}" if task else "")
    title = title if len(title) <= 120 else title[:119] + "…"
    lines = [f"Memory written by gitmem ({phase}) in pull-request mode. Merge to land it on `{base}`; "
             f"while this PR is open, later runs add their commits to `{branch}` and update it.", ""]
    if last is not None:
        lines += [f"### Latest LOG entry: {last.heading().removeprefix('## ')}", ""]
        lines += [f"- {key}: {for_pr(last.get(key) or '')}" for key in ("Task", "Result", "Day", "Cycles",
                                                                          "Summary", "Plan")
                  if last.get(key)]
        lines.append("")
    shown = commits[-MAX_COMMITS_LISTED:]
    lines += [f"### Commits ({len(commits)})", ""]
    if len(commits) > len(shown):
        lines.append(f"- … {len(commits) - len(shown)} earlier commit(s)")
    lines += [f"- `{sha}` {for_pr(subject)}" for sha, subject in shown]
    lines += ["", f"### Decisions waiting ({len(waiting)})", ""]
    for item in waiting:
        recommendation = f" — recommends: {for_pr(item.recommendation)}" if item.recommendation else ""
        lines.append(f"- **{for_pr(item.id)}** {for_pr(item.title)}{recommendation} (asked {item.asked or '?'})")
    if waiting:
        # A decision asked in this PR exists only on its branch until the merge: answer it there.
        lines += ["", f"Answer on `{branch}`: edit DECISIONS.md on this branch on GitHub, or run "
                  f'`git switch {branch} && gitmem decision answer D-NNNN --answer "…"` and push. '
                  "The next run continues from the branch and sees the answer."]
    else:
        lines.append("none")
    return title, "\n".join(lines) + "\n"
