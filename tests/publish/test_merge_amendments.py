"""A merge that moves an amended LOG entry moves its amendment with it (docs/format.md, "Amending LOG"), and
`verify` over the merge's range forgives the other parent's commits that entry at the line they held it at, not
at the tip's. Real repositories, the real CLI: a side branch holds an entry committed without the check (no
Result) and its amendment; main logged two cycles meanwhile; `gitmem merge` lands the side after them."""
from __future__ import annotations

from gitmem.memory import log
from tests.cycle.test_two_writers import session
from tests.support.gitcli import git
from tests.support.helpers import DANA, GitRepo


def _headings(repo: GitRepo) -> list[tuple[int, str]]:
    return [(n, line) for n, line in enumerate(repo.read("LOG.md").splitlines(), 1) if line.startswith("## ")]


def _log_by_hand(repo: GitRepo, task: str) -> None:
    session(repo, "log", "add", "--task", task, "--outcome", "built", "--result", "done by hand")
    git(repo.path, "commit", "-q", "-am", f"session: {task}", who=DANA)


def _side_with_an_amended_entry(repo: GitRepo, bad_heading: str) -> int:
    """Branch `side`: an entry under `bad_heading` with no Result, committed without the check, then its
    amendment; the line the amendment names."""
    git(repo.path, "switch", "-q", "-c", "side", who=DANA)
    repo.append("LOG.md", f"\n{bad_heading}\n- Task: tune the zebra crossing\n")
    git(repo.path, "commit", "-q", "--no-verify", "-am", "log by hand, without the check", who=DANA)
    (line, _), = [(n, text) for n, text in _headings(repo) if text == bad_heading]
    session(repo, "log", "amend", "--line", str(line), "--task", "tune the zebra crossing", "--outcome", "built",
            "--result", "the crossing blinks")
    git(repo.path, "commit", "-q", "-am", "amend the hand-written entry", who=DANA)
    git(repo.path, "switch", "-q", "main", who=DANA)
    return line


def _merged_and_verified(repo: GitRepo, start: str, bad_heading: str) -> None:
    done = session(repo, "merge", "side", check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    entries = log.parse(repo.read("LOG.md")).entries
    moved = [e for e in entries if log.as_written(e)[0] == bad_heading.removeprefix("## ")][-1]
    assert entries[-1].amends == moved.line and moved.line > 13
    verified = session(repo, "verify", "--range", f"{start}..HEAD", check=False)
    assert (verified.returncode, verified.stdout) == (0, ""), verified.stdout
    assert "5 commit(s) verified" in verified.stderr


def test_verify_forgives_the_other_parents_commits_the_moved_entry_at_their_own_line(memrepo: GitRepo) -> None:
    _log_by_hand(memrepo, "first")
    start = memrepo.head()
    cycle_one = _headings(memrepo)[-1][1]
    bad_heading = cycle_one.replace("cycle 1 · built", "cycle 2 · published")
    assert _side_with_an_amended_entry(memrepo, bad_heading) == 13
    _log_by_hand(memrepo, "main two")
    _log_by_hand(memrepo, "main three")
    _merged_and_verified(memrepo, start, bad_heading)
    # The side's own commits still answer for the entry at their line, up to a tip without the amendment.
    stopped = session(memrepo, "verify", "--range", f"{start}..side~1", check=False)
    assert stopped.stdout.startswith("LOG.md:13: GM305 cycle 2 has no Result")


def test_an_amended_entry_whose_heading_reads_as_ours_is_followed_by_its_amendment(memrepo: GitRepo) -> None:
    """The side's hand-written entry has the very heading main's cycle 2 has (same minute, cycle, outcome): the
    merge still moves the amendment to where the side's entry lands, after main's."""
    _log_by_hand(memrepo, "first")
    start = memrepo.head()
    git(memrepo.path, "switch", "-q", "-c", "ahead", who=DANA)
    _log_by_hand(memrepo, "main two")
    bad_heading = _headings(memrepo)[-1][1]
    git(memrepo.path, "switch", "-q", "main", who=DANA)
    assert _side_with_an_amended_entry(memrepo, bad_heading) == 13
    git(memrepo.path, "merge", "-q", "--ff-only", "ahead", who=DANA)
    _log_by_hand(memrepo, "main three")
    _merged_and_verified(memrepo, start, bad_heading)
