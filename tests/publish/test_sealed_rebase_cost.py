"""A rebase where a side sealed (rules 6) joins each tree once: a tree that sealed reads and unseals all of its newer
volumes (25 at 10x when a push races the first seal of an old LOG, 269 at 100x), and the rebase asks for the same
trees again and again (each replayed commit's parent, the tip, the renumbering's reads). Measured with
`benchmarks` at 10x: the racing push went from 2.17 s to 1.41 s of CPU."""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from gitmem import gitio
from gitmem.config import Config
from gitmem.gitio import Changes, TreeFiles
from gitmem.publish.merge import resolver_for
from gitmem.publish.renumber import renumberer_for
from gitmem.publish.sealed import SealedLog, Unsealing
from tests.publish.test_sealed_merges import VOLUME_1, entries, entry, push, sealed, setup
from tests.support.cycle_support import file_at
from tests.support.gitcli import git as run_git
from tests.support.helpers import GitRepo


class _JoinedText(bytes):
    """A LOG text a join wrote, counted while anything holds it."""

    alive = 0

    def __del__(self) -> None:
        type(self).alive -= 1


@dataclass(frozen=True)
class CountedUnsealing:
    inner: Unsealing
    joined: Counter[tuple[object, ...]] = field(default_factory=Counter)
    held: list[int] = field(default_factory=list)       # how many joined texts are held, at each join

    def join(self, tree: TreeFiles) -> Changes:
        """Counted by what the tree holds: its volumes and its LOG.md."""
        self.joined[(*sorted(tree.listing.items()), tree.read("LOG.md"))] += 1
        changes = dict(self.inner.join(tree))
        text = changes.get("LOG.md")
        if text is not None:
            _JoinedText.alive += 1
            changes["LOG.md"] = _JoinedText(text)
            self.held.append(_JoinedText.alive)
        return changes

    def split(self, merged: TreeFiles, onto: TreeFiles) -> Changes | None:
        return self.inner.split(merged, onto)


@dataclass(frozen=True)
class CountedLog:
    inner: SealedLog
    seen: list[CountedUnsealing] = field(default_factory=list)

    @property
    def folders(self) -> tuple[str, ...]:
        return self.inner.folders

    def joining(self, fork: TreeFiles, upstream: TreeFiles, ours: TreeFiles) -> CountedUnsealing | None:
        found = self.inner.joining(fork, upstream, ours)
        if found is None:
            return None
        self.seen.append(CountedUnsealing(found))
        return self.seen[-1]


def _rebased_over_a_seal(tmp_path: Path, memrepo: GitRepo, *,
                         cycles_after: int = 0) -> tuple[gitio.RebaseResult, CountedUnsealing]:
    """The laptop's cycles 398-400, the last one sealing, and `cycles_after` more, rebased onto the Action's cycle
    398: the rebase, and what its joining counted."""
    action, base = setup(tmp_path, memrepo, 397)
    action.commit_files({"LOG.md": base + entry(398, "action")}, "gitmem: cycle 398")
    push(action)
    memrepo.commit_files({"LOG.md": base + entries(398, 2, "laptop")}, "gitmem: cycles 398 and 399")
    mine = sealed(base + entries(398, 3, "laptop"))
    memrepo.commit_files(mine, "gitmem: cycle 400")
    live = mine["LOG.md"]
    assert isinstance(live, bytes)
    for cycle in range(401, 401 + cycles_after):
        live += entry(cycle, "laptop").encode()
        memrepo.commit_files({"LOG.md": live}, f"gitmem: cycle {cycle}")
    run_git(memrepo.path, "fetch", "--quiet", "origin")
    joiner = CountedLog(SealedLog("LOG.md"))
    result = gitio.rebase_onto(memrepo.handle, "refs/remotes/origin/main", resolver_for(Config()),
                               renumberer_for(Config()), joiner)
    (counted,) = joiner.seen
    return result, counted


def test_a_rebase_over_a_seal_joins_each_tree_once(tmp_path: Path, memrepo: GitRepo) -> None:
    result, counted = _rebased_over_a_seal(tmp_path, memrepo)
    assert result.conflicts == () and result.replayed == 2 and result.renumbering is not None
    assert file_at(memrepo.repo, "HEAD", VOLUME_1) is not None
    assert counted.joined and max(counted.joined.values()) == 1, counted.joined.values()


def test_a_long_replay_over_a_seal_holds_the_joined_logs_of_a_few_trees(tmp_path: Path, memrepo: GitRepo) -> None:
    """Each replayed tree that sealed is joined into all of history (75 MB at 100x); the replay keeps the texts its
    reads ask for again (the renumbering's three trees, the walk's commit and parent), not one per tree it merged."""
    result, counted = _rebased_over_a_seal(tmp_path, memrepo, cycles_after=12)
    assert result.conflicts == () and result.replayed == 14
    # Before: one more held at each join, 26 at the end.
    assert len(counted.held) > 14 and max(counted.held) <= 4, counted.held
