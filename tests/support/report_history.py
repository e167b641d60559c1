"""A 90-day agent history with every event `gitmem report` shows, written through the library with an injected
clock, the way the runner, the agent's tools, the human and the close write it.

Days run from 2026-09-02 to 2026-11-30, four cycles a day (03:00, 09:00, 15:00, 21:00 UTC), a close at 23:50.
What it holds, so tests can name it:
- outcomes from a seeded draw, and three planted Rule 0 streaks (STREAKS), one of them in the last 14 days;
- token usage lines (postflight.usage_line) from cycle TOKENS_FROM on, with cache reads; a cost line every third
  cycle from COST_FROM on; the context line (postflight.context_note) from CONTEXT_FROM on (older: unknown);
- the runner's revert notes in REVERTS, and salvaged cycles (SALVAGED) whose branches exist in git;
- decisions asked every 6 days and answered by the human after a while, the last three pending;
- lessons opened, confirmed twice, promoted to rules, one retired; a rule retired;
- a close entry for every day; the last day's is a real `run_close`.
"""
from __future__ import annotations

import random
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import pytest

from gitmem import gitio
from gitmem.close import run_close
from gitmem.config import load_config
from gitmem.cycle.postflight import context_note, usage_line
from gitmem.memory import lessons, log, rules
from gitmem.memory_writer import MemoryWriter, atomic_write
from gitmem.workspace import Workspace
from tests.support.helpers import AGENT, HUMAN, GitRepo, isolate_git_env, make_repo

UTC = UTC
FIRST_DAY = date(2026, 9, 2)
DAYS = 90
LAST_DAY = FIRST_DAY + timedelta(days=DAYS - 1)          # 2026-11-30
SLOTS = (3, 9, 15, 21)
NOW = datetime(2026, 11, 30, 23, 58, tzinfo=UTC)         # the report's clock: just after the last close
STREAKS = ((101, 104), (250, 252), (341, 345))           # planted runs of no-build cycles
TOKENS_FROM, COST_FROM, CONTEXT_FROM = 41, 120, 181
REVERTS = {77: "reverted the agent's resolution of D-0002 (only humans answer decisions)",
           150: "restored lesson L-0002 (lessons are never deleted; retire them instead)",
           300: "reverted a rewrite of LOG at line 40 (LOG is append-only); kept 1 new entry",
           350: "moved D-0014 back to Pending: the agent wrote it as resolved (only humans answer)"}
SALVAGED = (120, 333)
PROMOTIONS = (57, 117, 177)                              # L-0002, L-0004, L-0006 become


@dataclass
class History:
    git: GitRepo
    cycles: int = 0
    outcomes: dict[int, str] = field(default_factory=dict)
    decisions: list[str] = field(default_factory=list)
    pending: list[str] = field(default_factory=list)
    promoted: list[str] = field(default_factory=list)

    @property
    def ws(self) -> Workspace:
        return Workspace.at(self.git.path)


class _Clock:
    def __init__(self) -> None:
        self.moment = datetime.combine(FIRST_DAY, datetime.min.time(), UTC)

    def __call__(self) -> datetime:
        return self.moment


def cycle_time(number: int) -> datetime:
    day, slot = divmod(number - 1, len(SLOTS))
    return datetime.combine(FIRST_DAY + timedelta(days=day), datetime.min.time(), UTC).replace(hour=SLOTS[slot])


def _outcome(number: int, draw: random.Random) -> str:
    if any(first <= number <= last for first, last in STREAKS) or number in SALVAGED:
        return "no-build"
    if any(number == first - 1 or number == last + 1 for first, last in STREAKS):
        return "built"                    # the planted streaks stay exactly as long as planted
    choice = draw.choices(("built", "published", "no-build"), (70, 15, 15))[0]
    return choice


