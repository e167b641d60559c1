"""Publish local memory commits: fetch, rebase onto the remote branch, push; retry with backoff.

Used by the cycle runner and the daily close. A rebase conflict never loses work: the local commits go
to a side branch on the remote (for example `gitmem/cycle-12`) and the caller exits with SALVAGED.

What is fetched is verified against the upstream this checkout knew (its remote-tracking branch before the
fetch): the new upstream must descend from it, and its new commits must keep memory history (`gitmem verify`).
A force-pushed or rewritten upstream is never built on: nothing is pushed, the work goes to a side branch, the
remote-tracking branch stays at the upstream it knew (so the next run refuses too, until a human decides), and
the caller exits with REWRITTEN.

A push the remote refuses for good (branch protection, a ruleset, a pre-receive hook: `gitio` tells it from a
race) is not retried: the work goes to a side branch the remote accepts, status REFUSED. Should that push fail
too, or every try of a race, the work is only on this machine's disk (status FAILED, exit LOCAL_ONLY), and the
messages say so: on a CI runner that disk is thrown away when the job ends.
"""
from __future__ import annotations

import time
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from enum import StrEnum
from functools import partial

from gitmem import codes, gitio
from gitmem.errors import ExitCode
from gitmem.secrets import scrub

SIDE_TRIES = 5       # side branch names tried when the remote already holds one (pushed there from elsewhere)


class PushStatus(StrEnum):
    """What a push came to. `exit_code` is what it makes of the command that pushed (the cycle, the close):
    the one place that maps one to the other."""

    PUSHED = "pushed"
    CONFLICT = "conflict"           # the rebase collided: the work is on a side branch
    REWRITTEN = "rewritten"         # the upstream dropped history this checkout knew: never built on
    REFUSED = "refused"             # the remote refused the branch for good: the work is on a side branch
    FAILED = "failed"               # every try failed, or the side branch's push: the work is only local
    NO_REMOTE = "no-remote"         # nothing to push to: the commit stays local

    @property
    def exit_code(self) -> ExitCode:
        if self is PushStatus.PUSHED:
            return ExitCode.OK
        if self is PushStatus.REWRITTEN:        # needs a human to decide
            return ExitCode.REWRITTEN
        if self is PushStatus.FAILED:           # nothing reached the remote: a runner's disk is thrown away
            return ExitCode.LOCAL_ONLY
        return ExitCode.SALVAGED                # safe on a branch, or local by choice (no remote at all)

    @property
    def reached_remote(self) -> bool:
        """Whether the remote answered, so that other branches can be pushed to it too."""
        return self in (PushStatus.PUSHED, PushStatus.CONFLICT, PushStatus.REWRITTEN, PushStatus.REFUSED)


@dataclass
class SyncResult:
    status: PushStatus
    commit: str | None = None           # what the remote branch now holds (pushed) or the local tip
    remote: str = ""
    branch: str = ""                    # the remote branch pushed to
    side_branch: str | None = None      # conflict, refused: where the work was pushed instead (or kept)
    conflicts: tuple[str, ...] = ()
    attempts: int = 0
    messages: list[str] = field(default_factory=list)
    renumbered: gitio.Renumbering | None = None     # our cycles took the numbers after the upstream's (renumber)
    left_out: tuple[str, ...] = ()      # our commits the rebase left out: the upstream held their change, or
    #                                     closed their day first (gitmem.publish.closed_first)

    @property
    def ok(self) -> bool:
        return self.status is PushStatus.PUSHED

    def report(self) -> PushReport:
        return PushReport(self.status, self.side_branch, self.commit, list(self.messages))


@dataclass(frozen=True)
class PushReport:
    """What a push came to, as the cycle and the close report it (their --json, the Action's outputs and job
    summary): one type for both."""

    status: PushStatus
    side_branch: str | None = None      # conflict, refused, rewritten, failed: where the work is instead
    commit: str | None = None           # what the remote branch now holds (pushed) or the local tip
    messages: list[str] = field(default_factory=list)


