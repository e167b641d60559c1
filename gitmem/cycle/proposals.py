"""An agent's edits to protected paths never land on the branch silently.

Two routes, by what the path is:
- a protected file or folder (gitmem.yaml, .github/, .claude/, hook configs, the secrets allowlist…): the edit
  goes to its own branch, `gitmem/proposal/cycle-N`, and a Pending decision asks the human whether to merge it;
  the work tree gets HEAD's version back. Real tasks sometimes need such an edit (a workflow, a config key), and
  this way it happens when the human says so. If the decision cannot be written, the branch still holds the
  edit and the Evidence says so.
- the gitmem-managed block in CLAUDE.md or AGENTS.md: reverted in place and recorded in Evidence. Only
  `gitmem init --agent` writes that block; the agent's edits to the user's text around it stay.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from gitmem import gitio
from gitmem.agents import protected
from gitmem.checks.inputs import CheckInput
from gitmem.checks.owned_paths import wrong_kind
from gitmem.checks.violation import Violation
from gitmem.confined import files
from gitmem.confined.files import FileRefused
from gitmem.cycle.agent_guard import CycleGuard
from gitmem.cycle.messages import commit_message, quoted_path
from gitmem.memory_writer import MemoryWriter, WriteRefused
from gitmem.workspace import Clock

SHOWN = 8          # protected paths named in a note or a decision; the branch has them all


@dataclass
class HeldBack:
    notes: list[str] = field(default_factory=list)      # for LOG Evidence
    branch: str | None = None                           # the proposal branch, when one was made
    decision: str | None = None                         # the decision that asks about it


def hold_back(guard: CycleGuard, paths: list[str], *, clock: Clock | None, remote: str | None) -> HeldBack:
    ws = guard.ws
    result = HeldBack()
    for path in paths:
        if protected.has_managed_blocks(path) and not guard.protection.covers(path):
            _keep_blocks(guard, path, result)
    wrong = _made_wrong_kind(guard)
    result.notes += [f"{v.path}:{v.line}: {v.code} {v.message}" for v in wrong]
    held = [path for path in paths if guard.protection.covers(path) or any(_within(path, v.path) for v in wrong)]
    if not held:
        return result
    from gitmem.publish.push import free_branch_name

    repo = ws.repo
    name = free_branch_name(repo, f"gitmem/proposal/cycle-{guard.cycle}",
                            remote or gitio.upstream_of(repo, guard.branch)[0])
    listing = ", ".join(quoted_path(path) for path in held[:SHOWN]) + (f" and {len(held) - SHOWN} more"
                                                                 if len(held) > SHOWN else "")
    gitio.commit_worktree(repo, held, commit_message(guard.cycle, "proposal", f"changes to {listing}", "proposal"),
                          author=ws.config.agent.identity, ref=f"refs/heads/{name}")
    gitio.restore_paths(repo, held)
    result.branch = name
    memory = MemoryWriter(ws, clock=clock, author_email=ws.config.agent.email)
    try:
        item = memory.ask_decision(
            title=f"Apply the agent's change to protected files from cycle {guard.cycle}?",
            context=(f"The agent changed {listing}. These paths steer gitmem, git, CI or the tools on your "
                     f"machine, so the runner kept the change off {guard.branch}, on branch {name}."),
            options=(f"apply it: review with `git diff {guard.branch}...{name}`, then `git merge {name}`; "
                     f"or drop it: `git branch -D {name}`"),
            recommendation="Review the diff; merge it only if the change is what the task needed.",
            cycle=guard.cycle)
    except WriteRefused as err:
        result.notes.append(f"moved the agent's changes to protected paths ({listing}) to branch {name}; no "
                            f"decision could be asked ({err}), so look at that branch")
        return result
    result.decision = item.id
    result.notes.append(f"moved the agent's changes to protected paths ({listing}) to branch {name} and asked "
                        f"{item.id} whether to apply them")
    return result


def _made_wrong_kind(guard: CycleGuard) -> list[Violation]:
    """Where the agent made a path gitmem owns a link, a submodule or the wrong kind (GM908,
    gitmem.checks.owned_paths): refused like an edit of a protected path, whether or not one covers it (the
    `history/` folder of a project that keeps files of its own there is not one). Memory files, and folders on the
    way to them, are left to their own routes: the cycle writes its own (one the agent made no regular file fails
    the cycle, and its work is salvaged), and another workspace's are put back (gitmem.cycle.foreign)."""
    ws = guard.ws
    start = gitio.commit_snapshot(ws.repo, guard.start, [])
    now = gitio.worktree_snapshot(ws.root, repo=ws.repo)
    memory = [path for paths in ws.config.workspace_paths().values() for path in paths.values()]
    return [v for v in wrong_kind(CheckInput(ws.config, start, now))
            if not any(_within(path, v.path) for path in memory)]


def _within(path: str, entry: str) -> bool:
    """Whether `path` is `entry` or lies under it."""
    return path == entry or path.startswith(f"{entry}/")


def _keep_blocks(guard: CycleGuard, path: str, result: HeldBack) -> None:
    ws = guard.ws
    before = gitio.file_at(ws.repo, guard.start, path)
    try:
        after = files.read_bytes(ws.root, path)
    except FileRefused:           # a link, or a path through a folder the agent swapped for a link: not its text
        after = None
    fixed = protected.keep_blocks(_text(before), _text(after) if after is not None else None)
    if fixed is None:
        return
    data = fixed.encode("utf-8", "surrogateescape")
    try:
        files.write_bytes(ws.root, path, data)
    except FileRefused:           # put back as HEAD has it first: real folders on the way, no link to write through
        gitio.restore_paths(ws.repo, [path])
        files.write_bytes(ws.root, path, data)
    result.notes.append(f"reverted the agent's edit of the gitmem-managed block in {path} (only `gitmem init "
                        "--agent` writes it; the text around it is kept)")


def _text(data: bytes | None) -> str:
    return (data or b"").decode("utf-8", "surrogateescape")