def _evidence(number: int, outcome: str, draw: random.Random) -> str:
    lines = [f"ran the checks of cycle {number}"]
    if number in REVERTS:
        lines.append(f"runner: {REVERTS[number]}")
    if number >= CONTEXT_FROM:
        lines.append(f"runner: {context_note(4800 + 7 * number + draw.randrange(400), 60000)}")
    if number >= COST_FROM and number % 3 == 0:
        lines.append(f"cost: ${0.05 + draw.random() * 0.6:.2f}")
    if number >= TOKENS_FROM:
        usage = {"input_tokens": 900 + draw.randrange(1500), "output_tokens": 300 + draw.randrange(900),
                 "cache_read_input_tokens": draw.randrange(3000) if outcome != "no-build" else 0,
                 "cache_creation_input_tokens": draw.randrange(600)}
        lines.append(usage_line(usage) or "")
    return "\n".join(lines)


def _write_cycle(memory: MemoryWriter, number: int, outcome: str, draw: random.Random) -> None:
    evidence = _evidence(number, outcome, draw)
    if number in SALVAGED:
        branch = f"gitmem/salvage/cycle-{number}"
        memory.add_log_entry(task="cycle run failed", outcome="no-build", cycle=number, evidence=evidence,
                             result=f"no build: the agent failed (timed out after 1800s); its changes (2 file(s)) "
                                    f"are saved on branch {branch}", extra={log.SALVAGED: branch})
        return
    result = (f"{outcome} change {number}" if outcome != "no-build"
              else f"no build: blocked on a human decision in cycle {number}")
    memory.add_log_entry(task=f"task of cycle {number}", outcome=outcome, cycle=number, evidence=evidence,
                         result=result, learned="the history stays searchable")


def _close_entry(memory: MemoryWriter, day: date, outcomes: list[str]) -> None:
    counts = {o: outcomes.count(o) for o in ("built", "published", "no-build")}
    line = ", ".join(f"{n} {o}" for o, n in counts.items())
    memory.add_close_entry({"Day": day.isoformat(), "Cycles": f"{len(outcomes)} cycles ({line})",
                            "Problems": f"{counts['no-build']} no-build cycle(s)" if counts["no-build"] else "none",
                            "Plan": "ship the next item of ROADMAP — why: it is the top open item"})


def _promote(ws: Workspace, lesson_id: str, rule_id: str, cycles: tuple[int, int], text: str) -> None:
    doc = lessons.parse(ws.read("lessons"))
    atomic_write(ws.path("lessons"), lessons.render(lessons.set_status(doc, lesson_id, f"promoted {rule_id}")).encode())
    ruled = rules.parse(ws.read("rules"))
    rule = rules.Rule(rule_id, text, f"from {lesson_id}; cycles {cycles[0]}, {cycles[1]}", rules.PROVEN)
    atomic_write(ws.path("rules"), rules.render(rules.add_proven(ruled, rule)).encode())


def cycles_before(day: date) -> int:
    """How many cycles ran before `day`."""
    return (day - FIRST_DAY).days * len(SLOTS)


def write_cycles(ws: Workspace, days: int, seed: int = 7) -> None:
    """A short history for a second workspace: four cycles a day over the last `days` days, files only."""
    clock = _Clock()
    memory = MemoryWriter(ws, clock=clock, author_email=AGENT[1])
    draw = random.Random(seed)
    first = LAST_DAY - timedelta(days=days - 1)
    for index in range(days * len(SLOTS)):
        number = cycles_before(first) + index + 1
        clock.moment = cycle_time(number)
        _write_cycle(memory, number, _outcome(number, draw), draw)