def known_upstream(repo: gitio.Repo, remote: str | None = None, local: str | None = None) -> str | None:
    """The remote-tracking tip of the upstream of `local` (default: the current branch): what this checkout last
    saw of it."""
    local = local or gitio.current_branch(repo)
    if local is None:
        return None
    default_remote, branch = gitio.upstream_of(repo, local)
    return gitio.remote_branch_oid(repo, remote or default_remote, branch)


def free_branch_name(repo: gitio.Repo, base: str, remote: str, *, taken: Collection[str] = ()) -> str:
    """`base`, or `base-2`, `base-3`… when a local or fetched remote branch of that name already exists, or the
    name is among `taken` (found taken on the remote otherwise)."""
    name, number = base, 1
    while name in taken or gitio.branch_exists(repo, name) or gitio.remote_branch_oid(repo, remote, name):
        number += 1
        name = f"{base}-{number}"
    return name


def _push_aside(repo: gitio.Repo, remote: str, base: str, tip: str) -> tuple[str, gitio.GitCommandError | None]:
    """Push `tip` to a free side branch named after `base` and keep it as a local branch too: (its name, None),
    or (the local name, the last push's error). A name the remote already holds is passed over: only the one
    branch being published was fetched, and whoever can write the remote (an agent with its credentials) can
    take `gitmem/cycle-N` ahead of time, which would leave the work on this disk alone. Never forced: their
    branch stays as it is."""
    first = name = free_branch_name(repo, base, remote)
    failure: gitio.GitCommandError | None = None
    taken: list[str] = []
    for _ in range(SIDE_TRIES):
        try:
            gitio.push(repo, remote, tip, name)
        except gitio.GitCommandError as err:
            failure = err
            if not err.rejected:            # refused for good, or no remote: another name fares no better
                break
            taken.append(name)
            name = free_branch_name(repo, base, remote, taken=taken)
            continue
        gitio.create_branch(repo, name, tip)
        return name, None
    gitio.create_branch(repo, first, tip)
    return first, failure


