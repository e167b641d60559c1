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


@dataclass(frozen=True)
class CountedUnsealing:
    inner: Unsealing
    joined: Counter[tuple[object, ...]] = field(default_factory=Counter)

    def join(self, tree: TreeFiles) -> Changes:
        """Counted by what the tree holds: its volumes and its LOG.md."""
        self.joined[(*sorted(tree.listing.items()), tree.read("LOG.md"))] += 1
        return self.inner.join(tree)

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


def test_a_rebase_over_a_seal_joins_each_tree_once(tmp_path: Path, memrepo: GitRepo) -> None:
    action, base = setup(tmp_path, memrepo, 397)
    action.commit_files({"LOG.md": base + entry(398, "action")}, "gitmem: cycle 398")
    push(action)
    memrepo.commit_files({"LOG.md": base + entries(398, 2, "laptop")}, "gitmem: cycles 398 and 399")
    mine = sealed(base + entries(398, 3, "laptop"))
    memrepo.commit_files(mine, "gitmem: cycle 400")
    run_git(memrepo.path, "fetch", "--quiet", "origin")
    joiner = CountedLog(SealedLog("LOG.md"))

    result = gitio.rebase_onto(memrepo.handle, "refs/remotes/origin/main", resolver_for(Config()),
                               renumberer_for(Config()), joiner)
    assert result.conflicts == () and result.replayed == 2 and result.renumbering is not None
    assert file_at(memrepo.repo, "HEAD", VOLUME_1) is not None
    (counted,) = joiner.seen
    assert counted.joined and max(counted.joined.values()) == 1, counted.joined.values()
