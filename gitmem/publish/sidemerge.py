"""`gitmem merge BRANCH`: land a side branch (a cycle's `gitmem/cycle-N`, a salvage or a close branch, a human's
session branch) on the current branch by memory rules, as one merge commit.

The other side's LOG entries and NOW blocks go after ours, its cycles renumbered to follow our last one
(gitmem.publish.renumber); DECISIONS and the rest merge as the push does (gitmem.publish.merge). The merge is
made in memory and checked as `gitmem verify` would before the branch moves: a merge that does not pass, or a
path that does not merge by rule, changes nothing and says what to do instead. A close of the branch's of a day the
current branch closed first (a close whose push failed, kept on a side branch) is left out of the merge, with every
close of the branch's after it, as a push's replay leaves it out (gitmem.publish.closed_first): a day is in one report.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from gitmem import codes, gitio
from gitmem.checks import generation
from gitmem.checks.violation import Violation
from gitmem.errors import GitmemError
from gitmem.workspace import Workspace


class MergeRefused(GitmemError):
    """The branch was not merged; nothing changed. The message says why and what to do; `usage` when the
    command was asked wrong (no such branch, no author), not refused by a memory rule."""

    def __init__(self, message: str, *, usage: bool = False, violations: Sequence[Violation] = ()) -> None:
        super().__init__(message, violations)
        self.usage = usage


@dataclass
class SideMerge:
    branch: str
    commit: str | None = None           # the merge commit (or the tip fast-forwarded to); None when up to date
    messages: list[str] = field(default_factory=list)


def merge_branch(ws: Workspace, branch: str) -> SideMerge:
    """Merge `branch` (a local branch, a remote-tracking one, any revision) into the current branch."""
    repo = ws.repo
    local, head = gitio.current_branch(repo), gitio.head_id(repo)
    if local is None or head is None:
        raise MergeRefused("HEAD is not on a branch with commits; switch to the branch to merge into", usage=True)
    try:
        theirs = gitio.resolve_revision(repo, branch)
    except gitio.RepoError:
        raise MergeRefused(f"no branch or revision {branch!r} here; `git fetch` first if it is on the remote, "
                           f"then name it as origin/{branch}", usage=True) from None
    dirty = gitio.dirty_files(repo)
    if dirty:
        listing = ", ".join(path for path, _ in dirty[:5])
        raise MergeRefused(f"the work tree has uncommitted changes ({listing}); commit or stash them first")
    done = merged_commit(ws, head, theirs, branch)
    if done.commit is None:
        done.messages.append(f"{branch} is already in {local}; nothing to merge")
        return done
    gitio.reset_hard(repo, done.commit)
    done.messages.append(f"merged {branch} into {local}: {done.commit[:10]}")
    return done


def merged_commit(ws: Workspace, ours: str, theirs: str, branch: str) -> SideMerge:
    """The commit that lands `theirs` (named `branch`) on `ours` by memory rules, made in memory and verified: a
    merge commit (parents `ours`, `theirs`), `theirs` itself when it is built on `ours`, None when `ours` holds it
    already. No branch, index or work tree moves; MergeRefused when it does not merge or would not pass `verify`."""
    from gitmem.checks.check_and_verify import verify_range
    from gitmem.publish.closed_first import leaver_for
    from gitmem.publish.merge import resolver_for
    from gitmem.publish.renumber import renumberer_for
    from gitmem.publish.sealed import SealedLog

    repo = ws.repo
    done = SideMerge(branch)
    if gitio.is_ancestor(repo, theirs, ours):
        return done
    identity = gitio.user_identity(repo)
    if identity is None:
        raise MergeRefused("git knows no author: set user.name and user.email (git config), then merge", usage=True)
    if gitio.is_ancestor(repo, ours, theirs):
        tip = theirs                   # built on ours already: its numbers follow ours as they are
        done.messages.append(f"fast-forward to {branch} ({theirs[:10]})")
    else:
        resolver = resolver_for(ws.config, merging=True)
        try:
            merged = gitio.merge_into(repo, ours, theirs, _message(branch), identity, resolver,
                                      renumberer_for(ws.config, log_too=False), SealedLog(ws.config.path("log")),
                                      leaver_for(ws.config))
        except gitio.RepoError as err:      # a merge commit among the ones after a close it leaves out
            raise MergeRefused(f"{err}; nothing was changed") from None
        if merged.conflicts:
            raise MergeRefused(f"{branch} does not merge by memory rules; nothing was changed",
                               violations=[Violation.of(codes.SIDE_MERGE_CONFLICT, path, 1, path=path, branch=branch)
                                           for path in merged.conflicts])
        assert merged.commit is not None
        tip = merged.commit
        if merged.leaving is not None:      # a day is in one report, whichever way the branch lands
            into = gitio.current_branch(repo) if ours == gitio.head_id(repo) else None
            done.messages.append(merged.leaving.describe(of=f"of {branch}", by=into or ours[:10]))
        if merged.renumbering is not None:
            done.messages.append(merged.renumbering.describe().replace("this side", branch))
    # By the commits' own dates, as a cycle about to start verifies: an entry of the branch that a fast clock dated
    # ahead of this one is that writer's to answer for (GM309 in the required check), never a merge this clock refuses.
    broken = [v for v in verify_range(ws, ours, tip, by_this_clock=False).violations if v.is_error]
    if broken:
        raise MergeRefused("the merge would not pass `gitmem verify`; nothing was changed", violations=broken)
    done.commit = tip
    return done


def _message(branch: str) -> str:
    return (f"gitmem: merge {branch}\n\nIts LOG entries and NOW blocks follow ours, renumbered by memory rules.\n\n"
            f"{generation.trailer()}\n")
