"""A month of an agent, run in-process with an injected clock: what a new user's first month looks like.

One repository from the template, a bare origin and a human's clone. Eight cycles a day run with `--push`
through the real runner; the agent is scripted and writes memory only through the `gitmem` CLI (in-process,
with GITMEM_CYCLE from the runner, as a command agent would). The human asks nothing and answers decisions at
awkward moments: while a cycle runs, in the minute the next one starts, in the runner's own checkout. A close
runs each evening, except on two days; one runs 11 hours late, the next morning after four cycles, and one
runs a second time the next morning, as GitHub's late scheduled runs do. The clock is a test double handed to
the runner and the close, and patched into `Workspace.clock` for the CLI: nothing in production lets an agent
set it.

`Month.run()` records what each cycle was shown and what each close wrote; tests/e2e/test_long_horizon.py asserts.
"""
from __future__ import annotations

import contextlib
import io
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import pytest

from gitmem.agents.base import AgentResult, CycleRequest
from gitmem.cli import main as gitmem_main
from gitmem.close import CloseResult, run_close
from gitmem.cycle.budget import NEWLY_RESOLVED
from gitmem.cycle.runner import CycleReport, Settings, run_cycle
from gitmem.errors import ExitCode, GitmemError
from gitmem.memory import decisions, log
from gitmem.memory_writer import MemoryWriter
from gitmem.workspace import Workspace
from tests.support.cycle_support import clone, origin_and_clone, pull
from tests.support.gitcli import git, run_git
from tests.support.helpers import HUMAN, GitRepo, as_the_human
from tests.support.world import Clock

UTC = UTC
DAYS = 30
SLOTS = (0, 3, 6, 9, 12, 15, 18, 21)          # cycle start hours, at minute 17
MISSED_CLOSES = (12, 13)
LATE_CLOSES = {25: (26, 10, 47)}              # day -> when its close runs instead: (day, hour, minute)
REPEATED_CLOSES = {27: (28, 9, 47)}           # day -> when its close runs a second time
ROADMAP = """# ROADMAP

## Month one (current)
- [ ] Docs site
- [ ] Search command
- [ ] Release v1
"""
RULES_MAX = 3


def at(day: int, hour: int, minute: int = 0) -> datetime:
    return datetime(2026, 10, 31, tzinfo=UTC) + timedelta(days=day, hours=hour, minutes=minute)   # day 1: Nov 1


def on(day: int) -> date:
    return at(day, 0).date()


@dataclass
class CliCall:
    argv: list[str]
    code: int
    out: str
    err: str


@dataclass
class CycleSeen:
    cycle: int
    day: int
    slot: int
    shown: list[str]                       # decisions shown as newly resolved
    tokens: int                            # the context's total tokens
    report: CycleReport | None = None

    @property
    def landed(self) -> bool:
        """The cycle's own work reached the branch (a salvaged cycle logs only that it failed)."""
        return self.report is not None and self.report.exit_code == ExitCode.OK


