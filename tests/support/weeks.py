"""Weeks of an agent and its human, drawn at random from a seed: two writers, clocks that disagree, late schedules.

One bare origin; the runner's clone, where a cycle runs every 3 hours (GitHub starts it 0-5 hours late) and the
daily close at 23:47 in the configured zone (drawn: UTC, New York over the night its clocks go back, Kolkata,
Auckland, Madrid), sometimes after midnight, sometimes also run by the human from their clone, hours early or in
the same moment (their close lands between the runner's close's fetch and push); the human's clone, on a clock off
by a fixed -5..+5 hours (their commits dated by it), where they commit work, write session entries, answer
decisions on main or on a branch merged like a pull request (GitHub's button: git's merge with no driver; or
`gitmem merge`), push a malformed LOG heading past the check now and then, and sometimes push while a cycle runs
(the runner's pre-push hook pushes the human's commit between the cycle's fetch and its push). The clock is a
test double; the real runner, close and CLI do the rest.

`Weeks.check` runs after every step: the required check passes on origin's main (but for what docs/format.md
says fails: a fast laptop's entry, GM309, and the range that brought a malformed heading), every commit the human
pushed is on main and their files as they wrote them, answered decisions stay answered and are never pending
again, each answer is shown as newly resolved by the first cycle that starts after it lands (unless a session
landed first), the runner's LOG times come from its clock and are in order, and no two cycles in a row fail (a
refused cycle gets the documented repair, `gitmem log amend`). `final_checks` adds: every day with a cycle has
a close, the close reports count each cycle once, and a day's second close reports cycles.
"""
from __future__ import annotations

import contextlib
import io
import random
import shutil
import sys
from dataclasses import dataclass, field
from datetime import UTC, datetime, time, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import pygit2
import pytest

from gitmem.agents.base import AgentResult, CycleRequest
from gitmem.checks.check_and_verify import verify_range
from gitmem.cli import main as gitmem_main
from gitmem.close import run_close
from gitmem.config import Config
from gitmem.cycle.budget import NEWLY_RESOLVED
from gitmem.cycle.runner import Settings, run_cycle
from gitmem.errors import ExitCode, GitmemError
from gitmem.gitio import Repo
from gitmem.memory import decisions, log
from gitmem.memory.clock_skew import CLOCK_SKEW
from gitmem.memory_writer import MemoryWriter, WriteRefused
from gitmem.workspace import Workspace
from tests.support.cycle_support import clone, origin_and_clone
from tests.support.gitcli import git, isolated_env, run_git
from tests.support.helpers import HUMAN, as_the_human, make_repo
from tests.support.world import Clock

FAKETIME = shutil.which("faketime")
GITMEM = Path(sys.executable).parent / "gitmem"
START = datetime(2026, 10, 29, tzinfo=UTC)      # day 0: America's clocks go back on day 3 (1 November)
ZONES = ("UTC", "America/New_York", "Asia/Kolkata", "Pacific/Auckland", "Europe/Madrid")
SLOTS = (0, 3, 6, 9, 12, 15, 18, 21)            # scheduled cycle hours, at minute 17
HAND_EDIT_CHANCE = 0.04                         # of a human action: a malformed LOG heading pushed past the check


class SimulationFailed(AssertionError):
    pass


@dataclass
class Step:
    what: str
    when: datetime


@dataclass
class RunnerCycle:
    number: int
    start: datetime
    end: datetime
    shown: tuple[str, ...] = ()            # the decisions its context showed as newly resolved


