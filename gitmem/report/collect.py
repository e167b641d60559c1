"""Fill a `WorkspaceReport` from one workspace: LOG (bounded by the window), DECISIONS, LESSONS, RULES, and the
gitmem/* branches waiting on the human. Every text taken from memory is masked and made printable here, once
(`gitmem.memory.display.masked_printable`: a bidirectional override or a control character shows as its escape), as
the fleet's is."""
from __future__ import annotations

from datetime import date, datetime, time, timedelta

from gitmem import gitio
from gitmem.checks.render import unreadable_note
from gitmem.memory import decisions, lessons, rules
from gitmem.memory.display import masked_printable
from gitmem.report.log_scan import read_log, scan_log
from gitmem.report.model import CloseRow, CycleRow, DecisionRow, LessonRow, RuleRow, WorkspaceReport
from gitmem.workspace import Clock, Workspace, log_history


def collect_report(ws: Workspace, *, since: date | None = None, until: date | None = None,
            clock: Clock | None = None) -> WorkspaceReport:
    """The report of `ws` for the days since..until (inclusive, in the configured zone; default: all of LOG
    up to today). Ages of pending decisions are taken at the clock's moment."""
    config = ws.config
    tz = config.tzinfo()
    moment = (clock or ws.clock())().astimezone(tz)
    until = until or moment.date()
    start = datetime.combine(since, time(0), tz) if since else None
    end = datetime.combine(until + timedelta(days=1), time(0), tz)

    # History from `start`: LOG.md's end, and before it only the sealed volumes the range reaches back into.
    read = read_log(ws.root, ws.config.path("log"), start)
    scanned = scan_log(log_history.of(ws).sealed_since(start) + read.text, start, end)
    latest = scanned.latest_close
    if latest is not None:
        fields = tuple((key, masked_printable(value)) for key, value in latest.fields)
        latest = CloseRow(latest.when, latest.day, fields, latest.promoted)
    cycles = scanned.cycles
    rules_doc = rules.parse(ws.read("rules"))
    dates = _Dates(cycles, {rule: close.when for close in scanned.closes for rule in close.promoted})
    return WorkspaceReport(
        name=masked_printable(ws.name), moment=moment, timezone=config.timezone, since=since, until=until,
        cycles=tuple(CycleRow(c.number, c.when, c.outcome, c.tokens, c.cost, c.cache_rate, c.context, c.budget,
                              c.reverts, tuple(masked_printable(b) for b in c.salvage)) for c in cycles),
        closes=scanned.closes, latest_close=latest,
        decisions=_decisions(ws.read("decisions"), moment, start, end),
        lessons=_lessons(ws.read("lessons"), rules_doc, dates), rules=_rules(rules_doc, dates),
        proven=len(rules_doc.proven), proven_cap=config.limits.proven_rules_max,
        budget=config.cycle.max_context_tokens, stale_days=config.close.stale_decision_days,
        waiting_branches=tuple(masked_printable(b) for b in every_waiting_branch(ws)),
        problems=(unreadable_note(read.undecodable),) if read.undecodable else ())


def every_waiting_branch(ws: Workspace) -> list[str]:
    """The `gitmem/*` branches that wait for the human (salvage, proposal, side, a refused push's cycle or close
    branch): local ones, then those only a remote has (as `remote/name`), or a fetched copy's."""
    try:
        found = gitio.waiting_branches(ws.repo, copy=False) + gitio.waiting_branches(ws.repo, copy=True)
    except gitio.RepoError:          # a plain directory of memory files: no branches to list
        return []
    return list(dict.fromkeys(found))


def _decisions(text: str, moment: datetime, start: datetime | None, end: datetime) -> tuple[DecisionRow, ...]:
    """Decisions open at some time in the window: asked before its end, and not answered before its start."""
    found = []
    for item in decisions.parse(text).all:
        asked = item.asked
        if asked is None or asked.moment >= end:
            continue
        done = decisions.answered_at(item, moment)       # a Resolved decision is never still waiting
        if done is not None and start is not None and done < start:
            continue
        waited = ((done or moment) - asked.moment).total_seconds() / 86400
        found.append(DecisionRow(item.id, masked_printable(item.title), asked.moment, done, max(0.0, waited),
                                 masked_printable((item.get("Recommendation") or "").strip())))
    return tuple(sorted(found, key=lambda d: (d.asked, d.id)))


class _Dates:
    """When a proven rule was promoted: the close that lists it in its Promotions, else its last confirming
    cycle (the close after it promoted it). A rule from before the window, or the human's, has None."""

    def __init__(self, cycles: tuple[CycleRow, ...], promoted: dict[str, datetime]) -> None:
        self.cycles = {c.number: c.when for c in cycles}
        self.first = cycles[0].number if cycles else None
        self.last = cycles[-1].number if cycles else None
        self.promoted = promoted

    def of(self, rule: rules.Rule) -> datetime | None:
        if rule.id in self.promoted:
            return self.promoted[rule.id]
        last = max(rule.cycles, default=None)
        if last is None or self.first is None or last < self.first:
            return None
        return self.cycles.get(last)

    def after_window(self, rule: rules.Rule) -> bool:
        return bool(rule.cycles) and self.last is not None and max(rule.cycles) > self.last


def _rules(doc: rules.RulesDoc, dates: _Dates) -> tuple[RuleRow, ...]:
    found = [RuleRow(rule.id, dates.of(rule)) for rule in doc.proven if not dates.after_window(rule)]
    found += [RuleRow(rule.id, None, rule.retired_on) for rule in doc.retired]
    return tuple(found)


def _lessons(text: str, rules_doc: rules.RulesDoc, dates: _Dates) -> tuple[LessonRow, ...]:
    found = []
    for lesson in lessons.parse(text).lessons:
        happened = lesson.happened
        confirmed = sorted(e.day for _, e in lesson.confirmations if e is not None)
        dated = ([happened.day] if happened else []) + confirmed
        promoted = retired = None
        rule_id = lessons.promoted_rule(lesson.status)
        if rule_id is not None:
            rule = rules_doc.find(rule_id)
            moment = dates.of(rule) if rule is not None else None
            promoted = moment.date() if moment is not None else (max(dated) if dated else None)
        elif lesson.status.startswith("retired"):
            retired = max(dated) if dated else None
        found.append(LessonRow(lesson.id, happened.day if happened else None, confirmed[0] if confirmed else None,
                               promoted, retired))
    return tuple(found)