@dataclass
class Month:
    tmp: Path
    repo: GitRepo                          # the runner's checkout
    monkeypatch: pytest.MonkeyPatch
    clock: Clock = field(default_factory=lambda: Clock(at(1, 0)))
    cycles: list[CycleSeen] = field(default_factory=list)
    closes: list[tuple[int, CloseResult]] = field(default_factory=list)
    repeated: list[tuple[int, CloseResult]] = field(default_factory=list)    # the second runs of a day's close
    calls: list[CliCall] = field(default_factory=list)
    wrote: dict[str, list[tuple[str, int]]] = field(default_factory=dict)   # lesson id -> (kind, cycle) written
    ids: dict[str, str] = field(default_factory=dict)                        # lesson title -> its id
    late_confirmation: str | None = None   # the commit that added the 23:46 confirmation
    kept_branch: str | None = None
    answers: dict[str, datetime] = field(default_factory=dict)
    sessions: list[int] = field(default_factory=list)        # cycle numbers the human's sessions wrote
    amendments: list[int] = field(default_factory=list)      # cycle numbers of the human's LOG amendments
    fast_session: int | None = None                           # the entry written on a clock 3 h fast
    raced: CycleSeen | None = None                            # the cycle a session's push raced
    refused: GitmemError | None = None                        # the cycle that met a malformed entry on main
    malformed_line: int | None = None

    def __post_init__(self) -> None:
        self.origin = origin_and_clone(self.tmp, self.repo)
        self.human = clone(self.origin, self.tmp / "human", HUMAN)
        self.monkeypatch.setattr(Workspace, "clock", lambda ws: self.clock)
        config = self.repo.read("gitmem.yaml").replace("proven_rules_max: 30", f"proven_rules_max: {RULES_MAX}")
        self.repo.commit_files({"ROADMAP.md": ROADMAP, "gitmem.yaml": config}, "the month's roadmap")
        git(self.repo.path, "push", "-q")

    # -- the parts ----------------------------------------------------------------------------------------------
    def gitmem(self, argv: list[str], cwd: Path, env: dict[str, str] | None = None) -> CliCall:
        """`gitmem ARGV` in-process in `cwd`, with `env` added to the environment for the call."""
        out, err = io.StringIO(), io.StringIO()
        with pytest.MonkeyPatch.context() as patch, contextlib.chdir(cwd), contextlib.redirect_stdout(out), \
                contextlib.redirect_stderr(err):
            for key, value in (env or {}).items():
                patch.setenv(key, value)
            code = gitmem_main(argv)
        call = CliCall(argv, code, out.getvalue(), err.getvalue())
        self.calls.append(call)
        return call

    def human_answers(self, when: datetime, decision_id: str) -> None:
        """The human answers in their own clone and pushes (as a merged pull request would land)."""
        pull(self.human)
        self.clock.moment = when
        with as_the_human():
            MemoryWriter(self.human.ws(), clock=Clock(when)).answer_decision(
                decision_id, answer="yes, go ahead", name=HUMAN[0], email=HUMAN[1])
        git(self.human.path, "commit", "-q", "-am", f"Answer {decision_id}")
        git(self.human.path, "push", "-q")
        self.answers[decision_id] = when

    def human_opens_an_answer_pr(self, when: datetime, decision_id: str) -> None:
        """The human answers in place on a branch and pushes it: a pull request, left open while the agent asks."""
        pull(self.human)
        self.clock.moment = when
        branch = f"answer-{decision_id.lower()}"
        git(self.human.path, "switch", "-q", "-c", branch)
        with as_the_human():
            MemoryWriter(self.human.ws(), clock=Clock(when)).answer_decision(
                decision_id, answer="yes, rename it", name=HUMAN[0], email=HUMAN[1])
        git(self.human.path, "commit", "-q", "-am", f"Answer {decision_id}")
        git(self.human.path, "push", "-q", "origin", branch)
        git(self.human.path, "switch", "-q", "main")

    def human_merges_the_answer_pr(self, when: datetime, decision_id: str) -> None:
        """The pull request merges as GitHub's button merges it: git's own 3-way merge, no merge driver. The
        agent asked meanwhile; nobody resolves a conflict by hand."""
        pull(self.human)
        self.clock.moment = when
        done = run_git(self.human.path, "merge", "--no-ff", "--no-edit", f"origin/answer-{decision_id.lower()}",
                       check=False)
        assert done.returncode == 0 and "CONFLICT" not in done.stdout, done.stdout + done.stderr
        git(self.human.path, "push", "-q")
        self.answers[decision_id] = when

    def human_session_entry(self, clock_reads: datetime, task: str) -> int:
        """The human's interactive session writes one LOG entry (`gitmem log add`) in their own clone, on a
        clock that reads `clock_reads`, commits and pushes it; its cycle number."""
        pull(self.human)
        saved = self.clock.moment
        self.clock.moment = clock_reads
        with as_the_human():
            done = self.gitmem(["log", "add", "--task", task, "--outcome", "built", "--result", "done by hand"],
                               self.human.path)
        assert done.code == 0, done.err
        git(self.human.path, "commit", "-q", "-am", task)
        git(self.human.path, "push", "-q")
        self.clock.moment = saved
        number = log.tail(self.human.read("LOG.md"), 1).entries[-1].cycle
        assert number is not None
        self.sessions.append(number)
        return number

    # -- one cycle ------------------------------------------------------------------------------------------------
    def cycle(self, day: int, slot: int) -> CycleSeen:
        pull(self.repo)                          # the Action checks out the branch fresh
        start = at(day, SLOTS[slot], 17)
        self.clock.moment = start
        month = self

        class ScriptedAgent:
            name = "command"

            def run(self, request: CycleRequest) -> AgentResult:
                part = next(p for p in request.parts if p.name == "decisions").text
                shown = [d.id for d in decisions.parse("# DECISIONS\n\n## Resolved\n\n"
                                                       + part.split(NEWLY_RESOLVED, 1)[1]).resolved]
                seen = CycleSeen(request.cycle, day, slot, shown, request.total_tokens)
                month.cycles.append(seen)
                month.act(day, slot, request)
                return AgentResult(turns=4, usage={"input_tokens": request.total_tokens, "output_tokens": 400},
                                   stop_reason="end_turn")

        report = run_cycle(Workspace.at(self.repo.path), ScriptedAgent(),
                           settings=Settings(push=True, clock=self.clock, sleep=lambda _: None))
        self.cycles[-1].report = report
        return self.cycles[-1]

    def act(self, day: int, slot: int, request: CycleRequest) -> None:
        """The agent's script: mostly build the top unblocked item; the month's events on chosen slots."""
        env = dict(request.env)
        root = request.root
        cycle = request.cycle

        def cli(*argv: str) -> CliCall:
            return self.gitmem(list(argv), root, env)

        def later(minutes: int) -> None:
            self.clock.moment = at(day, SLOTS[slot], 17 + minutes)

        later(2)
        event = EVENTS.get((day, slot))
        task, outcome, result, blocked = "Search command", "built", "a piece of it works", None
        if on_docs(day):
            task = "Docs site"
        if event is not None:
            task, outcome, result, blocked = event(self, cli, cycle) or (task, outcome, result, blocked)
        if outcome == "raise":
            raise RuntimeError("the model API went away")
        later(8)
        args = ["log", "add", "--task", task, "--outcome", outcome, "--result", result]
        if blocked:
            args += ["--blocked", blocked]
        assert cli(*args).code == 0
        assert cli("now", "add", "--did", task, "--human", "nothing", "--next", "carry on").code == 0
        after = AFTER_LOG.get((day, slot))
        if after is not None:
            after(self, cli, cycle)

    def record(self, lesson_id: str, kind: str, cycle: int) -> None:
        self.wrote.setdefault(lesson_id, []).append((kind, cycle))

    # -- the close --------------------------------------------------------------------------------------------
    def close(self, day: int, when: datetime | None = None) -> CloseResult:
        """The scheduled close (no day given: it finds its day by the clock), at 23:30 of `day` or at `when`."""
        pull(self.repo)
        self.clock.moment = when or at(day, 23, 30)
        result = run_close(Workspace.at(self.repo.path), push=True, clock=self.clock)
        (self.repeated if when is not None and day in REPEATED_CLOSES else self.closes).append((day, result))
        return result

    def run(self) -> Month:
        for day in range(1, DAYS + 1):
            for slot in range(len(SLOTS)):
                for hook in BEFORE.get((day, slot), ()):
                    hook(self)
                self.cycle(day, slot)
                later = SLOTS[slot + 1] if slot + 1 < len(SLOTS) else 24
                for closed, (on_day, hour, minute) in (*LATE_CLOSES.items(), *REPEATED_CLOSES.items()):
                    if on_day == day and SLOTS[slot] <= hour < later:
                        self.close(closed, at(on_day, hour, minute))
            if day not in MISSED_CLOSES and day not in LATE_CLOSES:
                self.close(day)
        return self


