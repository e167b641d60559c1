"""`gitmem report --format summary`: the last days as Markdown with Mermaid charts, for a GitHub job summary (or a
pull request), which render Mermaid. `xychart-beta` has no stacked bars and no legend, so stacked bars are drawn
as overlapping running totals, tallest first, and each title names its colours."""
from __future__ import annotations

from collections.abc import Sequence
from datetime import date, timedelta
from statistics import mean

from gitmem.memory.log import Outcome
from gitmem.report import series
from gitmem.report.model import WorkspaceReport
from gitmem.secrets import scrub

DAYS = 14
GREEN, BLUE, RED, ORANGE, PURPLE, GREY = "#2e7d32", "#1565c0", "#c62828", "#ef6c00", "#6a1b9a", "#616161"
MAX_DECISIONS = 12


def window(until: date, days: int = DAYS) -> date:
    """The first day of the `days` days that end with `until`."""
    return until - timedelta(days=days - 1)


def _text(value: str) -> str:
    """Text for a Mermaid string: no quotes, no line breaks, plain ASCII punctuation."""
    return " ".join(value.replace('"', "'").replace("·", "-").replace("–", "-").split())


def _cell(value: str) -> str:
    """The agent's text (a decision, a close report quoting results) as the summary shows it: on one line, and inert
    where GitHub renders it, as in a pull request (no image, link, mention or issue reference; `|` no column)."""
    from gitmem.publish.pullrequest import for_pr

    return for_pr(value)


def _plain(value: float) -> str:
    """A number as Mermaid reads it: digits and at most two decimals, never an exponent."""
    return f"{value:.2f}".rstrip("0").rstrip(".") if isinstance(value, float) else str(value)


def _numbers(values: Sequence[float]) -> str:
    return ", ".join(_plain(v) for v in values)


def xychart(title: str, categories: Sequence[str], axis: str, bars: Sequence[Sequence[float]] = (),
            lines: Sequence[Sequence[float]] = (), colours: Sequence[str] = (), horizontal: bool = False) -> str:
    """One Mermaid xychart; series are drawn in order and take `colours` in order."""
    top = max([1.0, *(v for s in [*bars, *lines] for v in s)])
    names = ", ".join(f'"{_text(c)}"' for c in categories)
    body = [f'xychart-beta{" horizontal" if horizontal else ""}', f'    title "{_text(title)}"',
            f"    x-axis [{names}]", f'    y-axis "{_text(axis)}" 0 --> {_plain(round(top * 1.1, 1))}']
    body += [f"    bar [{_numbers(values)}]" for values in bars]
    body += [f"    line [{_numbers(values)}]" for values in lines]
    head = ["---", "config:", "  themeVariables:", "    xyChart:", f'      plotColorPalette: "{", ".join(colours)}"',
            "---"] if colours else []
    return "\n".join(["```mermaid", *head, *body, "```"])


def _days_chart(report: WorkspaceReport, daily: series.Daily) -> str:
    built, published, failed = (daily.outcomes[o] for o in Outcome)
    labels = [d.strftime("%m-%d") for d in daily.days]
    totals = [b + p + n for b, p, n in zip(built, published, failed, strict=True)]
    shipped = [b + p for b, p in zip(built, published, strict=True)]
    return xychart("Cycles per day: built (green), published (blue), no-build (red)", labels, "cycles",
                   bars=[totals, shipped, built], colours=[RED, BLUE, GREEN])


def _per_day(report: WorkspaceReport, pick: str) -> tuple[list[str], list[float], list[float]]:
    """(days that know the value, daily mean, daily max) of a per-cycle value."""
    found: dict[date, list[float]] = {}
    for cycle in report.cycles:
        value = getattr(cycle, pick)
        if value is not None:
            found.setdefault(series.local_day(report, cycle.when), []).append(value)
    days = sorted(found)
    return ([d.strftime("%m-%d") for d in days], [round(mean(found[d]), 1) for d in days],
            [max(found[d]) for d in days])


