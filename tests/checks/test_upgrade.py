"""Repositories written by gitmem 0.1.0 keep working: new rules judge new bytes, never old history.

tests/fixtures/upgrade/memory-0.1.0.bundle holds six days of memory written by 0.1.0's own runner, writers and
close (tests/fixtures/upgrade/make_fixture.py says how), including bytes that later releases refuse in new
changes: a fenced heading, an unclosed fence, a 40 KB entry, a key-shaped string in a doc, a symlink, CRLF.
"""
from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pygit2
import pytest

from gitmem import codes
from gitmem.cycle.runner import CycleRefused, Settings, run_cycle
from gitmem.errors import ExitCode
from gitmem.memory import log
from gitmem.workspace import Workspace
from tests.support.cycle_support import WritingBackend, built
from tests.support.gitcli import git
from tests.support.helpers import GitRepo, filled_rules
from tests.support.world import Clock

BUNDLE = Path(__file__).parents[1] / "fixtures" / "upgrade" / "memory-0.1.0.bundle"


@pytest.fixture
def old(tmp_path: Path, git_env: None) -> GitRepo:
    git(tmp_path, "clone", "-q", "--branch", "main", str(BUNDLE), "old")
    path = tmp_path / "old"
    return GitRepo(path, pygit2.Repository(str(path)))


def root_commit(repo: GitRepo) -> str:
    return git(repo.path, "rev-list", "--max-parents=0", "HEAD").strip()


def test_history_written_by_0_1_0_still_checks_and_verifies_clean(old: GitRepo, cli) -> None:
    assert cli(["check", "--worktree"], cwd=old.path).code == ExitCode.OK
    verified = cli(["verify", "--range", f"{root_commit(old)}..HEAD", "--format", "json"], cwd=old.path)
    assert verified.code == ExitCode.OK, verified.out + verified.err
    for argv in (["status", "--json"], ["pending", "--json"], ["context", "--json", "--offline"],
                 ["recall", "notes", "--json"]):
        done = cli(argv, cwd=old.path)
        assert done.code == ExitCode.OK and "Traceback" not in done.err, (argv, done.err)
        json.loads(done.out)
    cycles = [e.cycle for e in log.parse(old.read("LOG.md")).entries if e.cycle is not None]
    assert cycles == list(range(1, 37))                      # an old unclosed fence hides no heading


def _fill_in_rules(old: GitRepo) -> None:
    """The upgrade's one step: 0.1.0 ran cycles with the template's placeholders in RULES.md; this release's
    cycle refuses to (GM717) until the human fills them in."""
    old.commit_files({"RULES.md": filled_rules(old.read("RULES.md"))}, "fill in who the agent is")


def test_the_next_cycle_and_close_after_the_upgrade_work_and_verify(old: GitRepo, cli) -> None:
    start = old.head()
    clock = Clock(datetime(2026, 10, 8, 9, 0, tzinfo=UTC))
    with pytest.raises(CycleRefused) as refused:
        run_cycle(Workspace.at(old.path), WritingBackend(built("after the upgrade")), settings=Settings(clock=clock))
    assert refused.value.code is codes.CYCLE_RULES_PLACEHOLDERS and old.head() == start
    _fill_in_rules(old)
    report = run_cycle(Workspace.at(old.path), WritingBackend(built("after the upgrade")),
                       settings=Settings(clock=clock))
    assert report.exit_code == ExitCode.OK and report.cycle == 37
    assert cli(["check", "--worktree"], cwd=old.path).code == ExitCode.OK
    assert cli(["verify", "--range", f"{start}..HEAD"], cwd=old.path).code == ExitCode.OK
    assert cli(["verify", "--range", f"{root_commit(old)}..HEAD"], cwd=old.path).code == ExitCode.OK


def _big_entry(repo: GitRepo, cycle: int) -> str:
    """LOG with a hand-written entry far over GM307's share (rules version 2), as a commit without the hook
    would leave it."""
    evidence = "x" * 60_000
    return repo.read("LOG.md") + (f"\n## 2026-10-09 09:00 UTC · cycle {cycle} · built\n- Task: by hand\n"
                                  f"- Evidence: {evidence}\n- Result: done\n")