# -- the script -------------------------------------------------------------------------------------------------

Call = Callable[..., CliCall]
Outcome = tuple[str, str, str, "str | None"]


def on_docs(day: int) -> bool:
    """The agent works on the docs site before it is blocked, and again once its host is chosen."""
    return day == 1 or day >= 9


def lesson(title: str, rule: str, supersedes: str | None = None) -> Callable[[Month, Call, int], None]:
    def write(month: Month, cli: Call, cycle: int) -> None:
        args = ["lesson", "add", "--title", title, "--happened", "it went wrong", "--why", "a reason",
                "--change", "do it differently", "--rule", rule, "--json"]
        if supersedes:
            args += ["--supersedes", supersedes]
        done = cli(*args)
        assert done.code == 0, done.err
        month.ids[title] = json.loads(done.out)["id"]
        month.record(month.ids[title], "happened", cycle)
    return write


def confirm(title: str) -> Callable[[Month, Call, int], None]:
    def write(month: Month, cli: Call, cycle: int) -> None:
        done = cli("lesson", "confirm", month.ids[title], "--evidence", "it held again")
        assert done.code == 0, done.err
        month.record(month.ids[title], "confirmed", cycle)
    return write


def both(*steps: Callable[[Month, Call, int], object]) -> Callable[[Month, Call, int], None]:
    def run(month: Month, cli: Call, cycle: int) -> None:
        for step in steps:
            step(month, cli, cycle)
    return run


