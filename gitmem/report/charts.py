"""The page's charts as data: for each, a title, a one-line caption that says what it shows, its x axis (by name:
days, cycles or decisions, shared so the page carries each once) and its series. `assets/report.js` draws them."""
from __future__ import annotations

from dataclasses import dataclass, field
from statistics import median
from typing import Any

from gitmem.memory.log import Outcome
from gitmem.report import series
from gitmem.report.model import WorkspaceReport

HALF_DAY = 43200
FUNNEL_WIDTHS = (9.0, 6.0, 3.5, 1.5)     # opened, confirmed, promoted, retired: widest first, drawn underneath
COLOURS = {Outcome.BUILT: "#2e7d32", Outcome.PUBLISHED: "#1565c0", Outcome.NO_BUILD: "#c62828", "streak": "#7f0000",
           "tokens": "#6a1b9a", "cost": "#ef6c00", "cache": "#00838f", "context": "#1565c0", "budget": "#616161",
           "answered": "#2e7d32", "pending": "#c62828", "opened": "#546e7a", "confirmed": "#f9a825",
           "promoted": "#2e7d32", "retired": "#8d6e63", "proven": "#1565c0", "cap": "#c62828",
           "reverted": "#ef6c00", "salvaged": "#6a1b9a"}


@dataclass(frozen=True)
class Series:
    label: str
    values: list[Any]
    colour: str
    style: str = "line"          # line | step | points | bar | dash
    scale: str = "y"             # y (left axis) | y2 (right axis)
    stack: bool = False          # bars stacked on the ones before them
    plot: list[Any] | None = None   # where to draw the points, when not at their values (marks above bars)
    width: float | None = None   # the line's width in CSS pixels, when not the style's own


@dataclass(frozen=True)
class Chart:
    key: str
    title: str
    caption: str
    x: str                       # days | cycles | decisions
    series: list[Series]
    axes: dict[str, str] = field(default_factory=dict)     # scale -> axis label
    bands: list[list[int]] = field(default_factory=list)   # shaded [from, to] x ranges
    empty: str = ""              # said instead of the chart when nothing is known
    whole: bool = False          # the left axis counts things: it ticks whole numbers only

    def as_data(self) -> dict[str, Any]:
        return {"key": self.key, "x": self.x, "axes": self.axes, "bands": self.bands, "whole": self.whole,
                "series": [{"label": s.label, "values": s.values, "colour": s.colour, "style": s.style,
                            "scale": s.scale, "stack": s.stack, "plot": s.plot, "width": s.width}
                           for s in self.series]}


def axes_data(report: WorkspaceReport, days: series.Daily) -> dict[str, list[Any]]:
    """The shared x axes, and what the legend shows for a point of each."""
    return {"days": [series.epoch(report, d) for d in days.days],
            "cycles": series.distinct_times(report.cycles),
            "cycle_numbers": [c.number for c in report.cycles],
            "decisions": _decision_times(report),
            "decision_ids": [d.id for d in report.decisions]}


def _decision_times(report: WorkspaceReport) -> list[int]:
    found: list[int] = []
    for item in report.decisions:
        value = int(item.asked.timestamp())
        found.append(value if not found or value > found[-1] else found[-1] + 1)
    return found


def build_charts(report: WorkspaceReport, days: series.Daily) -> list[Chart]:
    return [_cycles(report, days), _decisions(report), _lessons(report, days), _rules(report, days),
            _tokens(report), _cache(report), _context(report), _guard(report, days)]


def _cycles(report: WorkspaceReport, days: series.Daily) -> Chart:
    streaks = report.streaks()
    # A band covers the bars of the days a streak ran on: from half a day before its first to half a day after
    # its last (a day's bar is centred on the day's start).
    bands = [[series.epoch(report, series.local_day(report, s.start)) - HALF_DAY,
              series.epoch(report, series.local_day(report, s.end)) + HALF_DAY] for s in streaks]
    if streaks:
        longest = max(streaks, key=lambda s: s.length)
        said = (f"{series.plural(len(streaks), 'streak')}, the longest {longest.length} "
                f"(cycles {longest.first}–{longest.last})")
    else:
        said = "none in this window"
    caption = (f"Cycles per day by outcome, stacked; red bands and marks show Rule 0 streaks "
               f"(3 or more no-build cycles in a row): {said}.")
    parts = [Series(o, days.outcomes[o], COLOURS[o], "bar", stack=True) for o in Outcome]
    marks = [n or None for n in days.streak]
    tops = [sum(days.outcomes[o][i] for o in days.outcomes) + 0.4 if n else None for i, n in enumerate(days.streak)]
    return Chart("cycles", "Cycles per day", caption, "days",
                 [*parts, Series("Rule 0 streak", marks, COLOURS["streak"], "points", plot=tops)], {"y": "cycles"},
                 bands,
                 empty="" if report.cycles else "No cycle ran in this window.", whole=True)


def _decisions(report: WorkspaceReport) -> Chart:
    answered = [None if d.pending else round(d.waited_days, 2) for d in report.decisions]
    pending = [round(d.waited_days, 2) if d.pending else None for d in report.decisions]
    waits = [d.waited_days for d in report.decisions if not d.pending]
    typical = f", answers took {median(waits):.1f} days at the median" if waits else ""
    caption = (f"Days each decision waited, by when it was asked: answered ones until their answer, pending ones "
               f"until now ({len(report.pending)} pending{typical}).")
    return Chart("decisions", "Decision waiting time", caption, "decisions",
                 [Series("answered after (days)", answered, COLOURS["answered"], "points"),
                  Series("pending for (days)", pending, COLOURS["pending"], "points")], {"y": "days"},
                 empty="" if report.decisions else "No decision was open in this window.")


