"""`gitmem status`: memory health on one screen, as data (the CLI renders it, with colour on a terminal).

Reads like a cycle does: the top of NOW, the tail of LOG (growing only while today's entries or the Rule 0
streak need more), DECISIONS and LESSONS (small), RULES whole. The one full-LOG pass is a regex over the
cycle headings, made only when some lesson has enough confirmations to need the LOG-entry gate.
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from gitmem.close import day as days
from gitmem.close import promote
from gitmem.config import Config
from gitmem.memory import lessons, log, now, rules
from gitmem.memory.text import Timestamp, decode, one_line

CHARS_PER_TOKEN = 3.5


@dataclass
class Status:
    now: str
    last_cycle: dict[str, Any] | None
    cycles_today: int
    outcomes_today: dict[str, int]
    streak: dict[str, Any]
    last_close: str | None
    pending: list[dict[str, Any]] = field(default_factory=list)
    awaiting: list[dict[str, Any]] = field(default_factory=list)
    eligible: list[dict[str, Any]] = field(default_factory=list)
    rules: dict[str, int] = field(default_factory=dict)
    budget: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def _read(root: Path, rel: str) -> str:
    try:
        return decode((root / rel).read_bytes()).text
    except (FileNotFoundError, IsADirectoryError):
        return ""


def collect(root: Path | str, config: Config, *, clock: Any = None) -> Status:
    root = Path(root)
    tz = config.tzinfo()
    moment: datetime = (clock() if clock else datetime.now(tz)).astimezone(tz)
    log_text = _read(root, config.path("log"))
    today = moment.date()
    start, end = days.day_bounds(today, tz)
    recent = days.entries_since(log_text, start, at_least=1)
    cycles = [e for e in recent if e.cycle is not None]
    last = cycles[-1] if cycles else _last_cycle(log_text)
    today_cycles = [e for e in cycles if start <= e.when.moment < end]
    closes = [e for e in recent if e.cycle is None]
    streak = days.no_build_streak(log_text, end)
    status = Status(
        now=str(Timestamp.from_datetime(moment)),
        last_cycle={"cycle": last.cycle, "when": str(last.when), "outcome": last.outcome,
                    "task": one_line(last.get("Task") or "")} if last else None,
        cycles_today=len(today_cycles),
        outcomes_today={o: sum(1 for e in today_cycles if e.outcome == o) for o in log.OUTCOMES},
        streak={"length": streak.length, "first": streak.first, "last": streak.last,
                "problem": streak.is_problem},
        last_close=(closes[-1].get(days.DAY_FIELD) or str(closes[-1].when)) if closes else None)
    for item in days.waiting_decisions(_read(root, config.path("decisions")), moment):
        status.pending.append({"id": item.id, "title": item.title, "age_days": item.age_days,
                               "stale": item.age_days > config.close.stale_decision_days})
    _lessons(status, _read(root, config.path("lessons")), log_text, config.close.confirmations)
    rules_text = _read(root, config.path("rules"))
    doc = rules.parse(rules_text)
    status.rules = {"proven": len(doc.proven), "proven_max": config.limits.proven_rules_max,
                    "lines": doc.line_count, "lines_max": config.limits.rules_max_lines}
    status.budget = budget(root, config, moment)
    return status


def _last_cycle(text: str) -> log.LogEntry | None:
    """The newest cycle entry even behind a long run of close entries, reading growing tails."""
    size = 16
    while True:
        chunk, first_line = log.tail_text(text, size)
        found = [e for e in log.parse(chunk, first_line=first_line, expect_title=False).entries if e.cycle]
        if found or len(chunk) == len(text) or first_line <= 2:
            return found[-1] if found else None
        size *= 4


def _lessons(status: Status, text: str, log_text: str, needed: int) -> None:
    doc = lessons.parse(text)
    open_lessons = [lesson for lesson in doc.lessons if lesson.is_open]
    eligible = {c.lesson.id: c for c in promote.eligible(doc, log_text, needed)[0]}
    logged = days.cycle_numbers(log_text) if any(promote.later_distinct_cycles(x) for x in open_lessons) else set()
    for lesson in open_lessons:
        if lesson.id in eligible:
            status.eligible.append({"id": lesson.id, "title": lesson.title,
                                    "cycles": list(eligible[lesson.id].cycles),
                                    "has_rule": bool((lesson.get("Rule") or "").strip())})
        else:
            status.awaiting.append({"id": lesson.id, "title": lesson.title, "needed": needed,
                                    "confirmations": len(promote.confirming_cycles(lesson, logged))})


def budget(root: Path, config: Config, moment: datetime) -> dict[str, Any]:
    """The next cycle's reading budget: gitmem.context's own count, or an estimate of the same parts."""
    limit = config.cycle.max_context_tokens
    info: dict[str, Any] = {"limit": limit, "soft": int(limit * 0.70), "hard": int(limit * 0.865)}
    try:
        from gitmem.context import BudgetError, build_request
    except ImportError:
        info.update(tokens=estimate(root, config), source="estimate")
        return info
    try:
        request = build_request(root, config, now=moment)
    except BudgetError as err:
        info.update(tokens=None, source="context", error=str(err))
        return info
    except (OSError, ValueError):
        # A dashboard should still show the rest: fall back to the estimate of the same parts.
        info.update(tokens=estimate(root, config), source="estimate")
        return info
    info.update(tokens=request.total_tokens, source="context")
    return info


def estimate(root: Path, config: Config) -> int:
    """chars / 3.5 over what a cycle reads: RULES, top NOW block, Pending, last LOG entries, ROADMAP section."""
    from gitmem.memory import decisions, roadmap

    parts = [_read(root, config.path("rules"))]
    top = now.parse(_read(root, config.path("now")), max_blocks=1).top
    parts.append(top.render() if top else "")
    parts += [d.render() for d in decisions.parse(_read(root, config.path("decisions"))).pending]
    parts += [e.render() for e in log.tail(_read(root, config.path("log")), config.cycle.log_entries).entries]
    section = roadmap.current_section(_read(root, config.path("roadmap")))
    parts.append("\n".join(section.body) if section else "")
    return math.ceil(sum(len(p) for p in parts) / CHARS_PER_TOKEN)
