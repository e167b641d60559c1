"""What a close writes into memory, before anything is committed: the days it closes (`days_to_close`), the
promotions, each day's report, oldest first, and one plan for the day after the last (`compose`), with the
`CloseResult` the whole close returns.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from datetime import date, datetime, timedelta, tzinfo
from typing import Any

from gitmem.checks.sizes import size_limits
from gitmem.checks.violation import Violation
from gitmem.close import day_report, writeup
from gitmem.close.backing import backing_for
from gitmem.close.day import (
    close_entries,
    closed_day,
    day_bounds,
    day_entries,
    entries_since,
    reported_until,
    unreported_cycles,
)
from gitmem.close.llm import CloseModel, api_key_set
from gitmem.close.promotion import promote_live
from gitmem.config import ROLES, Config
from gitmem.confined import files
from gitmem.memory import placeholders
from gitmem.memory.log import TailSource
from gitmem.memory_writer import MemoryWriter
from gitmem.publish.push import PushReport
from gitmem.secrets import scrub, scrub_data
from gitmem.workspace import log_history


@dataclass
class CloseResult:
    day: date
    status: str                                   # closed | already-closed
    message: str
    commit: str | None = None
    counts: dict[str, int] = field(default_factory=dict)
    report: dict[str, str] = field(default_factory=dict)     # the close entry's fields
    problems: list[str] = field(default_factory=list)
    promoted: list[dict[str, Any]] = field(default_factory=list)
    not_promoted: list[str] = field(default_factory=list)
    decisions_filed: list[str] = field(default_factory=list)
    lessons_opened: list[str] = field(default_factory=list)
    plan: str = ""
    llm: str | None = None
    push: PushReport | None = None
    violations: list[Violation] = field(default_factory=list)    # GM8xx: what went wrong, as data
    days: list[str] = field(default_factory=list)                # every day this run closed, oldest first
    reports: list[dict[str, str]] = field(default_factory=list)  # their close entries, in the same order

    def to_json(self) -> dict[str, Any]:
        from gitmem.checks.render import as_data

        data = asdict(self)
        data["day"] = self.day.isoformat()
        data["violations"] = as_data(self.violations)
        return data


MAX_CATCH_UP = 7


def days_to_close(log_text: TailSource | str, target: date, tz: tzinfo) -> tuple[list[date], int]:
    """The days a close that belongs to `target` closes, oldest first: `target`, and every day before it, at most
    MAX_CATCH_UP in all, that is not closed; and how many days before those were never closed and are too old to
    catch up. The days before `target` have ended; `target` may not have (a close at 23:47 closes its day as of
    then). Days before the memory's first cycle or close are not days of its life: a first close starts at the
    first day with a cycle."""
    first = target - timedelta(days=MAX_CATCH_UP - 1)
    start = day_bounds(first, tz)[0]
    entries = entries_since(log_text, start)
    closed = {found for e in entries if e.cycle is None and (found := closed_day(e)) is not None and found >= first}
    last = close_entries(log_text) if not closed else ()
    last_day = closed_day(last[-1]) if last else None
    if last_day is not None and last_day < first:     # closes stopped before this window: every day since is open
        return [first + timedelta(days=n) for n in range(MAX_CATCH_UP)], (first - last_day).days - 1
    lived = [e.when.moment.astimezone(tz).date() for e in entries if e.when.moment >= start]
    since = min([*lived, *closed, target])
    days = [since + timedelta(days=n) for n in range((target - since).days + 1)]
    return [d for d in days if d not in closed] or [target], 0


def compose(memory: MemoryWriter, config: Config, wanted: list[date], moment: datetime, *, use_llm: bool,
            client: Any, skipped: int) -> CloseResult:
    """Write the close of each of `wanted`'s open days into `memory` (the caller holds its lock and commits), or
    say the last is closed already when no cycle ran since its close: a second close reports only those cycles."""
    tz = config.tzinfo()
    # Read back from LOG's end only as far as each day needs: into the sealed volumes for an old day alone.
    log_text = log_history.of(memory.workspace)
    open_days = [d for d in wanted if not day_entries(log_text, d, tz)[1]]
    again = ""
    if not open_days:
        # Closed already: cycles run since then are reported by a second close (each cycle in one report).
        closes = day_entries(log_text, wanted[-1], tz)[1]
        where = log_text.where(closes[-1])      # a close a seal moved is in its volume (rules 6)
        start, end = day_bounds(wanted[-1], tz)
        if not unreported_cycles(log_text, reported_until(end, moment), tz, day_start=start):
            return CloseResult(wanted[-1], "already-closed",
                               f"{wanted[-1].isoformat()} is already closed ({where}); nothing changed")
        open_days, again = [wanted[-1]], f" since its close at {closes[-1].when} ({where})"
    ws = memory.workspace
    backs = backing_for(ws)
    model = CloseModel(config.close.model, client) if use_llm and (client is not None or api_key_set()) else None
    shape = day_report.EntryShape.within(size_limits(config).log_entry)
    # Judged as the close found memory (what the cycles refuse to start on), before its own writes; the
    # promotions then share the parses of the same texts.
    invalid = writeup.invalid_memory_problem(memory, shape)
    promoted = promote_live(memory, config, model, today=moment.astimezone(tz).date(), backs=backs)
    previous = close_entries(log_text)
    standing = day_report.Standing(day_report.parse_standing(previous[-1] if previous else None))
    result = CloseResult(open_days[-1], "closed", "", promoted=promoted.promoted,
                         not_promoted=promoted.not_promoted, decisions_filed=promoted.decisions_filed)
    roadmap_text = placeholders.with_filled_ticked(memory.read("roadmap"), lambda name: _filled(memory, name))
    week = writeup.Week(moment)
    for index, day in enumerate(open_days):
        last = index == len(open_days) - 1
        facts, as_of = writeup.facts_of(memory, config, day, moment, week=week)
        # Memory as it stands now is the latest report's, like the promotions: every cycle since refused.
        problems: list[str] = list(invalid) if last else []
        if index == 0 and skipped:
            problems.append(f"the closes of {skipped} earlier day(s) were missed and are not written up: a close "
                            f"catches up at most {MAX_CATCH_UP} days")
        streak_lines, opened = writeup.streak_problems(memory, facts, roadmap_text)
        problems += streak_lines
        result.lessons_opened += opened
        lasting, more = writeup.standing_problems(facts, config, standing, day, promoted if last else None,
                                                  before=problems, shape=shape)
        # What only the close writes up comes first; the list is cut to its share of the entry from the end, where
        # each cycle's own line is, which its LOG entry holds in full.
        problems += lasting + day_report.cycle_problems(facts)
        plan = writeup.plan_tomorrow(memory, config, facts, roadmap_text, as_of) if last else None
        summary = None
        promotion_lines = writeup.promotion_lines(promoted, standing, day, shape) if last else []
        if last and model is not None and plan is not None:
            written = model.prose(_template(memory), day.isoformat(),
                                  _facts_for_model(facts, problems, promotion_lines, plan))
            if written is not None:
                summary, plan = written[0], (written[1], written[2])
            result.llm = model.usage.describe(model.model)
        # The report quotes memory (Tasks, Results, titles): a secret that reached it past the hooks is masked here,
        # as in every output, rather than copied into the close's entry, which the checks then refuse, every day.
        fields: dict[str, str] = scrub_data(day_report.close_fields(
            facts, problems=problems, promotion_lines=promotion_lines, plan=plan, summary=summary,
            standing=standing.current, as_of=as_of, shape=shape, problems_more=more))
        memory.add_close_entry(fields)
        result.days.append(day.isoformat())
        result.reports.append(fields)
        standing = standing.carry(complete=last)
        if last:
            result.counts, result.problems, result.report = facts.counts(), problems, fields
            assert plan is not None
            result.plan = scrub(day_report.plan_text(plan, shape))
            latest = closed_day(previous[-1]) if previous else None
            if latest is None or latest <= day:      # never a plan for a day gone by on top of a newer one
                memory.add_plan_block(plan_for=day + timedelta(days=1),
                                      **scrub_data(day_report.plan_block(facts, plan, shape)))
            caught = f" (and {len(open_days) - 1} earlier day(s) caught up)" if len(open_days) > 1 else ""
            closed = f"closed {day.isoformat()} again" if again else f"closed {day.isoformat()}"
            result.message = f"{closed}: {facts.counts_line()}{again}{caught}"
    return result


def _filled(memory: MemoryWriter, name: str) -> bool:
    """Whether the memory file a `Fill in NAME` ROADMAP item names holds no template placeholder any more."""
    for role in ROLES:
        path = memory.config.path(role)
        if name in (path, path.rsplit("/", 1)[-1]):
            return not placeholders.find_placeholders(memory.read(role))
    return False


def _template(memory: MemoryWriter) -> str:
    from gitmem.close.llm import DEFAULT_PROSE

    found = files.read_bytes(memory.root, "prompts/close.md")     # never through a link, never a FIFO
    return found.decode("utf-8", "replace") if found is not None else DEFAULT_PROSE


def _facts_for_model(facts: day_report.DayFacts, problems: list[str], promotions: list[str],
                     plan: tuple[str, str]) -> dict[str, Any]:
    """What the model may word: the facts, never a decision."""
    return {"day": facts.day.isoformat(), "cycles": facts.counts_line(), "done": day_report.done_lines(facts),
            "waiting": [w.describe() for w in facts.waiting], "problems": problems, "promotions": promotions,
            "human_notes": list(facts.human_notes), "offline_plan": {"task": plan[0], "why": plan[1]}}
