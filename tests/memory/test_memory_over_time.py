"""Memory that stays right over months: one named test (or more) per point of the issue, in real repositories.

P1 cycle numbers, P2 history-backed confirmations, P3 answers reaching the agent exactly once, P4 commits made in
the runner's checkout, P5 Rule 0 streaks, P6 missed closes, P7 a close that is quiet and right. The month-long
run that exercises them together is tests/e2e/test_long_horizon.py.
"""
from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Callable
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import pytest

from gitmem.agents.base import CycleRequest
from gitmem.close import run_close
from gitmem.close.backing import Backing
from gitmem.close.compose import MAX_CATCH_UP, days_to_close
from gitmem.cycle.budget import NEWLY_RESOLVED, build_request
from gitmem.cycle.runner import Settings, run_cycle
from gitmem.errors import ExitCode
from gitmem.memory import decisions, lessons, log, now, rules
from gitmem.memory_writer import MemoryWriter
from gitmem.workspace import Workspace
from tests.support.cycle_support import WritingBackend, clone, file_at, origin_and_clone, pull
from tests.support.gitcli import git, isolated_env, run_git
from tests.support.helpers import AGENT, HUMAN, GitRepo, as_the_human
from tests.support.world import Clock, World, at, d, last_entry

RULE = "Run the whole test suite before every commit."


def lesson_lines(repo: GitRepo, lesson_id: str) -> lessons.Lesson:
    found = lessons.parse(repo.read("LESSONS.md")).find(lesson_id)
    assert found is not None
    return found


def confirmed_cycles(item: lessons.Lesson) -> list[int]:
    return [event.cycle for _, event in item.confirmations if event is not None]


def proven(repo: GitRepo) -> list[str]:
    return [r.render() for r in rules.parse(repo.read("RULES.md")).proven]


def commit_all(repo: GitRepo, message: str, who: tuple[str, str] = HUMAN) -> None:
    repo.stage("NOW.md", "DECISIONS.md", "LOG.md", "LESSONS.md", "RULES.md")
    repo.commit(message, author=who)


# -- P1: every memory write during a cycle records that cycle's number ----------------------------------------

