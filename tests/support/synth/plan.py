"""The content of a synthetic history: every LOG entry and NOW block, and when decisions, lessons and rules
change. Pure and deterministic for (scale, seed); `tests.support.synth` turns it into git objects.

Event positions are LOG entry indexes: a file state "at b" holds everything whose entry index is below b.
"""
from __future__ import annotations

import random
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from gitmem.memory import log, now
from gitmem.memory.timestamps import Timestamp
from tests.support.synth.text import FACTS, SUPERSEDED, TOPICS, TextGen

# Histories end here, so that a cycle run today on a synthetic repo (a benchmark, a demo) logs a time
# after the last entry; a 100x history spans 16 years and starts in 2010.
END = datetime(2026, 11, 1, 1, 7, tzinfo=UTC)
CYCLES_PER_DAY = 8                     # one cycle every 3 hours
CYCLES_1X, LOG_LINES_1X, COMMITS_1X, DECISIONS_1X, LESSONS_1X = 480, 13265, 1000, 40, 30
RECENT_CYCLES, CHUNKS = 60, 20
CLOSE_BODY_LINES = 5
OUTCOME_WEIGHTS = (("built", 70), ("published", 15), ("no-build", 15))


@dataclass
class Entry:
    """One LOG entry (cycle or close) and the NOW block written with it."""

    index: int
    cycle: int | None
    when: datetime
    task: str
    log_bytes: bytes = b""           # "\n" + rendered entry + "\n": exactly what log.append_entry adds
    block: str = ""                  # the rendered NOW block
    line: int = 0                    # the entry heading's line in the final LOG


@dataclass
class Planted:
    query: str
    kind: str                        # log | lesson | decision
    ref: str | int                   # cycle number for log, D-/L- id otherwise


@dataclass
class Plan:
    scale: float
    seed: int
    cycles: int
    commits: int
    log_lines: int
    entries: list[Entry] = field(default_factory=list)
    recent_start: int = 0            # first entry index committed one by one
    chunks: list[int] = field(default_factory=list)      # end entry index (exclusive) of each bulk commit
    facts: list[Planted] = field(default_factory=list)
    superseded: list[tuple[str, int, int]] = field(default_factory=list)  # (query, old cycle, new cycle)
    log_facts: dict[int, str] = field(default_factory=dict)
    start: datetime = END


