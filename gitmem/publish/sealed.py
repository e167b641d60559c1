"""Merges and rebases where a side sealed LOG (rules 6, gitmem.memory.volumes): joined, merged, sealed again.

A seal moves LOG.md's oldest entries into a new volume, so a side that sealed is no append of the fork's LOG.md,
and the append merge (gitmem.publish.merge.merge_log), the renumbering (gitmem.publish.renumber) and the check
of each side would all see history rewritten. So before the three-way merge every tree of it is joined: the
volumes that every tree holds alike stay shared, and each tree's newer volumes are unsealed back into its LOG.md
(`volumes.unseal`: their bytes, then LOG.md with its amendments naming their old lines), which is then an
append of the fork's like any other. After the merge the result is split again: the volumes of the side it lands
on stay as they are, byte for byte (they never change), and what is then due is sealed by the runner's own rule
(`volumes.plan`), so two sides that sealed the same entries merge to the same volumes, and two that sealed
different entries (a side that had more entries when it sealed) merge to one history sealed once.

The merge driver (gitmem.publish.driver) sees LOG.md alone while git merges the volumes as files: `join_texts`
finds each side's seal from the texts (`volumes.seal_shown`), merges as above, and leaves out what the sides
sealed; where git's add/add of a volume can't be avoided it raises SealsDiverge (GM319), never a half-merged LOG.

Pure: the git layer lists and reads the trees and writes what this returns (gitmem.gitio.rebase, Joiner).
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from gitmem import codes
from gitmem.checks.violation import Violation
from gitmem.errors import GitmemError
from gitmem.gitio import Changes, TreeFiles
from gitmem.memory import fences, log, volumes


@dataclass(frozen=True)
class SealedLog:
    """The Joiner for one LOG (a workspace's own): gitmem.gitio.rebase_onto and merge_into take it."""

    log_path: str

    @property
    def folders(self) -> tuple[str, ...]:
        return (volumes.volume_folder(self.log_path),)

    def joining(self, fork: TreeFiles, upstream: TreeFiles, ours: TreeFiles) -> Unsealing | None:
        """None when no side sealed since the fork: then nothing is read, and the merge is as before rules 6."""
        held = [self._held(side.listing) for side in (fork, upstream, ours)]
        if held[0] == held[1] == held[2]:
            return None
        return Unsealing(self.log_path, volumes.shared_count(*held))

    def _held(self, listing: Mapping[str, str]) -> dict[int, str]:
        return {number: listing[path] for number, path in volumes.numbered(self.log_path, listing)}


@dataclass(frozen=True)
class Unsealing:
    """The Joining of one merge: volumes 1..`shared` are the same in every tree of it, the rest are unsealed."""

    log_path: str
    shared: int

    def _newer(self, tree: TreeFiles) -> list[tuple[int, str]] | None:
        """The volumes of `tree` after the shared ones, in order; None when their numbers leave a gap (not a
        history gitmem wrote: the merge then sees the files as they are, and what does not merge conflicts)."""
        newer = [(n, path) for n, path in volumes.numbered(self.log_path, tree.listing) if n > self.shared]
        return newer if [n for n, _ in newer] == list(range(self.shared + 1, self.shared + 1 + len(newer))) else None

    def _volumes(self, tree: TreeFiles) -> list[tuple[int, bytes]] | None:
        newer = self._newer(tree)
        if newer is None:
            return None
        found = [(n, tree.read(path)) for n, path in newer]
        return [(n, data) for n, data in found if data is not None] if all(d is not None for _, d in found) else None

    def join(self, tree: TreeFiles) -> Changes:
        """`tree` with its newer volumes back in its LOG.md: the text its history reads from the shared ones on."""
        newer, sealed = self._newer(tree), self._volumes(tree)
        live = tree.read(self.log_path)
        if not newer or sealed is None or live is None:
            return {}
        text = volumes.unseal(live, self.log_path, sealed)
        if text is None:
            return {}
        return {self.log_path: text, **{path: None for _, path in newer}}

    def split(self, merged: TreeFiles, onto: TreeFiles) -> Changes | None:
        """The merged LOG.md sealed again: `onto`'s volumes kept as they are (None when they do not open the
        merged text: the merge then changes nothing), then what the seal rule finds due."""
        text = merged.read(self.log_path)
        kept = self._volumes(onto)
        if text is None:
            return {}
        if kept is None:
            return None
        live = volumes.sealed_from(text, self.log_path, kept) if kept else text
        if live is None:
            return None
        changes: dict[str, bytes | None] = {volumes.volume_path(self.log_path, n): data for n, data in kept}
        due = volumes.plan(live, self.log_path, self.shared + len(kept) + 1)
        if due is not None:
            changes.update((volumes.volume_path(self.log_path, n), data) for n, data in due.volumes)
            live = due.live
        changes[self.log_path] = live
        return changes


# -- the merge driver: git hands it LOG.md alone ------------------------------------------------------------------


class SealsDiverge(GitmemError):
    """A side of a `git merge` or `git rebase` sealed LOG entries the driver cannot join from LOG.md alone: both
    sides sealed, not the same entries (git's own merge of their volumes conflicts, add/add), or a seal took entries
    the base never had. No LOG.md fits; the message names the way out."""

    def __init__(self, log_path: str) -> None:
        self.violation = Violation.of(codes.LOG_SEALS_DIVERGE, log_path, 1,
                                      folder=volumes.volume_folder(log_path) + "/")
        super().__init__(f"{log_path}:1: {self.violation.code} {self.violation.message} "
                         f"(hint: {self.violation.hint})")


def sealed_cut(log_path: str, base: bytes, side: bytes) -> int | None:
    """Where in `base` a side's LOG.md takes up: 0 when it is an append of `base` (no seal), the offset of the first
    entry a seal left in LOG.md when the side sealed `base`'s oldest entries (then appended), None when neither.
    The driver sees LOG.md alone, not the volumes: a seal of the runner takes the oldest entries, which the base
    holds (it seals at SEAL_AT, with VOLUME_ENTRIES to spare), so the entries that left are `base`'s own bytes."""
    if log.append_verdict(base, side).ok:
        return 0
    shown = volumes.seal_shown(base, side, log_path)
    return shown[0] if shown is not None else None


@dataclass(frozen=True)
class JoinedTexts:
    """The driver's two sides of LOG.md unsealed against the base, and how much of the base the result seals."""

    log_path: str
    ours: bytes
    theirs: bytes
    cut: int            # offset in the base (and the merged text) where the merged LOG.md takes up

    def seal(self, merged: bytes) -> bytes | None:
        """The merged text with the entries the sides sealed left out again: LOG.md beside the volumes git merged."""
        first = volumes.entry_starts(merged)[0]
        body = merged[first:self.cut]
        return volumes.sealed_from(merged, self.log_path, [(1, volumes.title(self.log_path, 1) + body)])


def _lost_its_oldest(base: bytes, side: bytes) -> bool:
    """Whether a side's LOG.md no longer opens with the base's first entry: what a seal does, and no edit does."""
    starts, side_starts = volumes.entry_starts(base), volumes.entry_starts(side)
    return bool(starts) and (not side_starts or fences.line_starting_at(side, side_starts[0])
                             != fences.line_starting_at(base, starts[0]))


def join_texts(log_path: str, base: bytes, ours: bytes, theirs: bytes) -> JoinedTexts | None:
    """Both sides of a LOG.md merge as appends of the base, when a side sealed (None when neither did, or a side is
    neither an append nor a seal of the base: the merge is then git's). SealsDiverge when both sealed, not the same
    entries, or a seal took entries the base does not hold: git cannot merge such volumes with LOG.md alone."""
    cuts = [sealed_cut(log_path, base, side) for side in (ours, theirs)]

    def unsealed(side: bytes, cut: int) -> bytes:
        first = volumes.entry_starts(base)[0]        # a cut is an entry's offset: the base has entries
        text = volumes.unseal(side, log_path, [(1, volumes.title(log_path, 1) + base[first:cut])]) if cut else side
        assert text is not None          # the title is the one given
        return text

    if cuts[0] is None and cuts[1]:
        # A rebase replaying a seal after commits it already replayed: ours holds them renumbered, so it is no append
        # of the base (their parent), and the merge picks theirs onto ours (merge.pick_log). Ours sealed the same
        # entries (its LOG.md opens where theirs' does) or none yet (it opens with the base's oldest entries, byte
        # for byte); either way it reads whole against the base once those entries are back in it.
        cut = cuts[1]
        starts = volumes.entry_starts(ours)
        opens_at_cut = bool(starts) and fences.line_starting_at(ours, starts[0]) == fences.line_starting_at(base, cut)
        mine = unsealed(ours, cut) if opens_at_cut else ours
        if mine[:cut] != base[:cut]:
            raise SealsDiverge(log_path)
        return JoinedTexts(log_path, mine, unsealed(theirs, cut), cut)
    if any(cut is None and _lost_its_oldest(base, side) for cut, side in zip(cuts, (ours, theirs), strict=True)):
        raise SealsDiverge(log_path)
    if not any(cuts):
        return None
    if None in cuts:
        # A side sealed and the other is neither an append of the base nor a rebase's replay over renumbered commits
        # (the side that is no append is the one replayed: its volume holds entries under their old numbers). git's
        # line merge of LOG.md alone can't be right beside that volume, so the human gets the way out.
        raise SealsDiverge(log_path)
    ours_cut, theirs_cut = (cut or 0 for cut in cuts)
    if ours_cut and theirs_cut and ours_cut != theirs_cut:
        raise SealsDiverge(log_path)
    return JoinedTexts(log_path, unsealed(ours, ours_cut), unsealed(theirs, theirs_cut), max(ours_cut, theirs_cut))
