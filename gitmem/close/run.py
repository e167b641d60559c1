"""`run_close`: gather the day, promote what two later results proved, report, plan, and commit once.

Order matters: promotions are written first (after re-reading the live files), so the report can list
them; then the report, then the plan; then the whole change is checked as one commit would be, with the
close's own permissions (rules may be added and retired here, nothing else that a cycle may not do).
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from datetime import date, datetime, timedelta
from typing import Any

from gitmem import codes, gitio
from gitmem.checks.violation import Violation
from gitmem.close import day as days
from gitmem.close import promotion as promoting
from gitmem.close import report
from gitmem.close.guard import CloseError, changed_files, check_result, restore
from gitmem.close.llm import CloseModel, available
from gitmem.config import Config
from gitmem.memory import decisions, lessons
from gitmem.memory.text import field_value
from gitmem.workspace import Clock, Workspace
from gitmem.workspace.writer import MemoryWriter, WriteRefused

PHASE_TRAILER = "Gitmem-Phase: close"


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
    push: dict[str, Any] | None = None
    violations: list[Violation] = field(default_factory=list)    # GM8xx: what went wrong, as data

    def to_json(self) -> dict[str, Any]:
        from gitmem.checks.render import as_data

        data = asdict(self)
        data["day"] = self.day.isoformat()
        data["violations"] = as_data(self.violations)
        return data


def run_close(ws: Workspace, *, day: date | None = None, use_llm: bool = False,
              push: bool = False, clock: Clock | None = None, client: Any = None) -> CloseResult:
    """Close `day` (default: today in the configured zone). `client` replaces the Anthropic client in tests."""
    from gitmem.cycle import lock

    repo, config = ws.repo, ws.config
    clock = clock or ws.clock()
    moment = clock()
    today = moment.astimezone(config.tzinfo()).date()
    day = day or today
    if day > today:
        raise CloseError(f"{day.isoformat()} has not happened yet (today is {today.isoformat()})")
    head = gitio.head_id(repo)
    if head is None:
        raise CloseError("this repository has no commits yet; commit the memory files first")
    with lock.acquire(gitio.state_dir(repo), what="close"):
        dirty = sorted(p for p, _ in gitio.dirty_files(repo) if p in config.memory_paths().values())
        if dirty:
            raise CloseError(f"memory files have uncommitted changes: {', '.join(dirty)}; commit or discard "
                             "them first (the close commits memory files whole)", dirty=True)
        memory = MemoryWriter(ws, clock=clock, author_email=config.agent.email)
        try:
            result = _close(memory, config, day, moment, use_llm=use_llm, client=client)
            if result.status == "closed":
                result.commit = _commit(ws, result, head)
        except BaseException as err:
            # The tree was clean at HEAD when the close began: putting HEAD back loses nothing.
            if gitio.head_id(repo) == head:
                restore(ws, head, changed_files(ws, head))
            if isinstance(err, WriteRefused):
                raise WriteRefused(f"close failed, nothing changed: {err}", err.violations) from None
            raise
    if push and result.commit:
        result.push = _push(ws, day)
        if result.push["status"] == "pushed" and result.push["commit"]:
            result.commit = result.push["commit"]
        elif result.push["status"] in ("conflict", "failed"):
            where = result.push["side_branch"] or "(close)"
            result.violations.append(Violation.of(codes.CLOSE_PUSH_FAILED, where, 1,
                                                  message="; ".join(result.push["messages"][-2:])))
    return result


def _close(memory: MemoryWriter, config: Config, day: date, moment: datetime, *, use_llm: bool,
           client: Any) -> CloseResult:
    tz = config.tzinfo()
    log_text = memory.read("log")
    cycles, closes = days.day_entries(log_text, day, tz)
    if closes:
        where = f"{config.path('log')}:{closes[0].line}"
        return CloseResult(day, "already-closed", f"{day.isoformat()} is already closed ({where}); nothing changed")
    _, end = days.day_bounds(day, tz)
    waiting = decisions.waiting(decisions.parse(memory.read("decisions")), moment)
    human = tuple(value for b in days.day_now_blocks(memory.read("now"), day, tz)
                  if (value := field_value(b.fields, "Human")))
    facts = report.DayFacts(day, cycles, waiting, days.no_build_streak(log_text, end),
                            config.close.stale_decision_days, human)
    roadmap_text = memory.read("roadmap")
    result = CloseResult(day, "closed", "", counts=facts.counts())
    model = CloseModel(config.close.model, client) if use_llm and (client is not None or available()) else None

    promoted = promoting.promote_live(memory, config, model, today=moment.astimezone(tz).date())
    result.promoted, result.not_promoted = promoted.promoted, promoted.not_promoted
    result.decisions_filed = promoted.decisions_filed
    promotion_lines = promoted.lines
    hint = report.fix_hint(roadmap_text, waiting)
    streak_lesson = _streak_lesson(memory, facts, hint, result) if facts.streak.is_problem else None
    problems = report.problem_lines(facts, hint, streak_lesson)
    if promoted.rules_full:
        problems.append(f"RULES is full ({config.limits.proven_rules_max} proven rules): eligible lessons wait; "
                        "see Promotions for the retirements proposed")
    if promoted.refused:
        problems.append(f"{promoted.refused}; retire or supersede a rule, or shorten RULES")
    plan = report.offline_plan(roadmap_text, waiting, config.cycle.priorities)
    summary = None
    if model is not None:
        written = model.prose(_template(memory), day.isoformat(), _facts_for_model(facts, problems, promotion_lines,
                                                                                   plan))
        if written is not None:
            summary, plan = written[0], (written[1], written[2])
        result.llm = model.usage.describe(model.model)
    result.problems = problems
    result.plan = f"{plan[0]} — why: {plan[1]}"
    result.report = report.close_fields(facts, problems=problems, promotion_lines=promotion_lines, plan=plan,
                                        summary=summary)
    memory.add_close_entry(result.report)
    memory.add_plan_block(plan_for=day + timedelta(days=1), **report.plan_block(facts, plan))
    result.message = f"closed {day.isoformat()}: {facts.counts_line()}"
    return result


def _streak_lesson(memory: MemoryWriter, facts: report.DayFacts, hint: str, result: CloseResult) -> str:
    """Rule 0: open one lesson per streak (keyed by its first cycle), never a second for the same one."""
    streak = facts.streak
    title = f"Rule 0: no-build streak from cycle {streak.first}"
    for item in lessons.parse(memory.read("lessons")).lessons:
        if item.is_open and item.title == title:
            return item.id
    item = memory.add_lesson(
        title=title, cycle=streak.last,
        happened=f"cycles {streak.first}–{streak.last} ({streak.length} in a row) built nothing",
        why=report.streak_cause(streak), change=hint[0].upper() + hint[1:])
    result.lessons_opened.append(item.id)
    return item.id


def _template(memory: MemoryWriter) -> str:
    from gitmem.close.llm import DEFAULT_PROSE

    path = memory.root / "prompts" / "close.md"
    return path.read_text(encoding="utf-8") if path.is_file() else DEFAULT_PROSE


def _facts_for_model(facts: report.DayFacts, problems: list[str], promotions: list[str],
                     plan: tuple[str, str]) -> dict[str, Any]:
    return {"day": facts.day.isoformat(), "cycles": facts.counts_line(), "done": report.done_lines(facts),
            "waiting": [w.describe() for w in facts.waiting], "problems": problems, "promotions": promotions,
            "human_notes": list(facts.human_notes), "offline_plan": {"task": plan[0], "why": plan[1]}}


def _commit(ws: Workspace, result: CloseResult, head: str) -> str:
    """One commit by the agent identity, after the whole change passes the checks and the close's permissions."""
    config = ws.config
    files = changed_files(ws, head)
    problems = check_result(ws, head, files)
    if problems:
        raise CloseError("the close would leave invalid memory; nothing was committed:\n" + "\n".join(problems),
                         code=codes.CLOSE_INVALID_RESULT)
    body = [result.message] + [f"promoted {p['rule']} from {p['lesson']}" for p in result.promoted]
    message = f"gitmem: close {result.day.isoformat()}\n\n" + "\n".join(body) + f"\n\n{PHASE_TRAILER}\n"
    identity = gitio.Identity(config.agent.name, config.agent.email)
    return gitio.commit_files(ws.repo, files, message, author=identity)


def _push(ws: Workspace, day: date) -> dict[str, Any]:
    from gitmem.publish.push import publish

    outcome = publish(ws.repo, conflict_branch=f"gitmem/close-{day.isoformat()}")
    # After a rebase the published commit is a new one: report that id, not the local one it replaced.
    return {"status": outcome.status, "commit": outcome.commit, "side_branch": outcome.side_branch,
            "messages": outcome.messages}