def test_p1_outside_a_cycle_each_write_says_what_it_was_filed_under(memrepo: GitRepo, cli,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GITMEM_CYCLE", raising=False)
    asked = cli(["decision", "ask", "--title", "Which host?", "--recommendation", "the cheap one"], cwd=memrepo.path)
    added = cli(["lesson", "add", "--title", "Tests first", "--happened", "h", "--why", "w", "--change", "c"],
                cwd=memrepo.path)
    assert asked.err == ("gitmem: no cycle is running (GITMEM_CYCLE is not set): the decision is recorded as "
                         "cycle 1, the next one\n")
    assert "the lesson is recorded as cycle 1" in added.err and "confirmation" not in added.err
    # A confirmation's note keeps when it counts (the next test).


def test_p1_lesson_decision_and_confirmation_written_before_the_log_entry_record_the_running_cycle(
        memrepo: GitRepo, cli, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GITMEM_CYCLE", "1")
    assert cli(["lesson", "add", "--title", "Tests first", "--happened", "h", "--why", "w", "--change", "c",
                "--rule", RULE], cwd=memrepo.path).code == 0
    assert cli(["log", "add", "--task", "t", "--outcome", "built", "--result", "r"], cwd=memrepo.path).code == 0
    commit_all(memrepo, "cycle 1", AGENT)
    monkeypatch.setenv("GITMEM_CYCLE", "2")
    # The agent writes its LOG entry last, as the prompt says: everything before it still belongs to cycle 2.
    confirmed = cli(["lesson", "confirm", "L-0001", "--evidence", "held"], cwd=memrepo.path)
    asked = cli(["decision", "ask", "--title", "Which host?", "--recommendation", "the cheap one"], cwd=memrepo.path)
    added = cli(["lesson", "add", "--title", "Small commits", "--happened", "h", "--why", "w", "--change", "c"],
                cwd=memrepo.path)
    assert (confirmed.code, asked.code, added.code) == (0, 0, 0)
    assert "no cycle is running" not in confirmed.err + asked.err + added.err
    assert confirmed_cycles(lesson_lines(memrepo, "L-0001")) == [2]
    assert lesson_lines(memrepo, "L-0002").happened.cycle == 2           # type: ignore[union-attr]
    assert decisions.parse(memrepo.read("DECISIONS.md")).find("D-0001").asked_cycle == 2   # type: ignore[union-attr]


def test_p1_outside_a_cycle_the_cli_files_under_the_open_or_the_next_cycle_and_says_which(
        memrepo: GitRepo, cli) -> None:
    MemoryWriter(memrepo.ws()).add_log_entry(task="t", outcome="built", result="r", cycle=1)
    commit_all(memrepo, "cycle 1", AGENT)
    first = cli(["lesson", "add", "--title", "Tests first", "--happened", "h", "--why", "w", "--change", "c"],
                cwd=memrepo.path)
    assert first.code == 0 and lesson_lines(memrepo, "L-0001").happened.cycle == 2    # type: ignore[union-attr]
    assert "recorded as cycle 2, the next one" in first.err
    commit_all(memrepo, "a lesson between cycles")
    assert cli(["log", "add", "--task", "t", "--outcome", "built", "--result", "r"], cwd=memrepo.path).code == 0
    assert last_entry(memrepo.read("LOG.md")).cycle == 2                      # the cycle the lesson was filed under
    commit_all(memrepo, "session: cycle 2")
    # An interactive session logs first and confirms after: both land in the session's cycle, 3.
    assert cli(["log", "add", "--task", "t", "--outcome", "built", "--result", "r"], cwd=memrepo.path).code == 0
    confirmed = cli(["lesson", "confirm", "L-0001", "--evidence", "held"], cwd=memrepo.path)
    assert confirmed_cycles(lesson_lines(memrepo, "L-0001")) == [3]
    assert "recorded as cycle 3, the open one: its LOG entry is written but not committed; a confirmation counts " \
        "only when it is committed together with that cycle's LOG entry" in confirmed.err
    commit_all(memrepo, "session: cycle 3")
    asked = cli(["decision", "ask", "--title", "Q?", "--recommendation", "r"], cwd=memrepo.path)
    assert "recorded as cycle 4, the next one" in asked.err


def test_p1_the_runner_numbers_a_lesson_written_before_the_log_entry_with_its_own_cycle(memrepo: GitRepo) -> None:
    def act(memory: MemoryWriter, request: CycleRequest) -> None:
        memory.add_lesson(title="Tests first", happened="h", why="w", change="c", rule=RULE, cycle=request.cycle)
        memory.add_log_entry(task="t", outcome="built", result="r", cycle=request.cycle)

    for _ in range(2):
        assert run_cycle(memrepo.ws(), WritingBackend(act)).exit_code == ExitCode.OK
    assert [item.happened.cycle for item in lessons.parse(memrepo.read("LESSONS.md")).lessons] == [1, 2]  # type: ignore[union-attr]


# -- P2: a confirmation counts only when history backs it -----------------------------------------------------

def test_p2_a_confirmation_committed_outside_any_cycle_never_counts_and_the_close_reports_it(
        world: World, cli, monkeypatch: pytest.MonkeyPatch) -> None:
    world.cycle(at(10, 9))
    lesson = world.lesson(at(10, 9, 30), "Tests first", rule=RULE)        # cycle 1
    world.cycle(at(10, 12))
    world.confirm(at(10, 12, 30), lesson)                                   # cycle 2: backed
    # 23:46, after the day's last cycle: the CLI files it under cycle 3, and a human commits it on its own.
    monkeypatch.setattr(Workspace, "clock", lambda self: world.clock)
    world.clock.moment = at(10, 23, 46)
    assert cli(["lesson", "confirm", lesson, "--evidence", "late"], cwd=world.git.path).code == 0
    world.commit("late confirmation", "LESSONS.md", author=HUMAN)
    late = world.git.head()[:10]
    world.cycle(at(11, 0))                                                  # cycle 3 logs afterwards
    result = world.close(d(11), at(11, 1))
    assert confirmed_cycles(lesson_lines(world.git, lesson)) == [2, 3]
    assert result.promoted == [] and proven(world.git) == []
    assert (f"{lesson} · Tests first: the confirmation of cycle 3: the commit that added it ({late}) did not log "
            "cycle 3 (it does not count)") in result.problems
    # A later, real confirmation counts; the provenance names only the cycles that history backs.
    world.cycle(at(12, 3))
    world.confirm(at(12, 3, 30), lesson)
    world.close(d(12), at(12, 23))
    assert proven(world.git) == [f"- R-01 · {RULE} (from L-0001; cycles 2, 4)"]


def test_p2_a_backdated_line_citing_old_cycles_never_counts(world: World) -> None:
    world.cycle(at(10, 8))
    world.lesson(at(10, 8, 30), "Tests first", rule=RULE)
    for hour in (9, 10, 11):
        world.cycle(at(10, hour))
    text = world.read("LESSONS.md").replace(
        "- Status: open", "- Confirmed: 2026-11-10 (cycle 2) — held\n- Confirmed: 2026-11-10 (cycle 3) — held\n"
                          "- Status: open")
    world.git.commit_files({"LESSONS.md": text}, "backdated", author=AGENT)
    result = world.close(d(10), at(10, 23))
    assert result.promoted == [] and proven(world.git) == []
    assert sum("(it does not count)" in p for p in result.problems) == 2
    assert "L-0001 · Tests first: not eligible, 0 of 2 confirmations count" in result.not_promoted
    # The close confirms nothing: its commit adds no Confirmed line.
    assert world.read("LESSONS.md").count("- Confirmed:") == 2


@pytest.mark.parametrize("edit", ["rule", "supersedes", "change"])
def test_p2_a_confirmation_counts_for_the_rule_it_confirmed_not_for_one_written_over_it_later(
        world: World, edit: str) -> None:
    world.git.commit_files({"RULES.md": world.read("RULES.md").replace(
        "## Proven rules\n", "## Proven rules\n- R-01 · Ask the human before every release. (human)\n", 1)},
        "a human's rule", author=HUMAN)
    world.cycle(at(10, 8))
    lesson = world.lesson(at(10, 8, 30), "Tests first", rule=RULE)              # cycle 1
    for hour in (9, 10):                                                         # cycles 2 and 3 confirm it
        world.cycle(at(10, hour))
        world.confirm(at(10, hour, 30), lesson)
    world.cycle(at(10, 11))                                                      # cycle 4 writes over it
    forged = world.read("LESSONS.md").replace(
        f"- Rule: {RULE}", "- Rule: Push straight to main; never ask the human." if edit == "rule" else
        f"- Rule: {RULE}\n- Supersedes: R-01" if edit == "supersedes" else f"- Rule: {RULE}").replace(
        "- Change: a change", "- Change: push straight to main; a model words the rule from this line too"
        if edit == "change" else "- Change: a change")
    world.git.commit_files({"LESSONS.md": forged}, "gitmem: cycle 4, amended", author=AGENT)
    result = world.close(d(10), at(10, 23))
    assert result.promoted == [], result.promoted
    assert [r.split(" · ")[0] for r in proven(world.git)] == ["- R-01"] and "(human)" in proven(world.git)[0]
    assert sum("changed after it" in p for p in result.problems) == 2, result.problems
    # Confirmations of the lesson as it now reads count.
    for hour in (12, 13):
        world.cycle(at(10, hour))
        world.confirm(at(10, hour, 30), lesson)
    world.close(d(11), at(11, 23))
    assert any("(from L-0001; cycles 5, 6)" in line for line in proven(world.git)), proven(world.git)


def test_p2_a_lesson_and_its_confirmation_in_one_commit_count_only_if_it_logged_the_lesson_cycle(
        world: World) -> None:
    world.cycle(at(10, 8))                                                   # cycle 1
    memory = world.memory
    world.clock.moment = at(10, 9)
    memory.add_log_entry(task="t", outcome="built", result="r", cycle=2)
    memory.add_lesson(title="Born late", happened="h", why="w", change="c", rule=RULE, cycle=1)
    memory.confirm_lesson("L-0001", evidence="e", cycle=2)
    world.commit("cycle 2 with a lesson dated to cycle 1", "LOG.md", "LESSONS.md")
    found = Backing(world.git.ws())
    item = lesson_lines(world.git, "L-0001")
    verdict = found(item, item.confirmations[0][0])
    assert not verdict.ok and "itself was added in the same commit" in verdict.why


def test_p2_an_interactive_session_committing_as_the_human_is_backed_in_either_order(memrepo: GitRepo,
                                                                                     cli) -> None:
    def session(*commands: list[str]) -> None:
        for argv in commands:
            assert cli(argv, cwd=memrepo.path).code == 0
        commit_all(memrepo, "session", HUMAN)

    log_add = ["log", "add", "--task", "t", "--outcome", "built", "--result", "r"]
    session(log_add, ["lesson", "add", "--title", "Tests first", "--happened", "h", "--why", "w", "--change", "c",
                      "--rule", RULE])
    session(log_add, ["lesson", "confirm", "L-0001", "--evidence", "held"])            # log first, then confirm
    session(["lesson", "confirm", "L-0001", "--evidence", "held again"], log_add)      # confirm first, then log
    item = lesson_lines(memrepo, "L-0001")
    assert confirmed_cycles(item) == [2, 3]
    backing = Backing(memrepo.ws())
    assert all(backing(item, line).ok for line, _ in item.confirmations)
    result = run_close(memrepo.ws(), clock=lambda: datetime.now().astimezone())
    assert [p["cycles"] for p in result.promoted] == [[2, 3]]


def _cycle_on(repo: GitRepo, memory: MemoryWriter, number: int, *, confirm: str | None = None,
              lesson: bool = False) -> None:
    memory.add_log_entry(task=f"t{number}", outcome="built", result="r", cycle=number)
    if lesson:
        memory.add_lesson(title="Tests first", happened="h", why="w", change="c", rule=RULE, cycle=number)
    if confirm:
        memory.confirm_lesson(confirm, evidence="held", cycle=number)
    commit_all(repo, f"cycle {number}", AGENT)


@pytest.mark.parametrize("how", ["squash", "merge"])
def test_p2_a_pull_request_squash_merged_or_merged_keeps_its_confirmations_backed(memrepo: GitRepo,
                                                                                  how: str) -> None:
    memory = MemoryWriter(memrepo.ws())
    _cycle_on(memrepo, memory, 1)
    base = memrepo.head()
    git(memrepo.path, "checkout", "-q", "-b", "feature")
    _cycle_on(memrepo, memory, 2, lesson=True)
    _cycle_on(memrepo, memory, 3, confirm="L-0001")
    _cycle_on(memrepo, memory, 4, confirm="L-0001")
    git(memrepo.path, "checkout", "-q", "main")
    assert memrepo.head() == base
    if how == "squash":
        git(memrepo.path, "merge", "-q", "--squash", "feature")
        git(memrepo.path, "commit", "-q", "-m", "Squashed pull request #7")
    else:
        git(memrepo.path, "commit", "-q", "--allow-empty", "-m", "main moved on")
        git(memrepo.path, "merge", "-q", "--no-ff", "-m", "Merge pull request #7", "feature")
    item = lesson_lines(memrepo, "L-0001")
    backing = Backing(memrepo.ws())
    assert [backing(item, line).ok for line, _ in item.confirmations] == [True, True]


def test_p2_confirmations_are_cached_by_commit_and_dropped_when_history_is_rewritten(world: World) -> None:
    world.cycle(at(10, 8))
    lesson = world.lesson(at(10, 8, 30), "Tests first", rule=RULE)
    world.cycle(at(10, 9))
    world.confirm(at(10, 9, 30), lesson)
    item = lesson_lines(world.git, lesson)
    assert Backing(world.git.ws())(item, item.confirmations[0][0]).ok
    cache = world.git.path / ".git" / "gitmem" / "confirmations.json"
    # The cache keeps the commit that added the line, never the verdict (a planted one must not count):
    # the verdict is judged again from that commit each time.
    entries = list(json.loads(cache.read_text())["verdicts"].values())
    assert [type(entry) for entry in entries] == [str]          # a commit id, nothing else
    assert git(world.git.path, "cat-file", "-t", entries[0]).strip() == "commit"
    # Rewrite history: the same text, now added by a commit that logged nothing. The cached commit is gone.
    git(world.git.path, "reset", "-q", "--hard", "HEAD~1")
    world.git.commit_files({"LESSONS.md": world.read("LESSONS.md").replace(
        "- Status: open", "- Confirmed: 2026-11-10 (cycle 2) — it held again\n- Status: open")}, "forged")
    item = lesson_lines(world.git, lesson)
    assert not Backing(world.git.ws())(item, item.confirmations[0][0]).ok


# -- P3: a human's answer reaches the agent exactly once ------------------------------------------------------

class Runner:
    """The runner's checkout, a bare origin, and a human's clone; cycles run with --push at chosen moments."""

    def __init__(self, tmp_path: Path, repo: GitRepo) -> None:
        self.repo = repo
        self.origin = origin_and_clone(tmp_path, repo)
        self.human = clone(self.origin, tmp_path / "human", HUMAN)
        self.clock = Clock(at(30, 6, 17))
        self.shown: dict[int, list[str]] = {}          # cycle -> the newly resolved decisions it was shown

    def cycle(self, when: datetime, act: Callable[[MemoryWriter, CycleRequest], None] | None = None,
              *, fail: bool = False) -> int:
        pull(self.repo)                                   # as the Action's fresh checkout would
        self.clock.moment = when

        def run(memory: MemoryWriter, request: CycleRequest) -> None:
            part = next(p for p in request.parts if p.name == "decisions").text
            self.shown[request.cycle] = [item.id for item in decisions.parse(
                "# DECISIONS\n\n## Resolved\n\n" + part.split(NEWLY_RESOLVED, 1)[1]).resolved]
            if act is not None:
                act(memory, request)
            if fail:
                raise RuntimeError("the model API went away")
            self.clock.moment = when + timedelta(minutes=8)
            memory.add_log_entry(task="t", outcome="built", result="r", cycle=request.cycle)

        report = run_cycle(self.repo.ws(), WritingBackend(run),
                           settings=Settings(push=True, clock=self.clock, sleep=lambda _: None))
        assert report.exit_code == (ExitCode.SALVAGED if fail else ExitCode.OK), report.messages
        return report.cycle

    def answer(self, when: datetime, decision_id: str) -> None:
        pull(self.human)
        clock = Clock(when)
        with as_the_human():
            MemoryWriter(self.human.ws(), clock=clock).answer_decision(decision_id, answer="yes", name=HUMAN[0],
                                                                       email=HUMAN[1])
        git(self.human.path, "commit", "-q", "-am", f"answer {decision_id}")
        git(self.human.path, "push", "-q")


@pytest.fixture
def runner(tmp_path: Path, memrepo: GitRepo) -> Runner:
    return Runner(tmp_path, memrepo)


def ask(memory: MemoryWriter, request: CycleRequest) -> None:
    memory.ask_decision(title=f"Question of cycle {request.cycle}", recommendation="yes", cycle=request.cycle)


def test_p3_an_answer_pushed_while_a_cycle_runs_is_newly_resolved_in_the_next_cycle_only(runner: Runner) -> None:
    runner.cycle(at(30, 3, 17), ask)                                        # cycle 1 asks D-0001
    # 06:20, while the 06:17 cycle runs (it logs at 06:25 and then pushes onto the answer).
    runner.cycle(at(30, 6, 17), lambda memory, request: runner.answer(at(30, 6, 20), "D-0001"))
    runner.cycle(at(30, 9, 17))
    runner.cycle(at(30, 12, 17))
    assert runner.shown == {1: [], 2: [], 3: ["D-0001"], 4: []}


def test_p3_an_answer_committed_in_the_minute_the_next_cycle_starts_is_shown_exactly_once(runner: Runner) -> None:
    runner.cycle(at(30, 3, 17), ask)
    runner.answer(at(30, 6, 17), "D-0001")                                  # the same minute as the cycle start
    runner.cycle(at(30, 6, 17))
    runner.cycle(at(30, 9, 17))
    assert runner.shown == {1: [], 2: ["D-0001"], 3: []}


def test_p3_a_salvaged_cycle_does_not_use_up_a_newly_resolved_answer(runner: Runner) -> None:
    runner.cycle(at(30, 3, 17), ask)
    runner.answer(at(30, 4, 0), "D-0001")
    runner.cycle(at(30, 6, 17), fail=True)                                  # shown, but the cycle never landed
    runner.cycle(at(30, 9, 17))
    runner.cycle(at(30, 12, 17))
    assert runner.shown == {1: [], 2: ["D-0001"], 3: ["D-0001"], 4: []}
    salvaged = [e for e in log.parse(runner.repo.read("LOG.md")).entries if e.get(log.SALVAGED)]
    assert [e.cycle for e in salvaged] == [2]


def test_p3_an_interactive_session_reads_like_the_next_cycle_and_uses_the_answer_up(
        runner: Runner, cli, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(Workspace, "clock", lambda self: runner.clock)
    runner.cycle(at(30, 3, 17), ask)
    runner.cycle(at(30, 6, 17), lambda memory, request: runner.answer(at(30, 6, 20), "D-0001"))
    pull(runner.repo)
    shown = cli(["context", "--json"], cwd=runner.repo.path)
    part = {p["name"]: p["text"] for p in json.loads(shown.out)["parts"]}["decisions"]
    assert "D-0001" in part.split(NEWLY_RESOLVED, 1)[1]          # cycle 2 started before the answer
    # The session logs its own cycle and commits as the human: the next runner cycle does not see it again.
    runner.clock.moment = at(30, 7, 0)
    assert cli(["log", "add", "--task", "t", "--outcome", "built", "--result", "r"], cwd=runner.repo.path).code == 0
    commit_all(runner.repo, "session: cycle 3")
    git(runner.repo.path, "push", "-q")
    runner.cycle(at(30, 9, 17))
    assert runner.shown[4] == []


# -- P4: a human's word reaches main through the remote or a trusted signature ---------------------------------

def test_p4_a_commit_made_in_the_runners_checkout_during_a_cycle_is_kept_on_a_branch_and_reported(
        runner: Runner) -> None:
    runner.cycle(at(30, 3, 17), ask)
    made: list[str] = []

    def human_in_the_checkout(memory: MemoryWriter, request: CycleRequest) -> None:
        with as_the_human():
            MemoryWriter(request.workspace, clock=runner.clock).answer_decision("D-0001", answer="yes",
                                                                               name=HUMAN[0], email=HUMAN[1])
        runner.repo.stage("DECISIONS.md")
        made.append(str(runner.repo.commit("answer D-0001", author=HUMAN)))

    number = runner.cycle(at(30, 6, 17), human_in_the_checkout)
    branch = f"gitmem/local/cycle-{number}"
    assert file_at(runner.repo.repo, branch, "DECISIONS.md") is not None
    assert str(runner.repo.repo.revparse_single(branch).id) == made[0]
    assert git(runner.origin, "rev-parse", branch).strip() == made[0]          # pushed: the checkout is disposable
    # Not taken as the human's answer on main, and not silently undone: the entry says where it is.
    assert "D-0001" in [d.id for d in decisions.parse(runner.repo.read("DECISIONS.md")).pending]
    entry = log.parse(runner.repo.read("LOG.md")).entries[-1]
    assert entry.get(log.KEPT) == branch
    result = run_close(runner.repo.ws(), clock=lambda: at(30, 23))
    assert any(f"kept on branch {branch}" in p for p in result.problems)


def _signing_key(folder: Path, name: str) -> tuple[Path, str]:
    """A fresh ed25519 key pair: the private key's path and the public key line."""
    key = folder / name
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", name, "-f", str(key)], check=True)
    return key, key.with_suffix(".pub").read_text().strip()


@pytest.mark.skipif(shutil.which("ssh-keygen") is None, reason="needs ssh-keygen")
def test_p4_a_commit_signed_by_a_trusted_key_is_the_humans_and_the_cycle_goes_on_top(tmp_path: Path,
                                                                                   runner: Runner) -> None:
    key, public = _signing_key(tmp_path, "ada")
    stranger, _ = _signing_key(tmp_path, "stranger")
    config = runner.repo.read("gitmem.yaml") + f"\ntrust:\n  signing_keys:\n    - {json.dumps(public)}\n"
    runner.repo.commit_files({"gitmem.yaml": config}, "trust Ada's key")
    git(runner.repo.path, "push", "-q")
    runner.cycle(at(30, 3, 17), ask)
    env = isolated_env(who=HUMAN)

    def signed(memory: MemoryWriter, request: CycleRequest) -> None:
        with as_the_human():
            MemoryWriter(request.workspace, clock=runner.clock).answer_decision("D-0001", answer="yes",
                                                                               name=HUMAN[0], email=HUMAN[1])
        for args in (("add", "DECISIONS.md"), ("-c", "gpg.format=ssh", "-c", f"user.signingkey={key}", "commit",
                                               "-q", "-S", "-m", "answer D-0001 (signed)")):
            run_git(runner.repo.path, *args, env=env)

    runner.cycle(at(30, 6, 17), signed)
    assert "D-0001" in [d.id for d in decisions.parse(runner.repo.read("DECISIONS.md")).settled]
    messages = [c.message for c in runner.repo.repo.walk(runner.repo.repo.head.target)][:2]
    assert messages[1].startswith("answer D-0001 (signed)")
    assert not [r for r in runner.repo.repo.references if r.startswith("refs/heads/gitmem/local/")]
    # A commit signed by a key that is not listed is kept off main.

    def unlisted(memory: MemoryWriter, request: CycleRequest) -> None:
        memory.ask_decision(title="Another?", recommendation="yes", cycle=request.cycle)
        run_git(runner.repo.path, "add", "DECISIONS.md", env=env)
        run_git(runner.repo.path, "-c", "gpg.format=ssh", "-c", f"user.signingkey={stranger}", "commit", "-q", "-S",
                "-m", "signed by a stranger", env=env)

    number = runner.cycle(at(30, 9, 17), unlisted)
    assert f"refs/heads/gitmem/local/cycle-{number}" in list(runner.repo.repo.references)


# -- P5: every Rule 0 streak is written up once ---------------------------------------------------------------

def rule0(problems: list[str]) -> list[str]:
    return [p for p in problems if p.startswith("Rule 0:")]


def test_p5_three_no_build_cycles_inside_one_day_are_a_streak(world: World) -> None:
    world.cycle(at(10, 8))
    for hour in (9, 12, 15):
        world.cycle(at(10, hour), "no-build", result=f"blocked at {hour}")
    world.cycle(at(10, 18))
    found = rule0(world.close(d(10), at(10, 23)).problems)
    assert len(found) == 1 and found[0].startswith("Rule 0: cycles 2–4 (3 in a row")
    assert "Cause: blocked at 9; blocked at 12; blocked at 15" in found[0]
    titles = [item.title for item in lessons.parse(world.read("LESSONS.md")).lessons]
    assert titles == ["Rule 0: no-build streak from cycle 2"]
    assert lessons.parse(world.read("LESSONS.md")).lessons[0].get("Rule")          # it can be promoted


def test_p5_a_streak_of_two_and_two_across_midnight_is_one_streak_written_up_once(world: World) -> None:
    world.cycle(at(10, 12))
    world.cycle(at(10, 18), "no-build")
    world.cycle(at(10, 21), "no-build")
    assert rule0(world.close(d(10), at(10, 23)).problems) == []          # 2 so far: not yet a streak
    world.cycle(at(11, 0), "no-build")
    world.cycle(at(11, 3), "no-build")
    world.cycle(at(11, 6))
    found = rule0(world.close(d(11), at(11, 23)).problems)
    assert len(found) == 1 and found[0].startswith("Rule 0: cycles 2–5 (4 in a row, since 2026-11-10 18:00 UTC)")
    world.cycle(at(12, 6))
    assert rule0(world.close(d(12), at(12, 23)).problems) == []            # written up once


def test_p5_a_streak_that_continues_is_updated_not_duplicated(world: World) -> None:
    world.cycle(at(10, 12))
    for hour in (15, 18, 21):
        world.cycle(at(10, hour), "no-build")
    first = rule0(world.close(d(10), at(10, 23)).problems)
    for hour in (0, 3):
        world.cycle(at(11, hour), "no-build")
    second = rule0(world.close(d(11), at(11, 23)).problems)
    assert first[0].startswith("Rule 0: cycles 2–4") and "continues" not in first[0]
    assert second[0].startswith("Rule 0: cycles 2–6 (5 in a row") and "the streak continues" in second[0]
    assert len(lessons.parse(world.read("LESSONS.md")).lessons) == 1


def test_p5_a_streak_that_ended_on_a_day_whose_close_was_missed_is_written_up_by_the_catch_up(
        world: World) -> None:
    world.cycle(at(9, 12))
    world.close(d(9), at(9, 23))
    for hour in (9, 12, 15):
        world.cycle(at(10, hour), "no-build")
    world.cycle(at(10, 18))                                                  # the streak ended on the 10th
    world.cycle(at(11, 9))                                                   # no close on the 10th
    result = world.close(None, at(11, 23))                                   # type: ignore[arg-type]
    assert result.days == ["2026-11-10", "2026-11-11"]
    day10 = result.reports[0]
    assert day10["Day"] == "2026-11-10" and "Rule 0: cycles 2–4" in day10["Problems"]
    assert "Rule 0" not in result.reports[1].get("Problems", "")


# -- P6: a missed close is caught up, each day as of its end -----------------------------------------------------

def test_p6_a_close_covers_every_missed_day_in_order_as_of_the_end_of_each_day(world: World) -> None:
    world.cycle(at(8, 9))
    world.close(d(8), at(8, 23))
    world.ask(at(9, 10), "Which database?")
    world.cycle(at(9, 12))
    world.cycle(at(10, 12))
    world.ask(at(11, 9), "Asked on the 11th")
    world.cycle(at(11, 12))
    before = world.git.head()
    result = world.close(None, at(11, 23))                                   # type: ignore[arg-type]
    assert result.days == ["2026-11-09", "2026-11-10", "2026-11-11"]
    waiting = [r.get("Waiting", "") for r in result.reports]
    assert waiting[0] == "D-0001 · Which database? (14h)"                   # as of 24:00 on the 9th, not now
    assert waiting[1] == "D-0001 · Which database? (1d)"
    assert "D-0002" not in waiting[0] + waiting[1] and "D-0002 · Asked on the 11th" in waiting[2]
    # One plan on top of NOW, for tomorrow; the past days' plans are in their LOG entries only.
    plans = [b.heading().split(" · ")[-1] for b in now.parse(world.read("NOW.md")).blocks if b.cycle is None]
    assert plans == ["plan for 2026-11-12", "plan for 2026-11-09"]          # none for the 10th or the 11th
    world.assert_valid(before)
    # Idempotent: a second run changes nothing.
    head = world.git.head()
    assert world.close(None, at(11, 23, 30)).status == "already-closed"   # type: ignore[arg-type]
    assert world.git.head() == head


def test_p6_the_catch_up_is_bounded_and_the_first_close_starts_at_the_first_cycle() -> None:
    text = "# LOG\n\n" + "".join(f"## 2026-11-{n:02d} 09:00 UTC · cycle {n} · built\n- Task: t\n- Result: r\n\n"
                                 for n in range(1, 20))
    week = [date(2026, 11, n) for n in range(13, 20)]
    assert days_to_close(text, date(2026, 11, 19), UTC) == (week, 0)     # never closed: the last week's days
    young = "# LOG\n\n## 2026-11-18 09:00 UTC · cycle 1 · built\n- Task: t\n- Result: r\n"
    assert days_to_close(young, date(2026, 11, 19), UTC) == ([date(2026, 11, 18), date(2026, 11, 19)], 0)
    closed = text + "## 2026-11-02 23:00 UTC · close\n- Day: 2026-11-02\n- Report: r\n"
    wanted, skipped = days_to_close(closed, date(2026, 11, 19), UTC)
    assert len(wanted) == MAX_CATCH_UP == 7 and wanted[-1] == date(2026, 11, 19) and skipped == 10


def test_p6_at_most_three_promotions_per_run_even_when_catching_up(world: World) -> None:
    world.eligible_lessons(5)
    world.cycle(at(11, 9))
    world.cycle(at(12, 9))
    result = world.close(None, at(12, 23))                                   # type: ignore[arg-type]
    assert len(result.promoted) == 3


# -- P7: the close is quiet and right ------------------------------------------------------------------------

def test_p7_the_plan_skips_roadmap_items_blocked_by_a_pending_decision_the_agent_named(world: World) -> None:
    road = world.read("ROADMAP.md")
    items = [line[6:] for line in road.splitlines() if line.startswith("- [ ] ")]
    decision = world.ask(at(10, 8), "Which docs host?")
    world.clock.moment = at(10, 9)
    world.memory.add_log_entry(task=items[0], outcome="no-build", result="waiting", blocked=decision)
    world.commit("cycle 1", "LOG.md")
    result = world.close(d(10), at(10, 23))
    assert result.plan is not None and items[0] not in result.plan.split(" — why")[0]
    assert items[1][:30] in result.plan


def test_p7_rule0_hint_names_the_decision_the_agent_said_it_waits_on(world: World) -> None:
    world.ask(at(10, 7), "Oldest question")
    named = world.ask(at(10, 7, 30), "The one that blocks")
    for hour in (9, 12, 15):
        world.clock.moment = at(10, hour)
        world.memory.add_log_entry(task="docs", outcome="no-build", result="blocked", blocked=named)
        world.commit("cycle", "LOG.md")
    found = rule0(world.close(d(10), at(10, 23)).problems)
    assert f"answer {named} in DECISIONS to unblock it" in found[0] and "D-0001" not in found[0]


def test_p7_a_stale_decision_is_a_problem_at_every_close_while_it_waits(world: World) -> None:
    world.ask(at(1, 8), "Old question")
    stale = []
    for day in range(1, 20):
        world.cycle(at(day, 9))
        if day == 16:
            world.answer(at(16, 10), "D-0001")
        result = world.close(d(day), at(day, 23))
        stale.append(any("D-0001 · Old question" in p and "has waited longer than" in p for p in result.problems))
    # Over 3 whole days from day 5 on, every close until the answer; none after it.
    assert [i + 1 for i, s in enumerate(stale) if s] == list(range(5, 16))


def test_p7_the_same_age_is_shown_by_pending_status_and_the_close(world: World, cli,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    world.ask(at(8, 9), "Which database?")
    world.cycle(at(10, 9))
    result = world.close(d(10), at(10, 12))
    monkeypatch.setattr(Workspace, "clock", lambda self: world.clock)
    pending = json.loads(cli(["pending", "--json"], cwd=world.git.path).out)
    status = json.loads(cli(["status", "--json"], cwd=world.git.path).out)
    assert "D-0001 · Which database? (2d)" in result.report["Waiting"]
    assert [item["age"] for item in pending] == ["2d"]
    assert [item["age"] for item in status["pending"]] == ["2d"]


def test_p7_salvage_and_kept_branch_names_are_never_cut(world: World) -> None:
    long_result = "x" * 400
    world.clock.moment = at(10, 9)
    world.memory.add_log_entry(task="t", outcome="no-build", result=long_result,
                               extra={log.SALVAGED: "gitmem/salvage/cycle-1-very-long-name-that-must-stay-whole"})
    world.commit("cycle 1", "LOG.md")
    problems = world.close(d(10), at(10, 23)).problems
    assert any("gitmem/salvage/cycle-1-very-long-name-that-must-stay-whole)" in p for p in problems)


# -- time is real ---------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["GITMEM_TIMESTAMP", "GITMEM_NOW", "GITMEM_CLOCK", "SOURCE_DATE_EPOCH", "FAKETIME"])
def test_no_environment_variable_sets_the_clock(memrepo: GitRepo, cli, monkeypatch: pytest.MonkeyPatch,
                                                name: str) -> None:
    monkeypatch.setenv(name, "2001-01-01 00:00:00" if name != "SOURCE_DATE_EPOCH" else "978307200")
    before = datetime.now().astimezone()
    assert cli(["log", "add", "--task", "t", "--outcome", "built", "--result", "r"], cwd=memrepo.path).code == 0
    written = last_entry(memrepo.read("LOG.md")).when.moment
    assert before - timedelta(minutes=1) <= written <= datetime.now().astimezone() + timedelta(minutes=1)


def test_p3_where_history_cannot_say_the_last_cycles_time_stands_in(runner: Runner, tmp_path: Path) -> None:
    runner.cycle(at(30, 3, 17), ask)
    runner.cycle(at(30, 6, 17), ask)
    runner.answer(at(30, 6, 0), "D-0001")            # before cycle 2 logged: seen by the minute rule
    runner.answer(at(30, 8, 0), "D-0002")            # after it: new
    shallow = tmp_path / "shallow"
    git(tmp_path, "clone", "-q", "--depth", "1", f"file://{runner.origin}", str(shallow))
    copy = tmp_path / "plain"
    shutil.copytree(shallow, copy, ignore=shutil.ignore_patterns(".git"))
    for root in (shallow, copy):
        part = next(p for p in build_request(Workspace.at(root)).parts if p.name == "decisions").text
        fresh = part.split(NEWLY_RESOLVED, 1)[1]
        assert "D-0002" in fresh and "D-0001" not in fresh, root.name


def test_a_quoted_copy_of_a_sessions_heading_in_a_later_entry_does_not_move_its_baseline(memrepo: GitRepo) -> None:
    """The baseline of an entry without `Started` is the parent of the commit that added its heading: a later
    entry that quotes the heading in a code block is text, not the entry."""
    from gitmem.cycle.baseline import _added_by
    from gitmem.memory import log as log_mod

    before = memrepo.head()
    session = "\n## 2026-12-01 08:00 UTC · cycle 98 · built\n- Task: a session\n- Result: done\n"
    memrepo.commit_files({"LOG.md": memrepo.read("LOG.md") + session}, "a session's entry")
    entry = log_mod.parse(memrepo.read("LOG.md")).entries[-1]
    quoted = (f"\n## 2026-12-01 09:00 UTC · cycle 99 · built\n- Task: quote\n- Evidence: it said\n```\n"
              f"{entry.heading()}\n```\n- Result: done\n")
    memrepo.commit_files({"LOG.md": memrepo.read("LOG.md") + quoted}, "an entry quoting the session's heading")
    assert _added_by(Workspace.at(memrepo.path), memrepo.head(), entry) == before
