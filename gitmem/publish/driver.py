"""The merge driver `gitmem init` registers for the memory files, so that a local `git merge` and `git rebase`
resolve them by memory rules (docs/format.md, "Two writers").

git calls it with the base, ours (what is being built on: the current branch in a merge, the upstream in a
rebase) and theirs (the commit being merged or replayed) for LOG, NOW, DECISIONS and LESSONS. LOG and NOW:
both sides' entries and blocks land, theirs after ours with their cycles renumbered after ours (and an entry
that would go back in time at the merge's time, its own heading kept: gitmem.publish.merge.brought_in).
DECISIONS and LESSONS: union by ID, theirs' new decisions (lessons) renamed after ours' highest when both sides
asked (added) one (an ID is a position: gitmem.memory.positions), answers and confirmations and all, and what
theirs' new NOW blocks say of them follows; where git names the commit it merges or replays
(gitio.commit_being_merged), the cycles their Asked, Happened and Confirmed lines name follow too, as `gitmem merge`
and the runner's rebase rename them.
Anything that does not merge by those rules is left to git's own line merge, conflict markers and all: the
driver never drops a line of either side, it only declines.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path

from gitmem.config import Config
from gitmem.memory import positions
from gitmem.memory.text import Timestamp
from gitmem.publish import merge, renumber

NAME = "gitmem"     # `merge=gitmem` in .gitattributes, `merge.gitmem.driver` in .git/config


def merge_memory_file(config: Config, path: str, base: bytes, ours: bytes, theirs: bytes, *,
                      now: Callable[[], Timestamp], read_ours: Callable[[str], bytes | None],
                      commit_shifts: Callable[[Config], positions.Shifts | None] = lambda _: None) -> bytes | None:
    """The merged file, or None to leave the merge to git. `read_ours(path)` reads a file as ours has it
    (HEAD's): its LOG's last cycle is the one theirs' NOW blocks must follow, whatever git merges first.
    `commit_shifts(place)`: how the commit merged moves after ours in that workspace, when the driver knows that
    commit (None: the IDs are read from the three texts, and no cycle moves in them)."""
    try:
        texts = [data.decode("utf-8") for data in (base, ours, theirs)]
    except UnicodeDecodeError:
        return None
    old, mine, other = texts
    places = [config] + [config.with_workspace(name) for name, _ in config.workspaces]
    roles = {place.path(role): (role, place) for place in places for role in ("log", "now", "decisions", "lessons")}
    role, place = roles.get(path, ("", config))
    merged: str | None = None
    if role == "log":
        # A rebase replaying a second commit: ours holds the first one renumbered, so it is no append of the
        # base; the base's own entries are all in theirs, and ours is kept whole.
        merged = merge.merge_log(old, mine, other, merged_at=now) or merge.pick_log(old, mine, other, merged_at=now)
    elif role == "now":
        last = max(positions.last_cycle(read_ours(place.path("log"))), renumber.last_now_cycle(ours))
        shift = positions.shift_after(last, renumber.new_now_cycles(base, theirs))
        ids = commit_shifts(place) or positions.NO_SHIFTS
        merged = merge.merge_now(old, mine, renumber.renumber_now(base, theirs, shift, ids).decode("utf-8"))
    elif role == "decisions":
        shifts = commit_shifts(place) or positions.side_shifts(
            *(positions.SideFiles(None, data) for data in (base, ours, theirs)))
        renamed = positions.renumber_decisions(base, theirs, shifts).decode("utf-8")
        merged = merge.merge_decisions(old, mine, renamed)
    elif role == "lessons":
        shifts = commit_shifts(place) or positions.side_shifts(
            *(positions.SideFiles(None, None, data) for data in (base, ours, theirs)))
        renamed = positions.renumber_lessons(base, theirs, shifts).decode("utf-8")
        merged = merge.merge_lessons(old, mine, renamed)
    return merged.encode("utf-8") if merged is not None else None


def run_driver(cwd: Path, base: Path, ours: Path, theirs: Path, path: str, environ: Mapping[str, str]) -> bool:
    """The driver as git runs it, in the repository at `cwd` on git's three temporary files: the merge of
    `path` written into `ours` by memory rules, or else git's own line merge there, conflict markers and all.
    Whether the merge is clean."""
    from gitmem import gitio
    from gitmem.config import load_config
    from gitmem.workspace import Workspace

    repo = gitio.open_repo(cwd)
    ws = Workspace.for_repo(repo, load_config(gitio.root(repo)))
    clock = ws.clock()
    head = gitio.head_id(repo)
    merging = gitio.commit_being_merged(repo, environ)

    def commit_shifts(place: Config) -> positions.Shifts | None:
        """How the commit git merges (or replays) moves after HEAD, as `gitmem merge` and the rebase move it."""
        if merging is None or head is None:
            return None
        sides = [positions.SideFiles(*(gitio.file_at(repo, rev, place.path(role))
                                       for role in ("log", "decisions", "lessons")))
                 for rev in (merging[0], head, merging[1])]
        return positions.side_shifts(*sides)

    merged = merge_memory_file(ws.config, path, base.read_bytes(), ours.read_bytes(), theirs.read_bytes(),
                               now=lambda: Timestamp.from_datetime(clock()),
                               read_ours=lambda rel: gitio.file_at(repo, head, rel), commit_shifts=commit_shifts)
    if merged is not None:
        ours.write_bytes(merged)
        return True
    return gitio.merge_file_markers(repo, ours, base, theirs, ("ours", "base", "theirs"))
