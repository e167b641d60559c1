"""`gitmem cycle --push` with a bare origin and a human working in another clone at the same time."""
from __future__ import annotations

from datetime import date, timedelta
from pathlib import Path

import pygit2

from gitmem.checks.check_and_verify import verify_range
from gitmem.config import Config
from gitmem.cycle.runner import Settings, run_cycle
from gitmem.errors import ExitCode
from gitmem.gitio import Repo
from gitmem.memory import decisions, log, now
from gitmem.memory_writer import MemoryWriter
from gitmem.workspace import Workspace
from tests.support.cycle_support import (
    WritingBackend,
    built,
    clone,
    config_of,
    file_at,
    is_clean,
    origin_and_clone,
    pull,
)
from tests.support.gitcli import git
from tests.support.helpers import DANA, GitRepo, as_the_human


def _origin(origin: Path) -> pygit2.Repository:
    return pygit2.Repository(str(origin))


def _ask_and_publish(repo: GitRepo) -> None:
    memory = MemoryWriter(Workspace.at(repo.path, config_of(repo)), author_email="agent@gitmem.invalid")
    memory.ask_decision(title="Which license?", recommendation="MIT", cycle=1)
    repo.stage("DECISIONS.md")
    repo.commit("ask D-0001", author=("gitmem-agent", "agent@gitmem.invalid"))
    git(repo.path, "push", "--quiet", "origin", "main")


def test_a_human_answer_pushed_during_the_cycle_is_rebased_onto(tmp_path: Path, memrepo: GitRepo) -> None:
    origin = origin_and_clone(tmp_path, memrepo)
    _ask_and_publish(memrepo)
    start = memrepo.head()
    human = clone(origin, tmp_path / "dana", DANA)

    def cycle_while_the_human_answers(memory, request) -> None:
        built("write hello.txt")(memory, request)
        memory.ask_decision(title="Which CI?", recommendation="GitHub Actions")   # the same file
        answered = MemoryWriter(Workspace.at(human.path, config_of(human)), author_email=DANA[1])
        with as_the_human():
            answered.answer_decision("D-0001", answer="MIT it is", name=DANA[0], email=DANA[1])
        human.stage("DECISIONS.md")
        human.commit("answer D-0001", author=DANA)
        git(human.path, "push", "--quiet", "origin", "main")

    report = run_cycle(memrepo.ws(), WritingBackend(cycle_while_the_human_answers),
                       settings=Settings(push=True, sleep=lambda s: None))
    assert (report.exit_code, report.pushed) == (ExitCode.OK, True)
    tip = _origin(origin).revparse_single("refs/heads/main").peel(pygit2.Commit)
    assert str(tip.id) == report.commit == memrepo.head()
    assert tip.message.startswith("gitmem: cycle 1 · built · write hello.txt\n")
    assert tip.parents[0].message == "answer D-0001"
    on_origin = decisions.parse(file_at(_origin(origin), "refs/heads/main", "DECISIONS.md"))
    assert [d.id for d in on_origin.settled] == ["D-0001"]
    assert [(d.id, d.title) for d in on_origin.awaiting] == [("D-0002", "Which CI?")]
    assert [e.cycle for e in log.parse(file_at(_origin(origin), "refs/heads/main", "LOG.md")).entries] == [1]
    assert file_at(_origin(origin), "refs/heads/main", "hello.txt") == "hello from cycle 1\n"
    assert verify_range(Workspace.for_repo(Repo(_origin(origin)), Config()), start, "refs/heads/main").violations == []
    assert is_clean(memrepo)


def test_new_now_blocks_on_both_sides_both_land(tmp_path: Path, memrepo: GitRepo) -> None:
    origin = origin_and_clone(tmp_path, memrepo)
    human = clone(origin, tmp_path / "dana", DANA)

    def cycle_while_the_human_writes_now(memory, request) -> None:
        # What the daily close writes: a plan block, pushed while this cycle runs.
        MemoryWriter(Workspace.at(human.path, config_of(human))).add_plan_block(
            plan_for=date.today() + timedelta(days=1), did="planned by hand", human="-", next="-")
        human.stage("NOW.md")
        human.commit("plan block", author=DANA)
        git(human.path, "push", "--quiet", "origin", "main")
        built("write hello.txt")(memory, request)

    report = run_cycle(memrepo.ws(), WritingBackend(cycle_while_the_human_writes_now),
                       settings=Settings(push=True, sleep=lambda s: None))
    assert report.exit_code == ExitCode.OK and report.pushed
    blocks = now.parse(file_at(_origin(origin), "refs/heads/main", "NOW.md")).blocks
    assert [b.fields[0].value for b in blocks] == ["write hello.txt", "planned by hand"]