def no_build(reason: str, blocked: str | None = None) -> Callable[[Month, Call, int], Outcome]:
    def run(month: Month, cli: Call, cycle: int) -> Outcome:
        return ("Docs site" if blocked == "D-0001" else "Release v1", "no-build", reason, blocked)
    return run


def ask(title: str, expected: str) -> Callable[[Month, Call, int], None]:
    def run(month: Month, cli: Call, cycle: int) -> None:
        done = cli("decision", "ask", "--title", title, "--recommendation", "the simple option", "--json")
        assert done.code == 0 and json.loads(done.out)["id"] == expected, done.out + done.err
    return run


def blocked_on_docs_host(month: Month, cli: Call, cycle: int) -> Outcome:
    ask("Which host for the docs site?", "D-0001")(month, cli, cycle)
    return "Docs site", "built", "a draft, but the host is not chosen", "D-0001"


def twice_in_one_cycle(month: Month, cli: Call, cycle: int) -> None:
    """The same lesson confirmed again after the LOG entry, in the same cycle: refused, with the reason."""
    done = cli("lesson", "confirm", month.ids[TESTS_FIRST], "--evidence", "and again")
    assert done.code != 0 and "cycle" in done.err, done.err


def human_commits_in_the_checkout(month: Month, cli: Call, cycle: int) -> None:
    """The human answers in the runner's own checkout while the cycle runs, and commits there."""
    with as_the_human():
        MemoryWriter(Workspace.at(month.repo.path), clock=month.clock).answer_decision(
            "D-0005", answer="yes", name=HUMAN[0], email=HUMAN[1])
    month.repo.stage("DECISIONS.md")
    month.repo.commit("Answer D-0005 (in the runner's checkout)", author=HUMAN)


def streak(reason: str, blocked: str | None = None) -> Callable[[Month, Call, int], Outcome]:
    return no_build(reason, blocked)


def crash(month: Month, cli: Call, cycle: int) -> Outcome:
    return "Search command", "raise", "", None


def answer_while_running(decision_id: str, hour: int, minute: int) -> Callable[[Month, Call, int], None]:
    def run(month: Month, cli: Call, cycle: int) -> None:
        day = month.cycles[-1].day
        saved = month.clock.moment
        month.human_answers(at(day, hour, minute), decision_id)
        month.clock.moment = saved
    return run


def with_event(step: Callable[[Month, Call, int], object],
               then: Callable[[Month, Call, int], Outcome] | None = None
               ) -> Callable[[Month, Call, int], Outcome | None]:
    def run(month: Month, cli: Call, cycle: int) -> Outcome | None:
        step(month, cli, cycle)
        return then(month, cli, cycle) if then is not None else None
    return run


def late_confirmation(month: Month) -> None:
    """23:46 on day 3, after the close: `gitmem lesson confirm` outside any cycle, committed by the human."""
    pull(month.human)
    month.clock.moment = at(3, 23, 46)
    done = month.gitmem(["lesson", "confirm", month.ids[SMALL_PRS], "--evidence", "it held, noted late"],
                        month.human.path)
    assert done.code == 0 and "no cycle is running" in done.err
    git(month.human.path, "commit", "-q", "-am", "Confirm L-0003")
    git(month.human.path, "push", "-q")
    month.late_confirmation = git(month.human.path, "rev-parse", "HEAD").strip()


