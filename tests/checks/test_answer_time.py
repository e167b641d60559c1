"""An `Answered:` time ahead of the clock (issue 23): a local time labelled UTC, hours ahead.

Every reader takes the answer for given no later than the moment it reads the file (`decisions.answered_at`), so
nothing reports an answered decision as waiting; `check` refuses such a new answer against the clock
(tests/checks/test_checks_rules.py, GM211) and `verify` against its commit's committer date, from rules 3 on.
"""
from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pygit2
import pytest

from gitmem import codes
from gitmem.checks.check_and_verify import verify_range
from gitmem.memory import now
from gitmem.report.collect import collect_report
from gitmem.workspace import Workspace
from tests.support.builders import decisions_md, pending, resolved
from tests.support.helpers import HUMAN, GitRepo
from tests.support.world import World, at, d

D = "DECISIONS.md"


def test_an_answer_dated_ahead_of_the_clock_is_not_waiting_for_any_reader(world: World, cli,  # type: ignore[no-untyped-def]
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    asked = world.ask(at(10, 9), "Which database?")
    world.cycle(at(10, 10))
    world.answer(at(10, 23), asked)            # written three hours ahead of the close below
    result = world.close(d(10), at(10, 20))
    assert result.report["Waiting"] == "nothing"
    top = now.parse(world.read("NOW.md"), max_blocks=1).top
    assert top is not None and top.get("Human") == "nothing waiting"
    monkeypatch.setattr(Workspace, "clock", lambda self: world.clock)
    assert json.loads(cli(["pending", "--json"], cwd=world.git.path).out) == []
    assert json.loads(cli(["status", "--json"], cwd=world.git.path).out)["pending"] == []
    row = next(r for r in collect_report(world.git.ws(), clock=world.clock).decisions if r.id == asked)
    assert not row.pending and row.answered == at(10, 20)      # answered by the time the file was read


def _commit_at(repo: GitRepo, when: datetime, message: str) -> str:
    """Commit the index as the human, committed at `when` (git's own date, not the fixture's)."""
    repo.stage(D, "gitmem.yaml")
    raw = repo.repo
    signature = pygit2.Signature(*HUMAN, int(when.timestamp()), 0)
    return str(raw.create_commit("HEAD", signature, signature, message, raw.index.write_tree(),
                                 [raw.head.target]))


def _answered_at(when: datetime) -> str:
    return decisions_md(resolved=resolved(1).replace("2026-11-30 12:00 UTC", f"{when:%Y-%m-%d %H:%M} UTC"))


@pytest.mark.parametrize(("rules", "ahead", "flagged"), [(3, 180, True), (3, 5, False), (1, 180, False)],
                         ids=["rules3-3h-ahead", "rules3-5min-skew", "rules1-history"])
def test_verify_judges_a_new_answer_by_its_commit_date(memrepo: GitRepo, rules: int, ahead: int,
                                                       flagged: bool) -> None:
    yaml = memrepo.read("gitmem.yaml").replace(f"rules_version: {codes.RULES_VERSION}", f"rules_version: {rules}")
    memrepo.write("gitmem.yaml", yaml)
    memrepo.write(D, decisions_md(pending(1)))
    base = _commit_at(memrepo, datetime(2026, 11, 30, 9, 30, tzinfo=UTC), "base")
    # The commit is made long after the fixture's clock: verify judges by its date, not by the real clock.
    committed = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
    memrepo.write(D, _answered_at(committed + timedelta(minutes=ahead)))
    _commit_at(memrepo, committed, "answer D-0001")
    found = [(v.code, v.line, v.message) for v in verify_range(memrepo.ws(), base, "HEAD").violations]
    if not flagged:
        assert found == []
        return
    line = next(n for n, text in enumerate(memrepo.read(D).splitlines(), 1) if text.startswith("- Answered:"))
    assert found == [("GM211", line, "D-0001 is answered at 2026-11-30 15:00 UTC, 3h 00min after its commit's "
                                     f"committer date (2026-11-30 12:00 UTC) (commit {memrepo.head()[:10]})")]


def test_an_answer_from_a_slow_clock_dated_before_its_ask_is_reported_not_refused(memrepo: GitRepo) -> None:
    """A laptop 3 h slow answers what the agent asked on a right clock: the Answered time is before the Asked
    time. GM213 says so, as a warning: either clock may be the wrong one, and the human's answer must still land
    (its pull request merge, the pre-commit hook let it through). Ten minutes apart is two honest clocks."""
    from tests.cycle.test_two_writers import session

    session(memrepo, "decision", "ask", "--title", "Which database?", "--recommendation", "sqlite")
    memrepo.stage(D)
    memrepo.commit("ask D-0001")
    session(memrepo, "decision", "answer", "D-0001", "--answer", "postgres", shift="-3h")
    memrepo.stage(D)
    checked = session(memrepo, "check", check=False)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    line = next(n for n, text in enumerate(memrepo.read(D).splitlines(), 1) if text.startswith("- Answered:"))
    found = [text for text in (checked.stdout + checked.stderr).splitlines() if "GM213" in text]
    assert len(found) == 1 and found[0].startswith(f"{D}:{line}: GM213 warning: D-0001 is answered at "), found
    assert "3h 00min before it was asked" in found[0] or "2h 59min before it was asked" in found[0], found
    start = memrepo.head()
    memrepo.commit("answer D-0001")
    verified = session(memrepo, "verify", "--range", f"{start}..HEAD", check=False)
    assert verified.returncode == 0 and "GM213" in verified.stdout, verified.stdout + verified.stderr

