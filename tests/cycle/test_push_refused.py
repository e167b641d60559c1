"""A push the remote refuses for good (a protected branch, a ruleset, a pre-receive hook), against a real bare
origin whose pre-receive hook answers as GitHub's branch protection does (GH006).

The refusal is never retried, and the work goes to a branch the remote accepts; when that branch is refused too,
the exit code and the message say the work is only on this machine's disk.
"""
from __future__ import annotations

from pathlib import Path

import pygit2
import pytest

from gitmem import gitio
from gitmem.cycle.runner import Settings, run_cycle
from gitmem.errors import ExitCode
from gitmem.memory import log
from tests.support.cycle_support import WritingBackend, built, file_at, origin_and_clone
from tests.support.gitcli import git, protect_branches
from tests.support.helpers import GitRepo
from tests.support.hostile import refused


def _remote_heads(origin: Path) -> dict[str, str]:
    repo = pygit2.Repository(str(origin))
    return {name.removeprefix("refs/heads/"): str(repo.references[name].peel(pygit2.Commit).id)
            for name in repo.references if name.startswith("refs/heads/")}


def test_a_protected_main_is_not_retried_and_the_cycle_goes_to_a_branch_the_remote_accepts(
        tmp_path: Path, memrepo: GitRepo) -> None:
    origin = origin_and_clone(tmp_path, memrepo)
    protect_branches(origin, "main")
    main_before = _remote_heads(origin)["main"]
    waits: list[float] = []

    report = run_cycle(memrepo.ws(), WritingBackend(built()), settings=Settings(push=True, sleep=waits.append))

    assert report.exit_code == ExitCode.SALVAGED
    assert waits == [], "a refusal for good is not retried"
    assert report.push_status == "refused" and report.side_branch == "gitmem/cycle-1"
    assert [v.code for v in report.violations] == ["GM718"]
    heads = _remote_heads(origin)
    assert heads["main"] == main_before
    assert heads["gitmem/cycle-1"] == report.commit == memrepo.head(), "the cycle's commit, on the remote"
    assert "hello" in (file_at(pygit2.Repository(str(origin)), "refs/heads/gitmem/cycle-1", "hello.txt") or "")
    said = "\n".join(report.messages)
    assert "GH006: Protected branch update failed" in said
    assert "refused the push for good" in said and "push-mode: pull-request" in said
    assert sum(line.startswith("attempt ") for line in report.messages) == 1
    # Nothing was reset: the next cycle builds on this one's memory.
    assert log.parse(memrepo.read("LOG.md")).cycles[-1].cycle == 1


def test_when_the_fallback_branch_is_refused_too_the_work_is_said_to_be_only_local(tmp_path: Path,
                                                                                   memrepo: GitRepo) -> None:
    origin = origin_and_clone(tmp_path, memrepo)
    protect_branches(origin, "main", "gitmem/*")

    report = run_cycle(memrepo.ws(), WritingBackend(built()), settings=Settings(push=True, sleep=lambda s: None))

    assert report.exit_code == ExitCode.LOCAL_ONLY == 6
    assert report.push_status == "failed" and [v.code for v in report.violations] == ["GM712"]
    assert set(_remote_heads(origin)) == {"main"}
    assert gitio.resolve_revision(memrepo.ws().repo, "gitmem/cycle-1") == memrepo.head(), "kept on a local branch"
    assert "NOTHING REACHED ORIGIN: the work is only on this machine's disk, on local branches main and " \
           "gitmem/cycle-1" in report.messages[-1]
    assert "only on this machine's disk" in report.violations[0].message


def test_the_close_to_a_protected_main_goes_to_a_close_branch(tmp_path: Path, memrepo: GitRepo, cli) -> None:
    origin = origin_and_clone(tmp_path, memrepo)
    assert run_cycle(memrepo.ws(), WritingBackend(built()), settings=Settings(push=True)).pushed
    protect_branches(origin, "main")
    day = log.parse(memrepo.read("LOG.md")).cycles[-1].when.moment.date().isoformat()

    result = refused(cli(["close", "--push", "--no-llm", "--date", day], cwd=memrepo.path), ExitCode.SALVAGED)

    heads = _remote_heads(origin)
    assert heads[f"gitmem/close-{day}"] == memrepo.head()
    assert git(memrepo.path, "log", "-1", "--format=%s").strip() == f"gitmem: close {day}"
    assert heads["main"] != memrepo.head()
    assert "refused the push for good" in result.err and f"branch gitmem/close-{day}" in result.err
    assert result.err.count("push: attempt ") == 1


def test_the_close_whose_fallback_is_refused_too_exits_local_only(tmp_path: Path, memrepo: GitRepo, cli) -> None:
    origin = origin_and_clone(tmp_path, memrepo)
    assert run_cycle(memrepo.ws(), WritingBackend(built()), settings=Settings(push=True)).pushed
    protect_branches(origin, "*")
    day = log.parse(memrepo.read("LOG.md")).cycles[-1].when.moment.date().isoformat()

    result = refused(cli(["close", "--push", "--no-llm", "--date", day], cwd=memrepo.path), ExitCode.LOCAL_ONLY)

    assert "NOTHING REACHED ORIGIN" in result.err and f"gitmem/close-{day}" in result.err


@pytest.mark.parametrize(("output", "for_good"), [
    # GitHub's own words, as git prints them (a branch protection rule, a ruleset).
    ("remote: error: GH006: Protected branch update failed for refs/heads/main.\n"
     "! [remote rejected] main -> main (protected branch hook declined)", True),
    ("remote: error: GH013: Repository rule violations found for refs/heads/main.\n"
     "! [remote rejected] main -> main (push declined due to repository rule violations)", True),
    # Races on the remote's own ref update: the next try can win them.
    ("! [remote rejected] main -> main (cannot lock ref 'refs/heads/main': is at 1a2b but expected 3c4d)", False),
    ("! [remote rejected] main -> main (failed to update ref)", False),
])
def test_what_the_remote_says_tells_a_refusal_from_a_race(output: str, for_good: bool) -> None:
    assert gitio.refused_for_good(output) is for_good


def test_a_real_hook_refusal_and_a_real_race_are_told_apart(tmp_path: Path, memrepo: GitRepo) -> None:
    origin = origin_and_clone(tmp_path, memrepo)
    repo = memrepo.ws().repo
    other = tmp_path / "other"
    git(tmp_path, "clone", "-q", str(origin), str(other))
    git(other, "commit", "-q", "--allow-empty", "-m", "someone pushed first")
    git(other, "push", "-q", "origin", "main")
    memrepo.write("mine.txt", "mine\n")
    memrepo.stage("mine.txt")
    memrepo.commit("mine")

    with pytest.raises(gitio.GitCommandError) as race:
        gitio.push(repo, "origin", "HEAD", "main")
    protect_branches(origin, "elsewhere")
    with pytest.raises(gitio.GitCommandError) as refusal:
        gitio.push(repo, "origin", "HEAD", "elsewhere")

    assert (race.value.rejected, race.value.refused) == (True, False)
    assert (refusal.value.rejected, refusal.value.refused) == (False, True)
    assert "pre-receive hook declined" in refusal.value.output