def publish(repo: gitio.Repo, *, conflict_branch: str, remote: str | None = None,
            branch: str | None = None, tries: int = 5, backoff: float = 1.0,
            sleep: Callable[[float], None] = time.sleep, resolver: gitio.Resolver | None = None,
            workspace: str | None = None, known: str | None = None,
            watch: tuple[str, str] | None = None, renumber: gitio.Renumberer | None = None,
            joiner: gitio.Joiner | None = None, leave: gitio.Leaver | None = None,
            before_rebase: Callable[[str, str | None], None] | None = None, local: str | None = None) -> SyncResult:
    """Fetch, rebase the current branch onto its remote branch, push. Up to `tries` attempts.

    A push rejected because someone pushed in between is retried after `backoff * 2**attempt` seconds.
    `resolver` (default: gitmem.publish.merge.resolver_for the config of `workspace`, the repo's own when None)
    merges memory files whose line merge conflicts: a decision answered while another was asked, a close and a
    cycle both appending to LOG. A named workspace's memory lives at its own paths: merged by the default
    workspace's config, its files would not be recognised as memory and a merge that has a rule would conflict.
    A rebase conflict pushes the unrebased local tip to `conflict_branch` (made unique), moves the local
    branch back to the remote tip (the work lives on the side branch, locally and on the remote), and
    returns status "conflict". An upstream that does not keep the history this checkout knew returns status
    "rewritten" (see the module doc); `workspace` names the memory verified. `known` is the upstream the
    caller saw when it started (default: the remote-tracking branch now), so that nothing done in between,
    by an agent or another fetch, moves what is trusted. `watch` is (an upstream tip, the DECISIONS path): commits
    that changed DECISIONS on the upstream since that tip are named in the messages (gitmem.publish.arrivals).
    `renumber` (default: gitmem.publish.renumber.renumberer_for the same config) gives our cycles the numbers
    after the upstream's when another writer took them first. `joiner` (default: gitmem.publish.sealed.SealedLog of
    the same LOG) joins what either side sealed into LOG's volumes before the rebase, and seals the result again.
    `leave` (default: gitmem.publish.closed_first.leaver_for the same config) names the closes of ours the rebase
    leaves out, as the upstream closed their day first.
    `before_rebase(upstream, left)` is shown each fetched and checked upstream before anything moves, with the tip
    this push's own last rebase left the branch at (None before its first): what it raises ends the push there (the
    close steps aside so when another close landed, and stops when its branch holds what it did not make:
    gitmem.close.push_race).
    The branch published is `local` (default: the one HEAD is on when the push starts), by name from then on: a
    human who switches branches while it rebases (seconds on a long history) keeps their checkout, and their branch
    is neither moved nor pushed (gitio.move_branch). A caller that checked HEAD before names the branch it checked,
    so that a switch between its check and this call publishes nothing else.
    """
    local = local or gitio.current_branch(repo)
    if local is None:
        raise gitio.RepoError("HEAD is detached; switch to a branch before pushing")
    default_remote, default_branch = gitio.upstream_of(repo, local)
    remote = remote or default_remote
    branch = branch or default_branch
    result = SyncResult(PushStatus.FAILED, remote=remote, branch=branch)
    if resolver is None or renumber is None or joiner is None or leave is None:
        from gitmem.config import load_config
        from gitmem.publish.closed_first import leaver_for
        from gitmem.publish.merge import resolver_for
        from gitmem.publish.renumber import renumberer_for
        from gitmem.publish.sealed import SealedLog

        # The memory merged is the workspace's: another workspace's files have other names.
        config = load_config(gitio.root(repo), workspace=workspace or None)
        resolver, renumber = resolver or resolver_for(config), renumber or renumberer_for(config)
        joiner, leave = joiner or SealedLog(config.path("log")), leave or leaver_for(config)
    if remote not in gitio.remote_names(repo):
        result.status = PushStatus.NO_REMOTE
        result.messages.append(f"there is no remote {remote!r}; the commit stays local")
        return result
    known = known or gitio.remote_branch_oid(repo, remote, branch)
    left: str | None = None         # where this push's last rebase left the branch
    for attempt in range(1, tries + 1):
        result.attempts = attempt
        try:
            upstream, rewrite = fetch_checked(repo, remote, branch, known, workspace)
            if rewrite:
                assert upstream is not None and known is not None
                return _keep(repo, result, local, conflict_branch, known, upstream, rewrite)
            known = upstream if upstream is not None else known
            if upstream is not None and watch is not None:
                watch = _watch(repo, result, watch, upstream)
            if upstream is not None and before_rebase is not None:
                before_rebase(upstream, left)
            if upstream is not None:
                before = _tip(repo, local)
                # Pushes by a CI token trigger no other workflow: the replayed commits are checked here, before
                # the branch moves onto them. What the rebase did is said only once it stands.
                rebased = gitio.rebase_onto(repo, f"refs/remotes/{remote}/{branch}", resolver, renumber, joiner,
                                            leave, branch=local, judge=partial(_verify, repo, upstream))
                if rebased.conflicts or rebased.broken:
                    return _divert(repo, result, local, conflict_branch, rebased.conflicts or rebased.broken,
                                   upstream, verified=bool(rebased.broken))
                if rebased.checkout_kept:
                    result.messages.append(checkout_kept(local))
                result.messages += _rebase_told(rebased, f"{remote}/{branch}")
                result.renumbered = rebased.renumbering or result.renumbered
                result.left_out += (*rebased.dropped, *rebased.left_out)       # no longer on the branch
                left = rebased.head or before
            # The commit checked and rebased, by id: a commit put on the branch since (HEAD elsewhere, seconds of
            # verify) is not published unchecked; it stays on the branch for the next push.
            pushing = left if upstream is not None and left is not None else _tip(repo, local)
            gitio.push(repo, remote, pushing, branch)
        except gitio.BranchNotMoved as err:     # a human's change in this checkout, or their commit: theirs stays
            result.messages.append(f"attempt {attempt}: {scrub(str(err))}")
            result.messages.append(only_local(result.remote, (local,)))
            result.commit = _tip(repo, local)
            return result
        except gitio.GitCommandError as err:
            result.messages.append(f"attempt {attempt}: {scrub(str(err))}")
            if err.refused:             # the same answer on every try: no retry, a branch the remote accepts
                return _refused(repo, result, local, conflict_branch)
            if attempt < tries:
                sleep(backoff * 2 ** (attempt - 1))
            continue
        result.status = PushStatus.PUSHED
        result.commit = pushing
        return result
    result.commit = _tip(repo, local)
    result.messages.append(f"gave up after {tries} attempts")
    result.messages.append(only_local(result.remote, (local,)))
    return result


