"""`gitmem status`: memory health on one screen, as data (the CLI renders it, with colour on a terminal).

Reads like a cycle does: the top of NOW, the tail of LOG (growing only while today's entries or the Rule 0
streak need more), DECISIONS and LESSONS (small), RULES whole. The one full-LOG pass is a regex over the
cycle headings, made only when some lesson has enough confirmations to need the LOG-entry gate.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from datetime import datetime
from typing import Any

from gitmem.agents import ignored_tool_dirs
from gitmem.checks.clone_setup import clone_setup
from gitmem.close import gates
from gitmem.close.backing import Backs, backing_for
from gitmem.close.day import DAY_FIELD, day_bounds, entries_since, no_build_streak
from gitmem.memory import decisions, lessons, log, rules
from gitmem.memory.lines import one_line
from gitmem.memory.timestamps import Timestamp
from gitmem.views import health
from gitmem.views.kept_branches import kept_branches, with_answers
from gitmem.workspace import Clock, Workspace, log_history
from gitmem.workspace.head_and_tail import FileSource


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
    waiting_for_room: list[dict[str, Any]] = field(default_factory=list)   # eligible, but RULES is full
    rules: dict[str, int] = field(default_factory=dict)
    budget: dict[str, Any] = field(default_factory=dict)
    recall: dict[str, str] = field(default_factory=dict)
    missing: list[str] = field(default_factory=list)                 # memory files not in the work tree
    placeholders: list[dict[str, Any]] = field(default_factory=list)  # template placeholders left in RULES
    branches: list[dict[str, Any]] = field(default_factory=list)      # gitmem branches waiting on a human
    invalid: list[dict[str, Any]] = field(default_factory=list)       # errors in memory as it stands, with the fix
    dated_ahead: list[dict[str, Any]] = field(default_factory=list)   # newest entries dated ahead of the clock
    setup: list[dict[str, Any]] = field(default_factory=list)         # what this clone lacks (GM925), with the fix
    # Lines of the LOG entries status read that are not UTF-8 (GM902), shown with U+FFFD by every reader.
    unreadable: list[dict[str, Any]] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def collect_status(ws: Workspace, *, clock: Clock | None = None) -> Status:
    """The dashboard's data; NoMemory (exit 2) when there is no memory at all, rather than healthy zeros."""
    missing = health.require_memory(ws)
    config = ws.config
    moment: datetime = (clock or ws.clock())().astimezone(config.tzinfo())
    source = ws.log_source()
    status = Status(now=str(Timestamp.from_datetime(moment)), **activity(ws, moment, source=source))
    for item in decisions.waiting(decisions.parse(ws.read("decisions")), moment):
        status.pending.append({"id": item.id, "title": item.title, "age_days": item.days, "age": item.age,
                               "stale": item.is_stale(config.close.stale_decision_days),
                               "answer_incomplete": item.answer_incomplete})
    rules_text = ws.read("rules")
    doc = rules.parse(rules_text)
    _lessons(status, ws.read("lessons"), backing_for(ws), config.close.confirmations, doc,
             rules_max=config.limits.proven_rules_max)
    status.rules = {"proven": len(doc.proven), "proven_max": config.limits.proven_rules_max,
                    "lines": doc.line_count, "lines_max": config.limits.rules_max_lines}
    status.budget = budget(ws, moment)
    status.recall = recall_mode(ws)
    status.missing = missing
    status.placeholders = [asdict(found) for found in health.rules_placeholders(ws)]
    status.dated_ahead = [asdict(found) for found in health.dated_ahead(ws, moment)]
    kept = with_answers(kept_branches(ws.repo), decisions.parse(ws.read("decisions")))
    status.branches = [branch.to_json() for branch in kept]
    status.invalid = [{"path": v.path, "line": v.line, "code": v.code, "message": v.message, "fix": v.hint}
                      for v in health.invalid_memory(ws)]
    status.setup = [{"path": v.path, "line": v.line, "code": v.code, "message": v.message, "fix": v.hint}
                    for v in clone_setup(ws)]
    shown = {(item["path"], item["line"], item["code"]) for item in status.invalid}   # a heading's is there already
    status.unreadable = [{"path": v.path, "line": v.line, "code": v.code, "message": v.message, "fix": v.hint}
                         for v in health.undecodable_read(ws.config.path("log"), source)
                         if (v.path, v.line, v.code) not in shown]
    return status


def activity(ws: Workspace, moment: datetime, *, source: FileSource | None = None) -> dict[str, Any]:
    """The cycles part of the dashboard, as `Status` fields: the last cycle, today's cycles by outcome, the
    Rule 0 streak and the last close. LOG is read back from its end only as far as each question needs (this
    is also each agent's row in `gitmem fleet status`), through `source` when given (it keeps what it could
    not decode)."""
    tz = ws.config.tzinfo()
    if source is None:
        source = ws.log_source()
    start, end = day_bounds(moment.astimezone(tz).date(), tz)
    recent = entries_since(source, start, at_least=1)
    cycles = [e for e in recent if e.cycle is not None]
    last = cycles[-1] if cycles else _last_cycle(source)
    today_cycles = [e for e in cycles if start <= e.when.moment < end]
    history = log_history.of(ws)      # a streak or the last close may be older than LOG.md's first entry (sealed)
    streak = no_build_streak(history, end)
    return {
        "last_cycle": {"cycle": last.cycle, "when": str(last.when), "outcome": last.outcome,
                       "task": one_line(last.get("Task") or ""), "warnings": _warnings(last)} if last else None,
        "cycles_today": len(today_cycles),
        "outcomes_today": {o: sum(1 for e in today_cycles if e.outcome == o) for o in log.OUTCOMES},
        "streak": {"length": streak.length, "first": streak.first, "last": streak.last,
                   "problem": streak.is_problem}
        if streak is not None else {"length": 0, "first": None, "last": None, "problem": False},
        "last_close": _last_close_day(history)}