def _lessons(report: WorkspaceReport, days: series.Daily) -> Chart:
    now = {name: values[-1] if values else 0 for name, values in days.funnel.items()}
    caption = (f"Lessons opened, confirmed at least once, promoted to rules and retired, counted up over time "
               f"(now {now['opened']} opened, {now['confirmed']} confirmed, {now['promoted']} promoted, "
               f"{now['retired']} retired; a retirement is dated by the lesson's last dated line).")
    # The counts often coincide (every confirmed lesson promoted, nothing retired): each line is drawn narrower
    # than the one under it, so where they run together each still shows as a band of its own colour.
    widths = dict(zip(series.FUNNEL, FUNNEL_WIDTHS, strict=True))
    return Chart("lessons", "Lesson funnel", caption, "days",
                 [Series(name, days.funnel[name], COLOURS[name], "step", width=widths[name])
                  for name in series.FUNNEL],
                 {"y": "lessons"}, empty="" if report.lessons else "No lesson recorded yet.", whole=True)


def _rules(report: WorkspaceReport, days: series.Daily) -> Chart:
    caption = (f"Proven rules over time against the cap of {report.proven_cap} (now {report.proven}/"
               f"{report.proven_cap}); a rule counts from the close that promoted it, a retired one from the "
               f"window's start.")
    return Chart("rules", "Proven rules against the cap", caption, "days",
                 [Series("proven rules", days.proven, COLOURS["proven"], "step"),
                  Series("cap", [report.proven_cap] * len(days.days), COLOURS["cap"], "dash")], {"y": "rules"},
                 empty="" if report.proven or any(days.proven) else "No lesson has been promoted to a rule yet.",
                 whole=True)


def _tokens(report: WorkspaceReport) -> Chart:
    tokens = [c.tokens for c in report.cycles]
    costs = [round(c.cost, 4) if c.cost is not None else None for c in report.cycles]
    known, total = series.share_known(list(tokens))
    priced, _ = series.share_known(list(costs))
    parts = [Series("tokens", tokens, COLOURS["tokens"], "line")]
    if priced:
        parts.append(Series("cost (USD)", costs, COLOURS["cost"], "points", scale="y2"))
        spent = sum(c for c in costs if c is not None)
        said = f"; cost in USD where the Evidence has one ({series.plural(priced, 'cycle')}, {spent:.2f} USD in all)"
    else:
        said = "; no cycle's Evidence has a cost"
    caption = (f"Tokens each cycle spent, as its backend reported them ({known} of "
               f"{series.plural(total, 'cycle')}){said}.")
    return Chart("tokens", "Tokens and cost per cycle", caption, "cycles", parts,
                 {"y": "tokens", "y2": "USD"} if priced else {"y": "tokens"},
                 empty="" if known else "No cycle's Evidence has a token count.")


def _cache(report: WorkspaceReport) -> Chart:
    rates = [round(100 * c.cache_rate, 1) if c.cache_rate is not None else None for c in report.cycles]
    known, total = series.share_known(list(rates))
    caption = (f"Share of each cycle's prompt read from the prompt cache, in percent, where the usage reports cache "
               f"reads ({known} of {series.plural(total, 'cycle')}).")
    return Chart("cache", "Cache hit rate", caption, "cycles", [Series("cache hits (%)", rates, COLOURS["cache"])],
                 {"y": "%"}, empty="" if known else "No cycle's usage reports cache reads.")


def _context(report: WorkspaceReport) -> Chart:
    sizes = [c.context for c in report.cycles]
    budgets = [c.budget if c.budget is not None else report.budget for c in report.cycles]
    known, total = series.share_known(list(sizes))
    caption = (f"Tokens of the context each cycle read, against the budget it had ({report.budget} now); cycles "
               f"from before the runner recorded it show as unknown ({known} of {total} known).")
    return Chart("context", "Context size per cycle", caption, "cycles",
                 [Series("context tokens", sizes, COLOURS["context"], "line"),
                  Series("budget", budgets, COLOURS["budget"], "dash")], {"y": "tokens"},
                 empty="" if known else "No cycle recorded its context size yet (older cycles are unknown).")


def _guard(report: WorkspaceReport, days: series.Daily) -> Chart:
    reverted, salvaged = sum(days.reverts), sum(days.salvaged)
    salvage = sum(1 for name in report.waiting_branches if "gitmem/salvage/" in name)
    branches = series.plural(salvage, "salvage branch", "salvage branches")
    caption = (f"Forbidden memory edits the runner reverted, and cycles whose work went to a salvage branch, per "
               f"day ({reverted} reverted, {salvaged} salvaged; {branches} in git).")
    return Chart("guard", "Reverted edits and salvaged cycles", caption, "days",
                 [Series("reverted edits", days.reverts, COLOURS["reverted"], "bar"),
                  Series("salvaged cycles", [n or None for n in days.salvaged], COLOURS["salvaged"], "points")],
                 {"y": "per day"}, empty=_nothing_guarded(report, reverted + salvaged), whole=True)


def _nothing_guarded(report: WorkspaceReport, events: int) -> str:
    """Said instead of the guard's chart when there is nothing to draw: axes of zeros read as a chart that failed."""
    if events:
        return ""
    if not report.cycles:
        return "No cycle ran in this window."
    return "No forbidden edit was reverted and no cycle was salvaged in this window."