def test_a_conflicting_now_edit_goes_to_a_cycle_branch(tmp_path: Path, memrepo: GitRepo) -> None:
    origin = origin_and_clone(tmp_path, memrepo)
    first = run_cycle(memrepo.ws(), WritingBackend(built("first")),
                      settings=Settings(push=True, sleep=lambda s: None))
    assert first.pushed
    human = clone(origin, tmp_path / "dana", DANA)

    def both_edit_the_same_block(memory, request) -> None:
        human.write("NOW.md", human.read("NOW.md").replace("- Next: write more", "- Next: what Dana wants"))
        human.stage("NOW.md")
        human.commit("human edits the NOW block", author=DANA)
        git(human.path, "push", "--quiet", "origin", "main")
        text = (request.root / "NOW.md").read_text()
        (request.root / "NOW.md").write_text(text.replace("- Next: write more", "- Next: what the agent wants"))
        built("write hello.txt", {"hello.txt": "second\n"})(memory, request)

    report = run_cycle(memrepo.ws(), WritingBackend(both_edit_the_same_block),
                       settings=Settings(push=True, sleep=lambda s: None))
    assert report.exit_code == ExitCode.SALVAGED == 4
    assert report.side_branch == "gitmem/cycle-2"
    assert any("conflicts in NOW.md" in m for m in report.messages)
    remote = _origin(origin)
    saved = remote.revparse_single("refs/heads/gitmem/cycle-2").peel(pygit2.Commit)
    assert str(saved.id) == report.commit
    assert saved.message.startswith("gitmem: cycle 2 · built · write hello.txt")
    assert file_at(remote, "refs/heads/gitmem/cycle-2", "hello.txt") == "second\n"
    assert "what the agent wants" in file_at(remote, "refs/heads/gitmem/cycle-2", "NOW.md")
    assert "what Dana wants" in file_at(remote, "refs/heads/main", "NOW.md")
    assert is_clean(memrepo)
    # The human can see the agent's work and merge it: nothing was lost.
    pull(human)
    assert "gitmem/cycle-2" in git(human.path, "ls-remote", "--heads", "origin")


def test_a_salvaged_cycle_pushes_its_salvage_branch(tmp_path: Path, memrepo: GitRepo) -> None:
    origin = origin_and_clone(tmp_path, memrepo)

    def crash(memory, request) -> None:
        (request.root / "work.txt").write_text("unfinished\n")
        raise RuntimeError("the model went away")

    report = run_cycle(memrepo.ws(), WritingBackend(crash),
                       settings=Settings(push=True, sleep=lambda s: None))
    assert report.exit_code == ExitCode.SALVAGED
    assert report.pushed
    remote = _origin(origin)
    assert file_at(remote, "refs/heads/gitmem/salvage/cycle-1", "work.txt") == "unfinished\n"
    entry = log.parse(file_at(remote, "refs/heads/main", "LOG.md")).entries[-1]
    assert entry.outcome == "no-build" and "RuntimeError: the model went away" in entry.get("Result")


def test_with_no_remote_the_cycle_and_the_close_both_exit_salvaged(memrepo: GitRepo, cli) -> None:
    # Issue 20: one push status, one exit code. With no remote to push to, the cycle exited 4 (its commit stays
    # local) while the close exited 0 without a word; the stricter now holds for both.
    from tests.support.hostile import refused

    report = run_cycle(memrepo.ws(), WritingBackend(built()), settings=Settings(push=True))
    assert report.exit_code == ExitCode.SALVAGED
    assert any("no remote 'origin'" in line for line in report.messages)
    day = log.parse(memrepo.read("LOG.md")).cycles[-1].when.moment.date().isoformat()
    result = refused(cli(["close", "--push", "--no-llm", "--date", day], cwd=memrepo.path), ExitCode.SALVAGED)
    assert "no remote 'origin'" in result.err
    assert log.parse(memrepo.read("LOG.md")).entries[-1].kind == "close"        # the close commit is kept
    # Both helps say so: the cycle's named only a work "on a named branch" for exit 4, and no remote not at all.
    for command in ("cycle", "close"):
        helped = " ".join(cli([command, "--help"], cwd=memrepo.path).out.split())
        assert "there is no remote" in helped.split("Exit codes:")[1].split("; 5 ")[0], (command, helped)