def _usage_charts(report: WorkspaceReport) -> list[str]:
    found = []
    labels, means, _ = _per_day(report, "tokens")
    if labels:
        found.append(xychart("Tokens per cycle (daily mean)", labels, "tokens", lines=[means], colours=[PURPLE]))
    else:
        found.append("_No cycle in these days has a token count in its Evidence._")
    labels, _, tops = _per_day(report, "context")
    if labels:
        budget = report.budget
        found.append(xychart(f"Context per cycle (daily max, blue) against the budget {budget} (grey)", labels,
                             "tokens", lines=[tops, [budget] * len(labels)], colours=[BLUE, GREY]))
    else:
        found.append("_No cycle in these days recorded its context size (older cycles show as unknown)._")
    return found


def _decisions_chart(report: WorkspaceReport) -> str:
    shown = report.decisions[-MAX_DECISIONS:]
    if not shown:
        return "_No decision was open in these days._"
    answered = [0.0 if d.pending else round(d.waited_days, 1) for d in shown]
    waiting = [round(d.waited_days, 1) if d.pending else 0.0 for d in shown]
    return xychart("Days each decision waited: answered (green), still pending (red)", [d.id for d in shown],
                   "days", bars=[answered, waiting], colours=[GREEN, RED])


def _lessons_chart(report: WorkspaceReport, first: date) -> str:
    before = series.funnel(report, (first - timedelta(days=1),))
    now = series.funnel_now(report)
    counts = [now[name] - before[name][0] for name in series.FUNNEL]
    return xychart(f"Lessons in these days (proven rules {report.proven}/{report.proven_cap})",
                   list(series.FUNNEL), "lessons", bars=[counts], colours=[ORANGE], horizontal=True)


def _guard_chart(daily: series.Daily) -> str:
    if not any(daily.reverts) and not any(daily.salvaged):
        return "_No forbidden memory edit was reverted and no cycle was salvaged in these days._"
    labels = [d.strftime("%m-%d") for d in daily.days]
    both = [r + s for r, s in zip(daily.reverts, daily.salvaged, strict=True)]
    return xychart("Per day: forbidden edits reverted (orange), cycles salvaged (purple)", labels, "count",
                   bars=[both, daily.salvaged], colours=[ORANGE, PURPLE])


def _facts(report: WorkspaceReport, daily: series.Daily) -> str:
    counts = series.outcome_counts(report)
    streaks = report.streaks()
    runs = ", ".join(f"cycles {s.first}-{s.last}" for s in streaks)
    pending = report.pending
    oldest = f" (oldest {pending[0].id}, {pending[0].waited_days:.1f} days)" if pending else ""
    built, published, no_build = (counts[o] for o in Outcome)
    plural = series.plural
    return (f"**{plural(len(report.cycles), 'cycle')}** ({built} built, {published} published, "
            f"{no_build} no-build) · **Rule 0 streaks: {len(streaks)}**{f' ({runs})' if runs else ''} · "
            f"**{plural(len(pending), 'decision')} pending**{oldest} · proven rules {report.proven}/"
            f"{report.proven_cap} · {plural(sum(daily.reverts), 'forbidden edit')} reverted · "
            f"{plural(sum(daily.salvaged), 'cycle')} salvaged")


def _tables(report: WorkspaceReport) -> list[str]:
    found = []
    if report.pending:
        rows = [f"| {d.id} | {_cell(d.title)} | {d.waited_days:.1f} d | {_cell(d.recommendation)} |"
                for d in report.pending]
        found.append("\n".join(["| decision | title | waiting | recommendation |", "|---|---|---|---|", *rows]))
    latest = report.latest_close
    if latest is not None:
        keep = [(k, v) for k, v in latest.fields if k in ("Cycles", "Problems", "Plan", "Promotions")]
        lines = [f"- **{k}**: {_cell('; '.join(v.splitlines()))}" for k, v in keep]   # a list: one item a line
        found.append("\n".join([f"**Latest close report ({_cell(latest.day)})**", *lines]))
    return found


def render_markdown(reports: Sequence[WorkspaceReport]) -> str:
    """Markdown for each report's window (the caller collects them for the last DAYS days)."""
    parts: list[str] = []
    for report in reports:
        daily = series.daily(report)
        first = report.first_day
        parts += [f"### gitmem report · {report.label} · {first.isoformat()} – {report.until.isoformat()}",
                  _facts(report, daily), _days_chart(report, daily), *_usage_charts(report),
                  _decisions_chart(report), _lessons_chart(report, first), _guard_chart(daily), *_tables(report)]
    return scrub("\n\n".join(parts) + "\n\n")