def _warnings(entry: log.LogEntry) -> list[str]:
    """What the runner said in the entry's Evidence that the human must act on: a trust anchor the cycle changed
    (gitmem.agents.ignored_tool_dirs), which the human's next session would run."""
    said = (entry.get("Evidence") or "").splitlines()
    return [line.strip().removeprefix("runner: ") for line in said
            if line.strip().startswith(f"runner: {ignored_tool_dirs.NOTE_PREFIX}")]


def recall_mode(ws: Workspace) -> dict[str, str]:
    """Which recall mode a search runs in (bm25, semantic, hybrid), judged without loading any model."""
    from gitmem.recall.search import describe_recall_mode

    return describe_recall_mode(ws.config)


def _last_close_day(history: log_history.LogHistory) -> str | None:
    """The newest day a close closed. Read back from LOG's end to its last close entry, into the sealed volumes when
    LOG.md holds none (a seal moved it), however many cycles came after it (the day's own entries held it only when
    it was the one entry before today's), and of the closes read the one with the newest day, then time: LOG's
    position is no order of closes, since a close of an older day (`close --date`) or one a merge brought in lands
    below a newer one."""
    def is_close(entry: log.LogEntry) -> bool:
        return entry.cycle is None

    read, _ = history.live_tail(lambda entries: any(map(is_close, entries)))
    closes = [(entry.get(DAY_FIELD) or entry.when.moment.date().isoformat(), entry.when.moment, at)
              for at, entry in enumerate(read) if is_close(entry)]
    return max(closes)[0] if closes else None


def _last_cycle(source: log.TailSource) -> log.LogEntry | None:
    """The newest cycle entry even behind a long run of close entries."""
    found = [e for e in log.tail_entries(source, log.has_cycle).entries if e.cycle is not None]
    return found[-1] if found else None


def _lessons(status: Status, text: str, backs: Backs, needed: int, rules_doc: rules.RulesDoc, *,
             rules_max: int) -> None:
    """Open lessons: awaiting confirmations (counting only those history backs), or eligible, and then what the
    next close would do with each: the close's own plan judges room in RULES (a lesson that supersedes a rule
    needs none), the rule line and supersession, so status never promises what the close will not do. The per-close
    promotion limit only delays a lesson, so it is not applied here."""
    doc = lessons.parse(text)
    open_lessons = [lesson for lesson in doc.lessons if lesson.is_open]
    gates.prime(backs, [lesson for lesson in open_lessons if lesson.confirmations])
    candidates: list[gates.Candidate] = []
    for lesson in open_lessons:
        result = gates.gate(lesson, backs, needed)
        if result.why is None:
            candidates.append(gates.Candidate(lesson, result.cycles))
        else:
            status.awaiting.append({"id": lesson.id, "title": lesson.title, "needed": needed,
                                    "confirmations": len(result.cycles)})
    planned = gates.plan_promotions(candidates, rules_doc, texts=gates.offline_texts(candidates), conflicts={},
                                    max_promotions=len(candidates), max_rules=rules_max)
    for candidate in candidates:
        lesson = candidate.lesson
        item = {"id": lesson.id, "title": lesson.title, "cycles": list(candidate.cycles),
                "has_rule": bool((lesson.get("Rule") or "").strip()), "note": _held_note(planned.held.get(lesson.id))}
        (status.waiting_for_room if lesson.id in planned.no_room else status.eligible).append(item)


def _held_note(why: str | None) -> str:
    """Why the close would not promote an eligible lesson, without the "eligible" status already says."""
    return "" if why is None else why.removeprefix("eligible, but ").removeprefix("eligible, ")


def budget(ws: Workspace, moment: datetime) -> dict[str, Any]:
    """The next cycle's reading budget: gitmem.cycle.budget's own count, or its estimate of the same parts."""
    from gitmem.cycle.budget import BudgetError, build_request, estimate, limits

    bounds = limits(ws.config)
    info: dict[str, Any] = {"limit": bounds.total, "soft": bounds.soft, "hard": bounds.hard}
    try:
        request = build_request(ws, now=moment)
    except BudgetError as err:
        info.update(tokens=None, source="context", error=str(err))
        return info
    except (OSError, ValueError):
        # A dashboard should still show the rest: fall back to the estimate of the same parts.
        info.update(tokens=estimate(ws), source="estimate")
        return info
    info.update(tokens=request.total_tokens, source="context")
    return info