def build(git: GitRepo, *, days: int = DAYS, seed: int = 15, real_close: bool = True) -> History:
    """Write the history into `git`'s work tree (the template, committed), commit it, and close the last day."""
    history = History(git)
    ws = history.ws
    clock = _Clock()
    agent = MemoryWriter(ws, clock=clock, author_email=AGENT[1])
    human = MemoryWriter(ws, clock=clock, author_email=HUMAN[1])
    draw = random.Random(seed)
    answers: list[tuple[datetime, str]] = []
    lesson_plan: dict[int, str] = {}
    for day_index in range(days):
        day = FIRST_DAY + timedelta(days=day_index)
        outcomes = []
        for slot in range(len(SLOTS)):
            number = day_index * len(SLOTS) + slot + 1
            clock.moment = cycle_time(number)
            for due, decision in [a for a in answers if a[0] <= clock.moment]:
                answers.remove((due, decision))
                keep = clock.moment
                clock.moment = due
                human.answer_decision(decision, answer="yes, go ahead", name=HUMAN[0], email=HUMAN[1])
                clock.moment = keep
            outcome = _outcome(number, draw)
            _write_cycle(agent, number, outcome, draw)
            history.outcomes[number] = outcome
            outcomes.append(outcome)
            if number % 24 == 2:          # a decision every 6 days
                title = f"Publish release {number // 24 + 1}?"
                asked = agent.ask_decision(title=title, recommendation="yes, as planned", cycle=number)
                history.decisions.append(asked.id)
                if day_index < days - 19:
                    answers.append((clock.moment + timedelta(hours=5 + 7 * (number % 11)), asked.id))
                else:
                    history.pending.append(asked.id)
            if number % 30 == 5:          # a lesson every 7.5 days, confirmed by two later cycles
                item = agent.add_lesson(title=f"Lesson from cycle {number}", happened="a check was skipped",
                                        why="it looked safe", change="run the check first", cycle=number,
                                        rule=f"Run the check before step {number}")
                lesson_plan[number + 9], lesson_plan[number + 21] = item.id, item.id
            if number in lesson_plan:
                agent.confirm_lesson(lesson_plan[number], evidence=f"cycle {number} held", cycle=number)
            if number in PROMOTIONS:      # promoted the day its second confirmation landed
                lesson_id = lesson_plan[number - 1]
                rule_id = rules.format_id(len(history.promoted) + 1)
                _promote(ws, lesson_id, rule_id, (number - 13, number - 1), f"Run the check before step {number}")
                history.promoted.append(lesson_id)
        clock.moment = datetime.combine(day, datetime.min.time(), UTC).replace(hour=23, minute=50)
        if day_index == 70:
            doc = rules.parse(ws.read("rules"))
            atomic_write(ws.path("rules"), rules.render(rules.retire(doc, "R-01", reason="the step is gone",
                                                                     on=day)).encode())
            doc = lessons.parse(ws.read("lessons"))
            atomic_write(ws.path("lessons"), lessons.render(
                lessons.set_status(doc, "L-0005", "retired — no longer relevant")).encode())
        if day_index < days - 1 or not real_close:
            _close_entry(agent, day, outcomes)
        # A commit a day, as the cycles' pushes would have it: the close counts one confirmation of a lesson per
        # commit, so a lesson's two confirmations must land in two.
        git.stage(*(ws.config.path(role) for role in ("log", "decisions", "lessons", "rules", "now")))
        git.commit(f"the agent's day {day.isoformat()}", author=AGENT)
    history.cycles = days * len(SLOTS)
    for number in SALVAGED:
        gitio.create_branch(git.handle, f"gitmem/salvage/cycle-{number}", git.head())
    if real_close:
        clock.moment = datetime.combine(FIRST_DAY + timedelta(days=days - 1), datetime.min.time(),
                                        UTC).replace(hour=23, minute=50)
        run_close(Workspace.at(git.path, load_config(git.path)), day=clock.moment.date(), clock=clock)
    return history


@contextmanager
def ninety_days(base: Path) -> Iterator[GitRepo]:
    """The 90-day history built in `base`/repo with the git environment isolated: the body of a module-scoped
    fixture, where the function-scoped `git_env` fixture cannot be used."""
    with pytest.MonkeyPatch.context() as patch:
        isolate_git_env(patch)
        git = make_repo(base / "repo")
        build(git)
        yield git