def test_an_old_history_is_judged_by_the_rules_of_its_time_and_a_marked_one_by_the_new(old: GitRepo, cli) -> None:
    start = old.head()
    old.commit_files({"LOG.md": _big_entry(old, 37)}, "a big entry, before any commit of the new release")
    assert cli(["verify", "--range", f"{start}..HEAD"], cwd=old.path).code == ExitCode.OK
    marked = old.head()
    old.commit_files({"LOG.md": _big_entry(old, 38)}, "another one\n\nGitmem-Rules: 2\n")
    found = cli(["verify", "--range", f"{marked}..HEAD", "--format", "json"], cwd=old.path)
    assert found.code == ExitCode.VIOLATIONS and [v["code"] for v in json.loads(found.out)] == ["GM307"]


def test_once_a_commit_is_made_under_the_new_rules_every_later_commit_is(old: GitRepo, cli) -> None:
    _fill_in_rules(old)
    clock = Clock(datetime(2026, 10, 8, 9, 0, tzinfo=UTC))
    report = run_cycle(Workspace.at(old.path), WritingBackend(built("after the upgrade")),
                       settings=Settings(clock=clock))
    assert f"Gitmem-Rules: {codes.RULES_VERSION}" in old.repo[old.head()].message
    after = old.head()
    # Lowering the version in gitmem.yaml afterwards changes nothing: the generation only grows with history.
    config = old.read("gitmem.yaml")
    old.commit_files({"gitmem.yaml": "rules_version: 1\n" + config}, "back to the old rules?")
    old.commit_files({"LOG.md": _big_entry(old, report.cycle + 1)}, "a big entry by hand")
    found = cli(["verify", "--range", f"{after}..HEAD", "--format", "json"], cwd=old.path)
    assert found.code == ExitCode.VIOLATIONS and [v["code"] for v in json.loads(found.out)] == ["GM307"]


def test_a_new_repository_is_under_the_newest_rules_from_its_first_commit(memrepo: GitRepo, cli) -> None:
    assert f"rules_version: {codes.RULES_VERSION}" in memrepo.read("gitmem.yaml")
    start = memrepo.head()
    memrepo.commit_files({"LOG.md": _big_entry(memrepo, 90)}, "a big entry by hand")
    assert cli(["verify", "--range", f"{start}..HEAD"], cwd=memrepo.path).code == ExitCode.VIOLATIONS


def test_a_rules_version_this_release_does_not_know_is_a_config_error(memrepo: GitRepo, cli) -> None:
    newest = f"rules_version: {codes.RULES_VERSION}"
    unknown = f"rules_version: {codes.RULES_VERSION + 1}"
    memrepo.write("gitmem.yaml", memrepo.read("gitmem.yaml").replace(newest, unknown))
    result = cli(["check", "--worktree"], cwd=memrepo.path)
    assert result.code == ExitCode.USAGE and "rules_version" in result.err and "Traceback" not in result.err


def test_a_config_value_the_old_release_accepted_does_not_fail_verify_of_old_history(old: GitRepo, memrepo: GitRepo,
                                                                                      cli) -> None:
    """recall.limit: 5000 was accepted by 0.1.0; this release bounds it at 1,000. A commit of the old history
    that brought it is read by the old rules; one made under rules version 2 is refused, with its line."""
    for repo, expected in ((old, ExitCode.OK), (memrepo, ExitCode.USAGE)):
        start, config = repo.head(), repo.read("gitmem.yaml")
        repo.commit_files({"gitmem.yaml": config + "\nrecall:\n  limit: 5000\n"}, "a long recall list")
        repo.commit_files({"gitmem.yaml": config}, "back to the default")
        result = cli(["verify", "--range", f"{start}..HEAD"], cwd=repo.path)
        assert result.code == expected, result.out + result.err
        if expected == ExitCode.USAGE:
            assert "recall.limit" in result.err and "Traceback" not in result.err
