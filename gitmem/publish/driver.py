"""The merge driver `gitmem init` registers for the memory files, so that a local `git merge` and `git rebase`
resolve them by memory rules (docs/format.md, "Two writers").

git calls it with the base, ours (what is being built on: the current branch in a merge, the upstream in a
rebase) and theirs (the commit being merged or replayed) for LOG, NOW, DECISIONS and LESSONS. LOG and NOW:
both sides' entries and blocks land, theirs after ours with their cycles renumbered after ours (and an entry
that would go back in time dated again by the histories, its own heading kept: gitmem.publish.merge.brought_in).
DECISIONS and LESSONS: union by ID, theirs' new decisions (lessons) renamed after ours' highest when both sides
asked (added) one (an ID is a position: gitmem.memory.positions), answers and confirmations and all, and what
theirs' new NOW blocks say of them follows; where git says what it merges or replays
(gitio.merge_in_progress), the cycles their Asked, Happened and Confirmed lines name follow too, as `gitmem merge`
and the runner's rebase rename them.
Anything that does not merge by those rules is left to git's own line merge, conflict markers and all: the
driver never drops a line of either side, it only declines.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from gitmem.config import Config
from gitmem.memory import positions
from gitmem.publish import merge, renumber, sealed


@dataclass(frozen=True)
class Landing:
    """What git is doing as a whole while it calls the driver on one file: the side being landed moves by
    `shifts` (gitmem.memory.positions), its new entries counted from `fork`, where the two sides split."""

    shifts: positions.Shifts
    fork: Callable[[str], bytes | None]         # a file as the fork holds it


def merge_memory_file(config: Config, path: str, base: bytes, ours: bytes, theirs: bytes, *,
                      read_ours: Callable[[str], bytes | None],
                      landing: Callable[[Config], Landing | None] = lambda _: None) -> bytes | None:
    """The merged file, or None to leave the merge to git. `read_ours(path)` reads a file as ours has it
    (HEAD's): its LOG's last cycle is the one theirs' NOW blocks must follow, whatever git merges first.
    `landing(place)`: how the side being landed moves in that workspace, when git says what it lands (None: the
    IDs are read from the three texts, and no cycle moves in them). A rebase replays commit after commit: each
    one and its parent (the base here) are renamed alike, from the fork, as the runner's rebase renames them, so
    a later commit's change to an entry an earlier one added lands on that entry under its new ID."""
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
        merged = merge.merge_log(old, mine, other, merging=True) or merge.pick_log(old, mine, other)
        if merged is None:
            merged = _merge_sealed(path, base, ours, theirs)
    elif role == "now":
        last = max(positions.last_cycle(read_ours(place.path("log"))), renumber.last_now_cycle(ours))
        shift = positions.shift_after(last, renumber.new_now_cycles(base, theirs))
        moving = landing(place)
        ids = moving.shifts if moving is not None else positions.NO_SHIFTS
        merged = merge.merge_now(old, mine, renumber.renumber_now(base, theirs, shift, ids).decode("utf-8"))
    elif role in ("decisions", "lessons"):
        rename = positions.renumber_decisions if role == "decisions" else positions.renumber_lessons
        moving = landing(place)
        if moving is None:
            sides = [positions.SideFiles(None, data) if role == "decisions" else positions.SideFiles(None, None, data)
                     for data in (base, ours, theirs)]
            moving = Landing(positions.side_shifts(*sides), lambda _: base)
        known = moving.fork(path)
        old, other = (rename(known, data, moving.shifts).decode("utf-8") for data in (base, theirs))
        merged = (merge.merge_decisions if role == "decisions" else merge.merge_lessons)(old, mine, other)
    return merged.encode("utf-8") if merged is not None else None


def _merge_sealed(path: str, base: bytes, ours: bytes, theirs: bytes) -> str | None:
    """LOG.md where a side sealed (rules 6): git merges the volumes itself (a volume one side added, or both the
    same one, is a clean add), so LOG.md is merged as the sides unsealed against the base and then left without
    the entries they sealed. SealsDiverge when both sealed different entries."""
    joined = sealed.join_texts(path, base, ours, theirs)
    if joined is None:
        return None
    old, mine, other = (data.decode("utf-8") for data in (base, joined.ours, joined.theirs))
    merged = merge.merge_log(old, mine, other, merging=True) or merge.pick_log(old, mine, other)
    if merged is None:
        return None
    live = joined.seal(merged.encode("utf-8"))
    return live.decode("utf-8") if live is not None else None


@dataclass(frozen=True)
class DriverResult:
    clean: bool
    said: str = ""          # why memory rules did not merge it, when the human must act (a GM diagnostic)


def run_driver(cwd: Path, base: Path, ours: Path, theirs: Path, path: str,
               environ: Mapping[str, str]) -> DriverResult:
    """The driver as git runs it, in the repository at `cwd` on git's three temporary files: the merge of
    `path` written into `ours` by memory rules, or else git's own line merge there, conflict markers and all.
    Whether the merge is clean, and what to tell the human when it is not."""
    from gitmem import gitio
    from gitmem.config import load_config
    from gitmem.workspace import Workspace

    repo = gitio.open_repo(cwd)
    ws = Workspace.for_repo(repo, load_config(gitio.root(repo)))
    head = gitio.head_id(repo)
    doing = gitio.merge_in_progress(repo, environ)

    def landing(place: Config) -> Landing | None:
        """How the side git lands moves after the other, as `gitmem merge` and the runner's rebase move it."""
        if doing is None:
            return None
        fork = doing[0]
        sides = [positions.SideFiles(*(gitio.file_at(repo, rev, place.path(role))
                                       for role in ("log", "decisions", "lessons")))
                 for rev in doing]
        return Landing(positions.side_shifts(*sides), lambda rel: gitio.file_at(repo, fork, rel))

    said = ""
    try:
        merged = merge_memory_file(ws.config, path, base.read_bytes(), ours.read_bytes(), theirs.read_bytes(),
                                   read_ours=lambda rel: gitio.file_at(repo, head, rel), landing=landing)
    except sealed.SealsDiverge as err:
        merged, said = None, str(err)
    if merged is not None:
        ours.write_bytes(merged)
        return DriverResult(True)
    return DriverResult(gitio.merge_file_markers(repo, ours, base, theirs, ("ours", "base", "theirs")) and not said,
                        said)