def _rebase_told(rebased: gitio.RebaseResult, where: str) -> list[str]:
    """What a rebase that stands did to the branch, one line each."""
    told = [rebased.renumbering.describe()] if rebased.renumbering is not None else []
    if rebased.dropped:
        told.append(f"left out {len(rebased.dropped)} commit(s) whose change {where} already holds")
    if rebased.leaving is not None:
        told.append(rebased.leaving.describe())
    if rebased.replayed:
        told.append(f"rebased {rebased.replayed} commit(s) onto {where}")
    return told


# The branches only a run makes (salvage, local, proposal, side: `gitmem/…`); the cycle's guard removes any
# the agent makes there and puts back any it moves.
RUNNER_NAMESPACE = "refs/heads/gitmem/"


def push_new_branches(repo: gitio.Repo, remote: str, before: Collection[str], *,
                      skip: Collection[str] = ()) -> tuple[list[str], list[str]]:
    """Push every branch of the run's namespace that was not among `before` (the branches a run made: salvage,
    local, proposal, side) to `remote`, each under its own name, never forced: (the names pushed, one message per
    branch). No work lives only on a runner's disk, which is thrown away when the job ends. A branch the agent
    made under another name (`deploy/production`, `release/v9`) is never pushed: on the forge, that push would run
    the human's deploy or release workflows on whatever the agent put there."""
    pushed: list[str] = []
    messages: list[str] = []
    for ref in gitio.references(repo, RUNNER_NAMESPACE):
        name = ref.removeprefix("refs/heads/")
        if ref in before or name in skip:
            continue
        try:
            gitio.push(repo, remote, name, name)
        except gitio.GitCommandError as err:
            messages.append(f"could not push {name}: {scrub(str(err))}")
            messages.append(only_local(remote, (name,)))
            continue
        pushed.append(name)
        messages.append(f"pushed {name} to {remote}")
    return pushed, messages


PROTECTED_HINT = ("for a protected default branch, use pull-request mode (the Action's `push-mode: pull-request`, "
                  "or `gitmem github prepare` and `gitmem github pr` around the cycle and the close)")


def only_local(remote: str, branches: tuple[str, ...]) -> str:
    """The loud line for work that reached no remote."""
    named = f"local branch{'es' if len(branches) > 1 else ''} {' and '.join(branches)}"
    return (f"NOTHING REACHED {remote.upper()}: the work is only on this machine's disk, on {named}; push it "
            "before this checkout is thrown away (a CI runner's is, when the job ends)")


def _refused(repo: gitio.Repo, result: SyncResult, local: str, fallback: str) -> SyncResult:
    """The remote refused the branch for good: push the work to a free `fallback` name instead. The local
    branch keeps it too (nothing is reset): the next run builds on it, and a merge of the side branch lands it."""
    tip = _tip(repo, local)
    where = f"{result.remote}/{result.branch}"
    result.messages.append(f"{where} refused the push for good (branch protection, a ruleset or a hook), so it "
                           "was not retried")
    name, err = _push_aside(repo, result.remote, fallback, tip)
    result.side_branch, result.commit = name, tip
    if err is not None:
        result.messages.append(f"could not push {name} either: {scrub(str(err))}")
        result.messages.append(only_local(result.remote, (local, name)))
        return result                   # FAILED: the exit code says the work is only local
    result.status = PushStatus.REFUSED
    result.messages.append(f"the work is on branch {name} ({result.remote} and local); merge it into "
                           f"{result.branch} through a pull request. {PROTECTED_HINT[0].upper()}{PROTECTED_HINT[1:]}")
    return result