@dataclass
class Weeks:
    tmp: Path
    seed: int
    days: int
    monkeypatch: pytest.MonkeyPatch
    clock: Clock = field(default_factory=lambda: Clock(START))
    steps: list[Step] = field(default_factory=list)
    runner_cycles: list[RunnerCycle] = field(default_factory=list)
    human_pushed: list[str] = field(default_factory=list)          # commits the human pushed
    human_files: dict[str, str] = field(default_factory=dict)      # work files the human pushed -> content
    answered: dict[str, str] = field(default_factory=dict)         # decision id -> title, answered by the human
    open_prs: list[tuple[str, str, str]] = field(default_factory=list)   # (branch, decision id, title)
    refused_in_a_row: int = 0
    refusals: list[str] = field(default_factory=list)
    closed_days: set[str] = field(default_factory=set)
    shown: tuple[str, ...] = ()            # what the running cycle's context showed as newly resolved
    pushed_by_hook: str | None = None      # the human's commit the runner's pre-push hook pushes
    verified: str | None = None
    merges: list[str] = field(default_factory=list)
    races: int = 0
    close_races: int = 0
    human_closes: int = 0
    twice_closed: list[str] = field(default_factory=list)
    answers_landed: dict[str, int] = field(default_factory=dict)   # decision id -> the landed cycles before it
    # Answers on main that no cycle or session has read yet: the first cycle that starts after an answer lands
    # shows it as newly resolved, once; a session that lands first read it (docs/format.md, answers in place).
    unseen: set[str] = field(default_factory=set)
    expected_shown: set[str] = field(default_factory=set)
    wrongly_shown: str | None = None
    malformed_line: int | None = None      # a hand-typed LOG heading on main, not yet amended
    brought_malformed: bool = False        # the step that pushed it: its range fails verify, at that line
    amendments: int = 0

    def __post_init__(self) -> None:
        self.rng = random.Random(self.seed)
        self.skew = timedelta(minutes=self.rng.randint(-300, 300))     # the human's clock, off by this much
        self.zone = ZoneInfo(self.rng.choice(ZONES))                   # the configured `timezone`
        self.repo = make_repo(self.tmp / "runner")
        config = self.repo.read("gitmem.yaml").replace("timezone: UTC ", f"timezone: {self.zone.key} ")
        assert f"timezone: {self.zone.key}" in config
        self.repo.write("gitmem.yaml", config)
        # Every clock reads in the configured zone, as Workspace.clock does.
        self.monkeypatch.setattr(Workspace, "clock", lambda ws: self.zoned)
        self._cli(["init"], self.repo.path)                    # what `gitmem init` adds is committed with the rest
        git(self.repo.path, "add", "-A")
        git(self.repo.path, "commit", "-q", "-m", "gitmem init")
        self.origin = origin_and_clone(self.tmp, self.repo)
        self.human = clone(self.origin, self.tmp / "human", HUMAN)
        self._cli(["init"], self.human.path)                   # the merge driver, as README asks of every clone
        assert git(self.human.path, "status", "--porcelain") == ""
        self.hook = self.repo.path / ".git" / "hooks" / "pre-push"

    # -- the parts ------------------------------------------------------------------------------------------------
    def _cli(self, argv: list[str], cwd: Path) -> tuple[int, str]:
        out = io.StringIO()
        with contextlib.chdir(cwd), contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
            code = gitmem_main(argv)
        return code, out.getvalue()

    def zoned(self) -> datetime:
        return self.clock.moment.astimezone(self.zone)

    def _human_reads(self, true: datetime) -> datetime:
        return (true + self.skew).astimezone(self.zone)

    def _origin_text(self, rel: str) -> str:
        return git(self.origin, "show", f"main:{rel}")

    def _fresh_checkout(self) -> None:
        """The Action checks the branch out fresh: what the last run left unpushed is gone (it pushed a branch)."""
        git(self.repo.path, "fetch", "-q", "origin")
        git(self.repo.path, "checkout", "-q", "-B", "main", "origin/main")
        git(self.repo.path, "clean", "-qfd")

    def _hgit(self, *args: str, true: datetime) -> str:
        """`git ARGS` in the human's clone, its commits dated by the human's clock, as git dates them."""
        stamp = f"{self._human_reads(true).astimezone(UTC):%Y-%m-%dT%H:%M:%S+0000}"
        env = isolated_env(who=HUMAN)
        env.update(GIT_AUTHOR_DATE=stamp, GIT_COMMITTER_DATE=stamp)
        return run_git(self.human.path, *args, env=env).stdout

    def _human_sync(self) -> None:
        git(self.human.path, "switch", "-q", "main")
        git(self.human.path, "pull", "-q", "--ff-only")

    def _human_push(self) -> None:
        git(self.human.path, "push", "-q", "origin", "main")
        self.human_pushed.append(git(self.human.path, "rev-parse", "HEAD").strip())

    # -- the human ------------------------------------------------------------------------------------------------
    def _human_work(self, true: datetime) -> None:
        """A commit of the human's own work (not memory)."""
        name = f"work/{true:%m%d-%H%M}-{self.rng.randint(0, 999)}.txt"
        text = f"the human's work at {self._human_reads(true):%Y-%m-%d %H:%M}\n"
        path = self.human.path / name
        path.parent.mkdir(exist_ok=True)
        path.write_text(text, encoding="utf-8")
        git(self.human.path, "add", name)
        self._hgit("commit", "-q", "-m", f"Work: {name}", true=true)
        self.human_files[name] = text

    def _human_answer(self, true: datetime, decision: decisions.Decision) -> None:
        with as_the_human():
            MemoryWriter(self.human.ws(), clock=Clock(self._human_reads(true))).answer_decision(
                decision.id, answer="yes, go ahead", name=HUMAN[0], email=HUMAN[1])
        self._hgit("commit", "-q", "-am", f"Answer {decision.id}", true=true)
        self.answered[decision.id] = decision.title

    def _human_session(self, true: datetime) -> None:
        """An interactive session's LOG entry and NOW block, on the human's clock."""
        self.clock.moment = self._human_reads(true)
        with as_the_human():
            for argv in (["log", "add", "--task", f"session at {true:%d %H:%M}", "--outcome", "built",
                          "--result", "done by hand"],
                         ["now", "add", "--did", "a session", "--human", "nothing", "--next", "carry on"]):
                code, said = self._cli(argv, self.human.path)
                assert code == 0, said
        self._hgit("commit", "-q", "-am", f"Session at {true:%d %H:%M}", true=true)

    def _pending(self) -> list[decisions.Decision]:
        return [d for d in decisions.parse(self.human.read("DECISIONS.md")).pending
                if not d.is_answered and d.id not in self.answered and all(d.id != pr[1] for pr in self.open_prs)]

    def human_acts(self, true: datetime) -> None:
        """One thing the human does at `true` (their clock reads it off by the skew), pushed to origin."""
        self._human_sync()
        choice = self.rng.random()
        pending = self._pending()
        if self.open_prs and choice < 0.25:
            self._merge_pr(true)
            return
        if self.malformed_line is None and self.rng.random() < HAND_EDIT_CHANCE:
            self._hand_edit(true)
            return
        if pending and choice < 0.55:
            decision = self.rng.choice(pending)
            if self.rng.random() < 0.5:
                self._open_pr(true, decision)
                return
            self._human_answer(true, decision)
            what = f"answer {decision.id}"
        elif choice < 0.8 and self.malformed_line is None:    # `log add` refuses to build on a bad entry
            self._human_session(true)
            self.unseen.clear()
            what = "a session"
        else:
            self._human_work(true)
            what = "work"
        self._human_push()
        self._step(f"human pushed {what}", true)

    def _hand_edit(self, true: datetime) -> None:
        """A hand-typed LOG heading reaches main without the check (`--no-verify`, a web edit merged without the
        required check): the range that brings it fails verify, and the next cycle refuses to build on it."""
        text = self.human.read("LOG.md").rstrip("\n") + "\n"
        self.malformed_line = text.count("\n") + 2
        heading = f"{self._human_reads(true):%Y-%m-%d %H:%M} UTC · cycle 9999 · shipped"
        self.human.write("LOG.md", text + f"\n## {heading}\n- Task: a hand edit\n- Result: merged without the check\n")
        self._hgit("commit", "-q", "--no-verify", "-am", "A hand edit of LOG", true=true)
        self._human_push()
        self.brought_malformed = True
        self._step(f"human pushed a malformed LOG entry at line {self.malformed_line}", true)

    def amend(self, true: datetime) -> None:
        """The documented way out of a refused cycle: `gitmem log amend --line N`, committed and pushed."""
        assert self.malformed_line is not None, "a cycle was refused, and nothing on main is malformed"
        self._human_sync()
        self.clock.moment = self._human_reads(true)
        with as_the_human():
            code, said = self._cli(["log", "amend", "--line", str(self.malformed_line), "--task", "a hand edit",
                                    "--outcome", "built", "--result", "merged without the check, amended"],
                                   self.human.path)
        assert code == 0, said
        self._hgit("commit", "-q", "-am", "Amend the hand edit of LOG", true=true)
        self._human_push()
        self.malformed_line = None
        self.amendments += 1
        self.unseen.clear()           # an amendment is numbered like a session's entry
        self._step("human amended the malformed entry", true)

    def _open_pr(self, true: datetime, decision: decisions.Decision) -> None:
        branch = f"answer-{decision.id.lower()}-{self.rng.randint(0, 9999)}"
        git(self.human.path, "switch", "-q", "-c", branch)
        with as_the_human():
            MemoryWriter(self.human.ws(), clock=Clock(self._human_reads(true))).answer_decision(
                decision.id, answer="yes, in a pull request", name=HUMAN[0], email=HUMAN[1])
        self._hgit("commit", "-q", "-am", f"Answer {decision.id}", true=true)
        git(self.human.path, "push", "-q", "origin", branch)
        git(self.human.path, "switch", "-q", "main")
        self.open_prs.append((branch, decision.id, decision.title))
        self._step(f"human opened {branch}", true)

    def _merge_pr(self, true: datetime) -> None:
        branch, decision_id, title = self.open_prs.pop(0)
        git(self.human.path, "fetch", "-q", "origin")
        if self.rng.random() < 0.5 and self._merge_button(branch):
            how = "merge button"
            git(self.human.path, "pull", "-q", "--ff-only")
            self.human_pushed.append(git(self.human.path, "rev-parse", "HEAD").strip())
        else:
            how = "gitmem merge"
            self._gitmem_merge(true, branch)
            self._human_push()
        self.answered[decision_id] = title
        self.merges.append(how)
        self._step(f"human merged {branch} ({how})", true)

    def _merge_button(self, branch: str) -> bool:
        """GitHub's merge button: git's own 3-way merge on the server, where no merge driver runs. False when
        it conflicts (GitHub then offers no button)."""
        if not (self.tmp / "github").exists():
            clone(self.origin, self.tmp / "github", HUMAN)
        where = self.tmp / "github"
        git(where, "fetch", "-q", "origin")
        git(where, "checkout", "-q", "-B", "main", "origin/main")
        done = run_git(where, "merge", "--no-ff", "--no-edit", f"origin/{branch}", check=False)
        if done.returncode != 0:
            git(where, "merge", "--abort")
            return False
        git(where, "push", "-q", "origin", "main")
        return True

    def _gitmem_merge(self, true: datetime, branch: str) -> None:
        self.clock.moment = self._human_reads(true)
        with as_the_human():
            code, said = self._cli(["merge", f"origin/{branch}"], self.human.path)
        assert code == 0, said
        if git(self.human.path, "status", "--porcelain").strip():
            self._hgit("commit", "-q", "-am", f"Merge {branch}", true=true)

    def prepare_push_during_the_cycle(self, true: datetime) -> None:
        """The human's commit, made now and pushed by the runner's pre-push hook: between the cycle's fetch and
        its push."""
        self._human_sync()
        kind = self.rng.random()
        pending = self._pending()
        if pending and kind < 0.4:
            self._human_answer(true, self.rng.choice(pending))
        elif kind < 0.7 and self.malformed_line is None:
            self._human_session(true)
        else:
            self._human_work(true)
        tip = git(self.human.path, "rev-parse", "HEAD").strip()
        marker = self.tmp / "hook-fired"
        marker.unlink(missing_ok=True)
        self.hook.write_text(f"""#!/bin/sh
[ -e '{marker}' ] && exit 0
touch '{marker}'
cd '{self.human.path}' && env -u GIT_DIR -u GIT_WORK_TREE -u GIT_INDEX_FILE git push -q origin main >/dev/null 2>&1
exit 0
""")
        self.hook.chmod(0o755)
        self.pushed_by_hook = tip

    # -- the runner -----------------------------------------------------------------------------------------------
    def cycle(self, start: datetime, *, race: bool) -> datetime:
        self._fresh_checkout()
        if race:
            self.prepare_push_during_the_cycle(start)
        self.clock.moment = start
        weeks = self

        class Agent:
            name = "command"

            def run(self, request: CycleRequest) -> AgentResult:
                part = next(p for p in request.parts if p.name == "decisions").text
                weeks.shown = tuple(d.id for d in decisions.parse(
                    "# DECISIONS\n\n## Resolved\n\n" + part.split(NEWLY_RESOLVED, 1)[1]).resolved)
                weeks.expected_shown = set(weeks.unseen)
                clock = weeks.clock
                clock.moment += timedelta(minutes=weeks.rng.randint(1, 20))
                memory = MemoryWriter(Workspace.at(request.root, request.config), clock=request.clock,
                                      author_email=request.config.agent.email)
                (request.root / "built.txt").write_text(f"cycle {request.cycle}\n", encoding="utf-8")
                if weeks.rng.random() < 0.2:
                    memory.ask_decision(title=f"Question {weeks.rng.randint(0, 10**6)}?",
                                        recommendation="the simple option")
                memory.add_log_entry(task=f"task at {clock.moment:%d %H:%M}", outcome="built",
                                     result="it works", evidence="cat built.txt")
                memory.add_now_block(did="a task", human="nothing", next="carry on")
                clock.moment += timedelta(minutes=weeks.rng.randint(1, 5))
                return AgentResult(turns=2, usage={"input_tokens": 100, "output_tokens": 10},
                                   stop_reason="end_turn")

        try:
            report = run_cycle(Workspace.at(self.repo.path), Agent(),
                               settings=Settings(push=True, clock=self.zoned, sleep=lambda _: None))
        except GitmemError as refused:
            self._refused(f"cycle at {start:%d %H:%M} refused: {refused}", start)
            self.amend(self.clock.moment + timedelta(minutes=5))
            return self.clock.moment
        finally:
            self.hook.unlink(missing_ok=True)
        if race and self.pushed_by_hook is not None:
            assert (self.tmp / "hook-fired").exists(), "the cycle pushed nothing, so the human's commit did not land"
            self.human_pushed.append(self.pushed_by_hook)
            self.races += 1
            self.pushed_by_hook = None
        end = self.clock.moment
        if report.exit_code != ExitCode.OK or not report.pushed:
            self._refused(f"cycle at {start:%d %H:%M}: exit {report.exit_code} {report.messages}", start)
        else:
            self.refused_in_a_row = 0
            self.runner_cycles.append(RunnerCycle(report.cycle, start, end, self.shown))
            if set(self.shown) != self.expected_shown:
                self.wrongly_shown = f"cycle {report.cycle} showed {self.shown} as newly resolved, not " \
                                     f"{sorted(self.expected_shown)}"
            self.unseen -= self.expected_shown
        self._step(f"cycle {report.cycle} from {start:%d %H:%M}{' raced' if race else ''}", start)
        return end

    def _refused(self, what: str, when: datetime) -> None:
        self.refusals.append(what)
        self.refused_in_a_row += 1
        if self.refused_in_a_row > 1:
            raise SimulationFailed(f"seed {self.seed}: two cycles in a row did not land: {self.refusals[-2:]}")

    def close(self, true: datetime, *, by_human: bool = False, race: bool = False) -> None:
        """The day's close at `true`: the runner's, or the human's from their clone on their clock. `race`: the
        human's close (the real CLI on libfaketime's clock) lands between the runner's close's fetch and push."""
        if race and FAKETIME:
            self._human_sync()
            marker = self.tmp / "close-hook-fired"
            marker.unlink(missing_ok=True)
            moment = self._human_reads(true + timedelta(minutes=1))
            self.hook.write_text(f"""#!/bin/sh
[ -e '{marker}' ] && exit 0
touch '{marker}'
cd '{self.human.path}' && TZ=UTC env -u LD_PRELOAD -u FAKETIME -u GIT_DIR -u GIT_WORK_TREE -u GIT_INDEX_FILE \\
    '{FAKETIME}' -f '@{moment.astimezone(UTC):%Y-%m-%d %H:%M:%S}' '{GITMEM}' close --push --no-llm >/dev/null 2>&1
exit 0
""")
            self.hook.chmod(0o755)
        if by_human:
            self.human_closes += 1
            self._human_sync()
            where, moment = self.human, self._human_reads(true)
        else:
            self._fresh_checkout()
            where, moment = self.repo, true.astimezone(self.zone)
        self.clock.moment = moment
        try:
            result = run_close(Workspace.at(where.path), push=True, clock=Clock(moment))
        except WriteRefused as refused:
            # Every LOG write refuses to append after a malformed entry (docs/format.md, Amending LOG): the close
            # too. The human amends it; the next close catches the day up.
            if self.malformed_line is None:
                raise
            self.refusals.append(f"close at {true:%d %H:%M} refused: {refused}")
            self._step(f"close at {true:%d %H:%M} refused on the malformed entry", true)
            self.amend(true + timedelta(minutes=5))
            return
        finally:
            self.hook.unlink(missing_ok=True)
        if race and (self.tmp / "close-hook-fired").exists():
            (self.tmp / "close-hook-fired").unlink()
            self.close_races += 1
        assert result.push is None or result.push.status.exit_code == ExitCode.OK, (self.seed, result.message)
        if by_human:
            git(self.human.path, "pull", "-q", "--ff-only")
        self.closed_days.update(result.days)
        self._step(f"close by {'human' if by_human else 'runner'} at {moment:%d %H:%M} ({result.status}, "
                   f"{result.days})", true)

    # -- the schedule ---------------------------------------------------------------------------------------------
    def run(self) -> Weeks:
        events: list[tuple[datetime, int, str]] = []
        for day in range(self.days):
            base = START + timedelta(days=day)
            local = datetime.combine(START.astimezone(self.zone).date() + timedelta(days=day), time(23, 47),
                                     tzinfo=self.zone).astimezone(UTC)
            for hour in SLOTS:
                late = timedelta(minutes=self.rng.choice([0, 0, 0, 5, 30, 90, 180, 300]))
                events.append((base + timedelta(hours=hour, minutes=17) + late, 1, "cycle"))
            late = timedelta(minutes=self.rng.choice([0, 0, 0, 20, 44, 120, 300]))
            close_at = local + late
            events.append((close_at, 2, "close"))
            if self.rng.random() < 0.25:
                events.append((close_at + timedelta(minutes=self.rng.randint(-300, 30)), 2, "human-close"))
            for _ in range(self.rng.randint(1, 4)):
                events.append((base + timedelta(minutes=self.rng.randint(0, 24 * 60 - 1)), 0, "human"))
        events.sort()
        busy_until = START
        for when, _, kind in events:
            when = max(when, busy_until)
            if kind == "cycle":
                busy_until = self.cycle(when, race=self.rng.random() < 0.15) + timedelta(minutes=1)
            elif kind == "close":
                self.close(when, race=self.rng.random() < 0.15)
            elif kind == "human-close":
                self.close(when, by_human=True)
            else:
                self.human_acts(when)
        return self

    # -- what must hold -------------------------------------------------------------------------------------------
    def _step(self, what: str, when: datetime) -> None:
        self.steps.append(Step(what, when))
        try:
            self.check()
        except AssertionError as failed:
            trail = "\n".join(f"  {s.when:%d %H:%M} {s.what}" for s in self.steps[-8:])
            raise SimulationFailed(f"seed {self.seed}, step {len(self.steps)} ({what}):\n{failed}\nlast steps:\n"
                                   f"{trail}") from failed

    def check(self) -> None:
        origin = pygit2.Repository(str(self.origin))
        tip = str(origin.revparse_single("refs/heads/main").id)
        if tip != self.verified:
            checked = verify_range(Workspace.for_repo(Repo(origin), Config()), self.verified, "refs/heads/main")
            # A fast laptop's session entry fails the range that brought it (docs/format.md, Time); nothing else.
            errors = [v for v in checked.violations if v.is_error
                      and not (v.code == "GM309" and self.skew > CLOCK_SKEW)
                      and not (self.brought_malformed and v.path == "LOG.md" and v.line == self.malformed_line)]
            self.brought_malformed = False
            assert errors == [] and not checked.rewritten, [str(v) for v in errors]
            self.verified = tip
        for commit in self.human_pushed:
            assert origin.descendant_of(origin.revparse_single(tip).id, pygit2.Oid(hex=commit)) or \
                commit == tip, f"the human's {commit[:10]} is not on origin's main"
        for name, text in self.human_files.items():
            assert self._origin_text(name) == text, name
        doc = decisions.parse(self._origin_text("DECISIONS.md"))
        merged = {d for d, _t in self.answered.items()
                  if all(d != pr[1] for pr in self.open_prs)}
        every = [*doc.pending, *doc.resolved]
        resolved = {d.id: d.title for d in every if d.is_answered}
        for decision_id in merged:
            assert resolved.get(decision_id) == self.answered[decision_id], (decision_id, resolved.get(decision_id))
        for decision_id in merged:
            if decision_id not in self.answers_landed:
                self.answers_landed[decision_id] = len(self.runner_cycles)
                self.unseen.add(decision_id)
        assert self.wrongly_shown is None, self.wrongly_shown
        answered_titles = {self.answered[d] for d in merged}
        again = [d.id for d in every if d.title in answered_titles and not d.is_answered]
        assert again == [], f"answered decisions asked again as new: {again}"
        self._check_log_times()

    def _check_log_times(self) -> None:
        entries = {e.cycle: e for e in log.live(log.parse(self._origin_text("LOG.md")).entries)
                   if e.cycle is not None}
        previous: datetime | None = None
        for cycle in sorted(self.runner_cycles, key=lambda c: c.number):
            entry = entries.get(cycle.number)
            assert entry is not None, f"runner cycle {cycle.number} is not in LOG"
            written = entry.when.moment
            assert cycle.start - CLOCK_SKEW <= written <= cycle.end + CLOCK_SKEW, (cycle, entry.heading)
            if previous is not None:
                assert written >= previous - CLOCK_SKEW, (cycle.number, written, previous)
            previous = written

    def final_checks(self) -> None:
        """At the end, after a catch-up close the next morning: every day closed, and the close reports together
        count every cycle once (a cycle reported twice or by none breaks the sum)."""
        last = (START + timedelta(days=self.days)).astimezone(self.zone).date() + timedelta(days=1)
        self.close(datetime.combine(last, time(6, 0), tzinfo=self.zone).astimezone(UTC))
        end = datetime.combine(last, time(0, 0), tzinfo=self.zone)
        parsed = log.live(log.parse(self._origin_text("LOG.md")).entries)
        closes = [e for e in parsed if e.cycle is None and e.get("Day")]
        per_day: dict[str, int] = {}
        for entry in closes:
            per_day[entry.get("Day") or ""] = per_day.get(entry.get("Day") or "", 0) + 1
        for ran in self.runner_cycles:
            assert ran.start.astimezone(self.zone).date().isoformat() in per_day, (self.seed, ran)
        self.twice_closed = sorted(d for d, n in per_day.items() if n > 1)
        # A day has a second close only for cycles its first close left open (docs/format.md, Which report holds
        # a cycle): one run before the day ended (a slow clock's, or run early by hand), or one on a clock so fast
        # it ran before the day's last cycles. Never a second report of nothing.
        for day in self.twice_closed:
            later = [e for e in closes if e.get("Day") == day][1:]
            assert all((e.get("Cycles") or "").split(" ")[0].isdigit() for e in later), (
                self.seed, day, [e.heading() for e in later])
        reported = sum(int(count) for e in closes if (count := (e.get("Cycles") or "").split(" ")[0]).isdigit())
        cycles = [e for e in parsed if e.cycle is not None and e.when.moment < end]
        assert reported == len(cycles), (self.seed, reported, len(cycles))
