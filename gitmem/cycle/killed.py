"""What a cycle killed while its agent could act (SIGKILL, a job timeout, a reboot) left: its agent's processes,
and commits on its branch.

A runner killed outright never ends its agent, which runs in a process group of its own: it runs on in the work
tree, where it would write into the next cycle's tree or commit on the branch after it. The next cycle, finding
the dead runner's lock, ends such processes first (gitmem.cycle.reaper `orphaned_agents`).

The agent's window is the time from its start to the guard's restore: in it the agent may commit on the branch
under any name, and only the guard, after it, moves those commits off (`Kept`). A cycle killed inside the window
never gets there, and the next cycle on the same disk would start from the agent's commits and push them as
landed work. So the runner marks the window on disk (`open_window` before the agent runs, `close_window` after the
guard's restore), and the next cycle, holding the lock, finds a mark left open only when the cycle that made it
died in the window. It then keeps the branch's commits since that cycle's start on `gitmem/local/cycle-N`, as the
guard would have, and moves the branch back to the start. A work tree holding nothing uncommitted goes back with
it; anything uncommitted is left as it is, for the dirty-tree refusal to name. Nothing anyone wrote is lost.
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

from gitmem import gitio
from gitmem.config.nesting import loads_json
from gitmem.cycle import reaper
from gitmem.memory_writer import atomic_write

MARK_NAME = "cycle-agent-window.json"
MARK_BYTES = 4096               # a commit id and a branch name


@dataclass(frozen=True)
class SetAside:
    """What a killed cycle's agent left of git's state, undone: the commits it made (now on `kept`), and HEAD moved
    off `branch` (`strayed`: where it was). The branch, with HEAD on it, is back at `start`."""

    branch: str
    start: str
    kept: tuple[str, ...] = ()
    strayed: str | None = None

    def note(self) -> str:
        undone = [f"left HEAD {self.strayed}" if self.strayed else "",
                  f"left commits that never landed, kept on {', '.join(self.kept)}" if self.kept else ""]
        return (f"a cycle killed while its agent ran {' and '.join(part for part in undone if part)}; "
                f"{self.branch} is back at {self.start[:10]}, where that cycle started")


@dataclass(frozen=True)
class Leftovers:
    """What the next cycle did about a killed one: the agent processes it ended (and those it could not), and the
    commits it set aside."""

    ended: tuple[str, ...] = ()
    survivors: tuple[str, ...] = ()
    aside: SetAside | None = None

    def notes(self) -> list[str]:
        notes = []
        if self.ended:
            notes.append("ended the agent process(es) a killed cycle left running in this work tree: "
                         + ", ".join(self.ended))
        if self.survivors:
            notes.append("could not end the agent process(es) a killed cycle left running in this work tree: "
                         + ", ".join(self.survivors))
        return notes + ([self.aside.note()] if self.aside is not None else [])


def clean_up(repo: gitio.Repo, root: Path, *, runner_died: bool, cycle: int, remote: str) -> Leftovers:
    """With the lock held: end what a dead runner's agent left running (`runner_died`: the lock was stale), then set
    its commits aside (`set_aside`)."""
    ended: list[str] = []
    survivors: list[str] = []
    if runner_died:
        found = reaper.orphaned_agents(root)
        alive = reaper.end_orphans(found)
        ended = [p.describe() for p in found if p not in alive]
        survivors = [p.describe() for p in alive]
    return Leftovers(tuple(ended), tuple(survivors), set_aside(repo, cycle=cycle, remote=remote))


def _mark(repo: gitio.Repo) -> Path:
    return gitio.state_dir(repo) / MARK_NAME


def open_window(repo: gitio.Repo, *, start: str, branch: str) -> None:
    """Record that the agent may act from now on, on `branch` started at `start` (the runner holds the lock)."""
    atomic_write(_mark(repo), json.dumps({"start": start, "branch": branch}).encode("utf-8"))


def window_open(repo: gitio.Repo) -> bool:
    """Whether a cycle's agent may be acting in this checkout (or died acting): its window's mark is there. While it
    is, what anyone writes in `.git/gitmem` is the guard's to put back when the agent is done."""
    return os.path.lexists(_mark(repo))


def close_window(repo: gitio.Repo) -> None:
    """The guard has restored git state and refs: what the branch holds from here on is the runner's. Whatever
    stands at the mark goes (a folder or a link the agent made there too), never through a link."""
    from gitmem.confined import files

    mark = _mark(repo)
    files.remove_entry(mark.parent, mark.name)


def _left_open(repo: gitio.Repo) -> tuple[str, str] | None:
    """The window a dead cycle left open, read as a trusted file is (the agent can write `.git/gitmem`): a link, a
    FIFO or a device there is refused before it is opened to block, and no more than MARK_BYTES is read."""
    from gitmem.confined import files

    mark = _mark(repo)
    try:
        handle = files.open_read(mark.parent, mark.name)
        if handle is None:
            return None
        with handle:
            data = loads_json(handle.read(MARK_BYTES))
        return str(data["start"]), str(data["branch"])
    except (OSError, ValueError, KeyError, TypeError, files.FileRefused):
        close_window(repo)        # torn by the kill itself, before the agent could have started, or not the runner's
        return None


def set_aside(repo: gitio.Repo, *, cycle: int, remote: str) -> SetAside | None:
    """With the lock held: when the last cycle died in its agent's window, put git's state back as the guard would
    have: commits the agent made (on the branch, or at a detached HEAD) kept on free `gitmem/local/cycle-N`
    branches, the branch back at the start (recreated if the agent deleted it), HEAD on it. A work tree holding
    nothing uncommitted goes back too (all of it is in a commit kept); anything uncommitted stays as it is, for
    the dirty-tree refusal to name. None when the agent left nothing to undo."""
    from gitmem.publish.push import free_branch_name

    found = _left_open(repo)
    if found is None:
        return None
    start, branch = found
    ref = f"refs/heads/{branch}"
    try:
        gitio.resolve_revision(repo, start)
    except gitio.RepoError:       # the start is unknown here (a clone made since): nothing to move back onto
        close_window(repo)
        return None
    try:
        tip: str | None = gitio.resolve_revision(repo, ref)
    except gitio.RepoError:
        tip = None                # the agent deleted the branch
    head, on = gitio.head_id(repo), gitio.current_branch(repo)
    strayed = None if on == branch else (f"on branch {on}" if on else f"detached at {(head or '?')[:10]}")
    if tip == start and strayed is None:
        close_window(repo)
        return None
    clean = not gitio.dirty_files(repo)        # then everything the tree holds is in `head`
    keep = [commit for commit in dict.fromkeys((tip, head if on is None else None))
            if commit is not None and commit != start]
    kept = []
    for commit in keep:
        name = free_branch_name(repo, f"gitmem/local/cycle-{cycle}", remote)
        gitio.create_branch(repo, name, commit)
        kept.append(name)
    gitio.set_reference(repo, ref, start)
    gitio.switch_head(repo, branch)
    (gitio.reset_hard if clean else gitio.reset_mixed)(repo, start)
    close_window(repo)
    return SetAside(branch, start, tuple(kept), strayed)