def _watch(repo: gitio.Repo, result: SyncResult, watch: tuple[str, str], upstream: str) -> tuple[str, str]:
    """Name the commits that changed DECISIONS on the upstream since `watch`'s tip; the tip moves to `upstream`."""
    from gitmem.publish.arrivals import decisions_arrived, describe_arrivals

    since, path = watch
    if upstream != since and gitio.is_ancestor(repo, since, upstream):
        arrived = decisions_arrived(repo, since, upstream, path)
        if arrived:
            result.messages.append(describe_arrivals(arrived, f"{result.remote}/{result.branch}", path))
    return upstream, path


def _tip(repo: gitio.Repo, local: str) -> str:
    """What the branch being published holds now, whichever branch HEAD is on."""
    if not gitio.branch_exists(repo, local):
        raise gitio.RepoError("nothing to push: no commits yet")
    return gitio.resolve_revision(repo, f"refs/heads/{local}")


def checkout_kept(local: str) -> str:
    """The line for a branch moved while HEAD was on another one."""
    return (f"HEAD left {local} while the push worked on it: {local} moved, the checkout (HEAD, index and work "
            f"tree) was left as it is; `git switch {local}` to see what was published")


def _move(repo: gitio.Repo, result: SyncResult, local: str, target: str, *, expected: str) -> bool:
    """Move `local` from `expected` to `target` (gitio.move_branch), saying so when the checkout stayed. False, and
    why in the messages, when the branch stayed where it was (gitio.BranchNotMoved: it moved meanwhile, or the
    checkout holds a human's change the move would overwrite)."""
    try:
        followed = gitio.move_branch(repo, local, target, expected=expected)
    except gitio.BranchNotMoved as err:
        result.messages.append(str(err))
        return False
    if not followed:
        result.messages.append(checkout_kept(local))
    return True


# What a rewrite of memory history looks like to `gitmem verify`: anything else on the upstream (a format slip
# in a human's commit) is theirs to fix and does not stop a cycle.
REWRITE_CODES = frozenset(code.code for code in (
    codes.LOG_NOT_APPEND_ONLY, codes.DECISION_RESOLVED_REWRITTEN, codes.DECISION_ID_VANISHED, codes.LESSON_VANISHED,
    codes.RULE_VANISHED, codes.HISTORY_REWRITTEN, codes.MEMORY_REMAPPED,
    # With trust.signed_answers, an answer nobody trusted signed is not a human's word: not built on either.
    codes.DECISION_ANSWER_UNSIGNED))


def fetch_checked(repo: gitio.Repo, remote: str, branch: str, known: str | None,
                  workspace: str | None) -> tuple[str | None, str]:
    """Fetch `branch` of `remote`: its tip (None when it has none), and why that tip rewrites the history `known`
    (the upstream this checkout last saw) had, "" when it only adds to it. A rewriting tip is not kept as the
    remote-tracking branch, which is put back at `known`: whatever runs next (a push, a close, a later cycle) must
    not take the rewritten history for the upstream this checkout last saw. Raises gitio.GitCommandError."""
    upstream = gitio.fetch(repo, remote, branch)
    if upstream is None or known is None or upstream == known:
        return upstream, ""
    rewrite = _rewrite_reason(repo, known, upstream, workspace)
    if rewrite:
        gitio.set_remote_branch(repo, remote, branch, known)
    return upstream, rewrite


def fetched_upstream(repo: gitio.Repo, workspace: str | None, local: str | None = None) -> tuple[str, str] | None:
    """(tip, `remote/branch`) of the upstream of `local` (default: the current branch), fetched and held to memory
    history (`fetch_checked`); None when there is no such branch (HEAD detached), the upstream is no remote's, the
    fetch fails, the remote branch has no tip, or the tip rewrites what this checkout last saw (the push's to
    refuse)."""
    branch = local or gitio.current_branch(repo)
    if branch is None:
        return None
    remote, upstream_branch = gitio.upstream_of(repo, branch)
    if remote not in gitio.remote_names(repo):
        return None
    known = gitio.remote_branch_oid(repo, remote, upstream_branch)
    try:
        upstream, rewrite = fetch_checked(repo, remote, upstream_branch, known, workspace)
    except gitio.GitCommandError:
        return None
    return None if upstream is None or rewrite else (upstream, f"{remote}/{upstream_branch}")