def laptop_three_hours_fast(month: Month) -> None:
    """06:00 on day 23: the human's session on a laptop whose clock reads 09:00 pushes an entry dated ahead of
    the next scheduled cycle (06:17 by the runner's true clock)."""
    month.fast_session = month.human_session_entry(at(23, 9, 0), "Fix a typo, on a laptop 3 h fast")


def session_races_the_cycle(month: Month, cli: Call, cycle: int) -> None:
    """While the 12:17 cycle of day 29 runs, the human's session takes the same cycle number and pushes first."""
    month.raced = month.cycles[-1]
    number = month.human_session_entry(at(29, 12, 20), "Answer a user's question, in a session")
    assert number == cycle, (number, cycle)


def malformed_entry_on_main(month: Month) -> None:
    """00:05 on day 30: a hand-typed heading reaches main without the check (`--no-verify`, a web edit merged
    without the required check). The next cycle refuses to build on it, naming the line and the repair; the
    human amends it (`gitmem log amend`), and the cycles go on."""
    pull(month.human)
    month.clock.moment = at(30, 0, 5)
    text = month.human.read("LOG.md").rstrip("\n") + "\n"
    month.malformed_line = text.count("\n") + 2
    month.human.write("LOG.md", text + "\n## 2026-11-30 00:05 UTC · cycle 9999 · shipped\n- Task: a hand edit\n"
                      "- Result: merged without the check\n")
    git(month.human.path, "commit", "-q", "--no-verify", "-am", "A hand edit of LOG")
    git(month.human.path, "push", "-q")
    pull(month.repo)
    month.clock.moment = at(30, 0, 17)

    class Unused:
        name = "command"

        def run(self, request: CycleRequest) -> AgentResult:
            raise AssertionError("the agent ran on invalid memory")

    try:
        run_cycle(Workspace.at(month.repo.path), Unused(), settings=Settings(push=True, clock=month.clock,
                                                                           sleep=lambda _: None))
    except GitmemError as refused:
        month.refused = refused
    pull(month.human)
    month.clock.moment = at(30, 0, 20)
    with as_the_human():
        done = month.gitmem(["log", "amend", "--line", str(month.malformed_line), "--task", "a hand edit",
                             "--outcome", "built", "--result", "merged without the check, amended"],
                            month.human.path)
    assert done.code == 0, done.out + done.err
    git(month.human.path, "commit", "-q", "-am", "Amend the hand edit of LOG")
    git(month.human.path, "push", "-q")
    number = log.tail(month.human.read("LOG.md"), 1).entries[-1].cycle
    assert number is not None
    month.amendments.append(number)


def open_answer_pr(decision_id: str, day: int, hour: int, minute: int) -> Callable[[Month], None]:
    def run(month: Month) -> None:
        month.human_opens_an_answer_pr(at(day, hour, minute), decision_id)
    return run


def merge_answer_pr(decision_id: str, day: int, hour: int, minute: int) -> Callable[[Month], None]:
    def run(month: Month) -> None:
        month.human_merges_the_answer_pr(at(day, hour, minute), decision_id)
    return run


def answer(decision_id: str, day: int, hour: int, minute: int) -> Callable[[Month], None]:
    def run(month: Month) -> None:
        month.human_answers(at(day, hour, minute), decision_id)
    return run


