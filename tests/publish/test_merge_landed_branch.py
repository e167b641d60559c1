"""`gitmem merge` of a branch whose work already landed (squash-merged on GitHub, cherry-picked): its entries are
the current branch's already, so nothing is renumbered and nothing lands twice."""
from __future__ import annotations

from gitmem.errors import ExitCode
from gitmem.memory import log, now
from tests.support.gitcli import git
from tests.support.helpers import GitRepo


def test_merging_a_branch_that_was_squash_merged_already_adds_no_second_now_block(memrepo: GitRepo, cli) -> None:
    git(memrepo.path, "switch", "-q", "-c", "side")
    for argv in (["log", "add", "--task", "the side's", "--outcome", "built", "--result", "done"],
                 ["now", "add", "--did", "the side's", "--human", "nothing", "--next", "more"]):
        assert cli(argv, cwd=memrepo.path).code == ExitCode.OK
    git(memrepo.path, "commit", "-q", "-am", "session: the side's")
    git(memrepo.path, "switch", "-q", "main")
    git(memrepo.path, "merge", "-q", "--squash", "side")
    git(memrepo.path, "commit", "-q", "-m", "the side's (#1)")
    merged = cli(["merge", "side"], cwd=memrepo.path)
    assert merged.code == ExitCode.OK, merged.out + merged.err
    assert [e.cycle for e in log.parse(memrepo.read("LOG.md")).entries] == [1]
    assert [b.cycle for b in now.parse(memrepo.read("NOW.md")).blocks if b.cycle is not None] == [1]
    assert "another writer took cycle" not in merged.out + merged.err