def _rewrite_reason(repo: gitio.Repo, known: str, upstream: str, workspace: str | None) -> str:
    """Why `upstream` rewrites the history `known` had; "" when it only adds to it."""
    from gitmem.checks.check_and_verify import verify_range
    from gitmem.config import Config
    from gitmem.workspace import Workspace

    if not gitio.is_ancestor(repo, known, upstream):
        return (f"it no longer contains {known[:10]}, the upstream this checkout last saw: history was rewritten "
                "(a force-push)")
    ws = Workspace.for_repo(repo, Config(workspace=workspace or ""))
    found = [v for v in verify_range(ws, known, upstream).violations if v.code in REWRITE_CODES]
    if not found:
        return ""
    first = "; ".join(f"{v.path}:{v.line}: {v.code} {v.message}" for v in found[:3])
    return f"its new commits rewrite memory history or answer unsigned: {first}"


def _keep(repo: gitio.Repo, result: SyncResult, local: str, conflict_branch: str, known: str, upstream: str,
          why: str) -> SyncResult:
    """Refuse to build on a rewritten upstream: push nothing to it, keep the local work on a side branch."""
    tip = _tip(repo, local)
    where = f"{result.remote}/{result.branch}"
    result.messages.append(f"refused to push: {where} was rewritten since this checkout last saw it ({known[:10]}, "
                           f"now {upstream[:10]}): {why}")
    name, err = _push_aside(repo, result.remote, conflict_branch, tip)
    result.status, result.side_branch, result.commit = PushStatus.REWRITTEN, name, tip
    kept = f"local and {result.remote}"
    if err is not None:
        result.messages.append(f"could not push {name}: {scrub(str(err))}")
        result.messages.append(only_local(result.remote, (name,)))
        kept = "local"
    result.messages.append(
        f"nothing was pushed to {where}; this cycle's work is on branch {name} ({kept}) and local "
        f"{local} is unchanged. A human decides: restore the old history on {where}, or "
        f"accept the rewrite here with `git fetch {result.remote} && git reset --hard {where}` and bring the work "
        f"back from {name}")
    return result


def _verify(repo: gitio.Repo, upstream: str, tip: str) -> tuple[str, ...]:
    """Memory violations in the replayed commits up to `tip`, one line each (empty when they are clean)."""
    from gitmem.checks.check_and_verify import verify_range
    from gitmem.config import Config
    from gitmem.workspace import Workspace

    found = [v for v in verify_range(Workspace.for_repo(repo, Config()), upstream, tip).violations if v.is_error]
    return tuple(f"{v.path}:{v.line}: {v.code} {v.message} (after rebase)" for v in found)


def _divert(repo: gitio.Repo, result: SyncResult, local: str, conflict_branch: str, conflicts: tuple[str, ...],
            upstream: str, *, verified: bool) -> SyncResult:
    """Keep the local work on a side branch. `conflicts` are paths that did not merge, or (`verified`) the
    lines of `gitmem verify` that the rebased commits failed."""
    tip = _tip(repo, local)
    result.messages.append(f"the rebased commits fail `gitmem verify`: {'; '.join(conflicts)}" if verified else
                           f"rebase onto {result.remote}/{result.branch} conflicts in {', '.join(conflicts)}")
    name, err = _push_aside(repo, result.remote, conflict_branch, tip)
    result.status = PushStatus.CONFLICT
    result.side_branch = name
    result.conflicts = conflicts
    result.commit = tip
    if err is not None:
        # The work stays on the local side branch and on the local branch: nothing is moved.
        result.messages.append(f"could not push {name} either: {scrub(str(err))}")
        result.messages.append(only_local(result.remote, (local, name)))
        result.status = PushStatus.FAILED
        return result
    now = (f"local {local} now matches {result.remote}/{result.branch}" if _move(repo, result, local, upstream,
                                                                                 expected=tip)
           else f"local {local} holds it too")
    result.messages.append(f"the work is on branch {name} (local and {result.remote}); {now}; "
                           f"land it by memory rules with `git fetch {result.remote} && gitmem merge "
                           f"{result.remote}/{name}`")
    return result