TESTS_FIRST, READ_ERRORS, SMALL_PRS = "Tests before commits", "Read the error first", "Small pull requests"
PIN, CHANGELOG, SMALLER = "Pin the toolchain", "Changelog first", "Smaller releases"
EVENTS: dict[tuple[int, int], Callable[[Month, Call, int], Outcome | None]] = {
    # P1: a lesson written before the LOG entry, confirmed in later cycles (before the LOG entry, after it,
    # and once refused for repeating its cycle).
    (1, 2): with_event(lesson(TESTS_FIRST, "Run the tests before every commit.")),
    (1, 5): with_event(confirm(TESTS_FIRST)),
    (2, 0): blocked_on_docs_host,
    (3, 3): with_event(lesson(SMALL_PRS, "Keep every pull request under 300 lines.")),
    (3, 6): with_event(confirm(SMALL_PRS)),
    (4, 2): with_event(ask("Which licence?", "D-0002")),                        # never answered: stale
    (5, 3): streak("the build server was down"),
    (5, 4): streak("the build server was down"),
    (5, 5): streak("the build server was down"),
    (6, 0): with_event(lesson(PIN, "Pin every tool version in the lockfile.")),
    (6, 3): with_event(confirm(PIN)),
    (7, 3): with_event(confirm(PIN)),
    (7, 6): streak("the registry was unreachable"),
    (7, 7): streak("the registry was unreachable"),
    (8, 0): streak("the registry was unreachable"),
    (8, 1): streak("the registry was unreachable"),
    (8, 4): with_event(confirm(SMALL_PRS)),
    # P3: the human answers D-0001 at 06:20 while the 06:17 cycle runs.
    (9, 2): with_event(answer_while_running("D-0001", 6, 20)),
    (10, 0): with_event(ask("Publish to the package index?", "D-0003")),
    (10, 1): with_event(lesson(CHANGELOG, "Write the changelog entry before the code.")),
    (10, 4): with_event(confirm(CHANGELOG)),
    (11, 4): with_event(confirm(CHANGELOG)),
    (12, 2): streak("tests flaked on the runner"),
    (12, 3): streak("tests flaked on the runner"),
    (12, 4): streak("tests flaked on the runner"),
    (15, 0): with_event(ask("Rename the CLI?", "D-0004")),
    (15, 1): with_event(ask("Weekly report by mail?", "D-0005")),
    # P4: an answer committed in the runner's checkout during a cycle.
    (15, 2): with_event(human_commits_in_the_checkout),
    (16, 0): with_event(ask("Drop Python 3.11?", "D-0006")),
    (17, 3): crash,                                                             # salvaged, after D-0006's answer
    (18, 0): with_event(lesson(SMALLER, "Release at most one feature at a time.", supersedes="R-01")),
    (18, 3): with_event(confirm(SMALLER)),
    (19, 3): with_event(confirm(SMALLER)),
    (20, 4): with_event(ask("Which database for search?", "D-0007")),          # blocks the long streak
    **{(20, s): streak("waiting for the database choice", "D-0007") for s in (5, 6, 7)},
    **{(21, s): streak("waiting for the database choice", "D-0007") for s in range(8)},
    # Two writers: a session pushes while the cycle runs and takes its number; the cycle lands second.
    (29, 4): with_event(session_races_the_cycle),
}
AFTER_LOG: dict[tuple[int, int], Callable[[Month, Call, int], None]] = {
    (1, 5): twice_in_one_cycle,
    (2, 1): confirm(TESTS_FIRST),
    # The case: a lesson added after the cycle's LOG entry, confirmed in the very next cycle.
    (3, 0): lesson(READ_ERRORS, "Quote the first error line in the LOG entry."),
    (3, 1): confirm(READ_ERRORS),
    (4, 0): confirm(READ_ERRORS),
}
BEFORE: dict[tuple[int, int], list[Callable[[Month], None]]] = {
    # P3: an answer committed in the minute the next cycle starts.
    (11, 3): [answer("D-0003", 11, 9, 17)],
    # An answer's pull request open while the agent asks D-0005 and D-0006 on main, merged without a conflict.
    (15, 1): [open_answer_pr("D-0004", 15, 2, 0)],
    (16, 1): [merge_answer_pr("D-0004", 16, 2, 0)],
    (16, 3): [answer("D-0005", 16, 9, 0)],     # the answer kept off main on day 15, now through the remote
    (17, 3): [answer("D-0006", 17, 8, 0)],
    (22, 0): [answer("D-0007", 22, 0, 5)],
    # Time: another writer's clock 3 h fast never stops a scheduled cycle.
    (23, 2): [laptop_three_hours_fast],
    # A bad entry on main has a way out: the cycle refuses it, the human amends it.
    (30, 0): [malformed_entry_on_main],
}
# The 23:46 confirmation comes after day 3's 23:30 close: the first thing before day 4's first cycle.
BEFORE.setdefault((4, 0), []).insert(0, late_confirmation)