def start_of(cycles: int) -> datetime:
    """The first cycle's time: as many days before END as the history needs."""
    return END - timedelta(days=-(-cycles // CYCLES_PER_DAY))


def timestamp(moment: datetime) -> Timestamp:
    return Timestamp.from_datetime(moment)


def make_plan(scale: float, seed: int) -> Plan:
    if scale <= 0:
        raise ValueError("scale must be positive")
    cycles = max(2 * CYCLES_PER_DAY, round(CYCLES_1X * scale))
    plan = Plan(scale, seed, cycles, max(40, round(COMMITS_1X * scale)), round(LOG_LINES_1X * scale))
    rng = random.Random(f"{seed}:timeline")
    plan.start = start_of(cycles)
    for cycle in range(1, cycles + 1):
        day, slot = divmod(cycle - 1, CYCLES_PER_DAY)
        plan.entries.append(Entry(len(plan.entries), cycle, plan.start + timedelta(days=day, hours=3 * slot), ""))
        if slot == CYCLES_PER_DAY - 1 and cycle < cycles:
            close_at = plan.start.replace(hour=23, minute=50) + timedelta(days=day)
            plan.entries.append(Entry(len(plan.entries), None, close_at, ""))
    recent = min(RECENT_CYCLES, cycles // 2)
    plan.recent_start = next(e.index for e in plan.entries if e.cycle == cycles - recent + 1)
    chunks = min(CHUNKS, max(2, plan.recent_start // 8))
    plan.chunks = sorted({max(1, round(plan.recent_start * (j + 1) / chunks)) for j in range(chunks)})
    _plant_log_facts(plan, random.Random(f"{seed}:facts"))
    _write_entries(plan, rng)
    return plan


def _free_cycle(wanted: int, used: set[int], cycles: int) -> int | None:
    for cycle in list(range(max(1, wanted), cycles + 1)) + list(range(1, max(1, wanted))):
        if cycle not in used:
            used.add(cycle)
            return cycle
    return None


def _plant_log_facts(plan: Plan, rng: random.Random) -> None:
    """Spread LOG facts over the whole history; each superseded pair goes early, then late."""
    used: set[int] = set()
    for n, (old, new, query) in enumerate(SUPERSEDED):
        first = _free_cycle(round(plan.cycles * (0.1 + 0.05 * n)), used, plan.cycles)
        second = _free_cycle(round(plan.cycles * (0.8 + 0.05 * n)), used, plan.cycles)
        if first is None or second is None:
            continue
        plan.log_facts[first], plan.log_facts[second] = old, new
        plan.superseded.append((query, first, second))
    log_facts = [f for f in FACTS if f.kind == "log"]
    for n, fact in enumerate(log_facts):
        cycle = _free_cycle(round(plan.cycles * (n + 0.5) / len(log_facts)) + rng.randrange(3), used, plan.cycles)
        if cycle is None:
            break
        plan.log_facts[cycle] = fact.text
        plan.facts.append(Planted(fact.query, "log", cycle))


def _body_sizes(plan: Plan, rng: random.Random) -> list[int]:
    """Body line counts per cycle entry, summing exactly to what makes the LOG `log_lines` long."""
    template_lines = 6
    closes = sum(1 for e in plan.entries if e.cycle is None)
    budget = plan.log_lines - template_lines - 2 * len(plan.entries) - closes * CLOSE_BODY_LINES
    mean = budget / plan.cycles
    sizes = [max(6, round(mean + rng.uniform(-0.35, 0.35) * mean)) for _ in range(plan.cycles)]
    diff = budget - sum(sizes)
    step = 1 if diff > 0 else -1
    i = 0
    while diff and i < 50 * plan.cycles:
        k = rng.randrange(plan.cycles)
        if sizes[k] + step >= 6:
            sizes[k] += step
            diff -= step
        i += 1
    return sizes


def _field_lines(key: str, lines: list[str]) -> list[str]:
    return [f"- {key}: {lines[0]}", *(f"  {line}" for line in lines[1:])]


def _write_entries(plan: Plan, rng: random.Random) -> None:
    text = TextGen(rng)
    pools = {topic: [text.line(topic) for _ in range(600)] for topic in TOPICS}
    sizes = iter(_body_sizes(plan, rng))
    outcomes = tuple(o for o, _ in OUTCOME_WEIGHTS)
    weights = tuple(w for _, w in OUTCOME_WEIGHTS)
    day_outcomes: list[str] = []
    line = 8                                    # the first entry's heading, after the template and a blank
    for entry in plan.entries:
        when = timestamp(entry.when)
        if entry.cycle is None:
            counts = {o: day_outcomes.count(o) for o in outcomes}
            summary = ", ".join(f"{counts[o]} {o}" for o in outcomes)
            no_build = counts["no-build"]
            fields = {"Cycles": f"{len(day_outcomes)} ({summary})",
                      "Done": f"{counts['built'] + counts['published']} changes, mostly in {text.topic()}",
                      "Waiting": "see DECISIONS Pending",
                      "Problems": f"{no_build} no-build cycle(s)" if no_build else "none",
                      "Plan": text.task(text.topic())}
            entry.task = f"close {entry.when.date().isoformat()}"
            item = log.make_entry(when, cycle=None, outcome=None, fields=fields)
            nxt = (entry.when + timedelta(days=1)).date()
            block = now.make_block(when, did=f"closed {entry.when.date().isoformat()}: {fields['Cycles']}",
                                   human="review the close report", next=fields["Plan"], plan_for=nxt)
            day_outcomes = []
        else:
            topic = text.topic()
            pool = pools[topic]
            outcome = rng.choices(outcomes, weights)[0]
            day_outcomes.append(outcome)
            size = next(sizes)
            task = text.task(topic)
            entry.task = task
            result_n = 1 + (size > 12) + (size > 24)
            learned_n = 1 + (size > 30)
            rest = size - 1 - result_n - learned_n
            tried_n = max(1, rest * 11 // 20)
            evidence = rng.choices(pool, k=max(1, rest - tried_n))
            if entry.cycle in plan.log_facts:
                evidence[0] = plan.log_facts[entry.cycle]
            result = rng.choices(pool, k=result_n)
            result[0] = (f"no build: {text.reason()}" if outcome == "no-build" else
                         f"{outcome} the {topic} change; {result[0]}")
            body = (_field_lines("Task", [task]) + _field_lines("Tried", rng.choices(pool, k=tried_n))
                    + _field_lines("Evidence", evidence) + _field_lines("Result", result)
                    + _field_lines("Learned", rng.choices(pool, k=learned_n)))
            item = log.LogEntry(when, entry.cycle, outcome, tuple(body))
            block = now.make_block(when, did=f"cycle {entry.cycle} {outcome}: {task}",
                                   human="nothing new from the human", next=text.task(topic), cycle=entry.cycle)
        rendered = item.render()
        entry.log_bytes = ("\n" + rendered + "\n").encode()
        entry.block = block.render()
        entry.line = line
        line += 2 + rendered.count("\n")
