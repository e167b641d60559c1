"""`gitmem report`: one self-contained HTML page. Charts are drawn by uPlot (vendored in `assets/`, MIT, from the
npm package pinned in tests/support/js/package-lock.json) from the JSON the page carries; the tables need no
script. Nothing is fetched: styles, scripts and data are all inline, so the file opens offline."""
from __future__ import annotations

import json
from collections.abc import Sequence
from html import escape
from importlib import resources
from typing import Any

from gitmem.memory import decisions
from gitmem.memory.log import Outcome
from gitmem.report import charts, series
from gitmem.report.model import WorkspaceReport
from gitmem.secrets import scrub

DATA_ID = "gitmem-report-data"


def asset(name: str) -> str:
    return (resources.files("gitmem.report") / "assets" / name).read_text(encoding="utf-8")


def totals_line(report: WorkspaceReport) -> str:
    counts = series.outcome_counts(report)
    plural = series.plural
    parts = [f"{plural(len(report.cycles), 'cycle')} ({counts[Outcome.BUILT]} built, {counts[Outcome.PUBLISHED]} "
             f"published, {counts[Outcome.NO_BUILD]} no-build)", plural(len(report.streaks()), "Rule 0 streak"),
             f"{plural(len(report.pending), 'decision')} pending",
             f"{report.proven}/{report.proven_cap} proven rules", plural(len(report.closes), "daily close")]
    return " · ".join(parts)


def span(report: WorkspaceReport) -> str:
    return f"{report.first_day.isoformat()} – {report.until.isoformat()}"


def _card(index: int, chart: charts.Chart) -> str:
    body = (f'<p class="empty">{escape(chart.empty)}</p>' if chart.empty else
            f'<div class="chart" id="chart-{index}-{chart.key}" data-chart="{chart.key}"></div>')
    return (f'<figure class="card" id="card-{index}-{chart.key}"><figcaption><h3>{escape(chart.title)}</h3>'
            f'<p>{escape(chart.caption)}</p></figcaption>{body}</figure>')


def _pending(report: WorkspaceReport) -> str:
    stale = ' stale'
    rows = [f'<tr><td>{escape(d.id)}</td><td>{escape(d.title)}</td><td>{d.asked:%Y-%m-%d %H:%M}</td>'
            f'<td class="age{stale if decisions.waited_too_long(d.waited_days, report.stale_days) else ""}">'
            f'{d.waited_days:.1f} d</td>'
            f'<td>{escape(d.recommendation)}</td></tr>' for d in report.pending]
    table = ("<table><thead><tr><th>ID</th><th>decision</th><th>asked</th><th>waiting</th><th>recommendation</th>"
             f"</tr></thead><tbody>{''.join(rows)}</tbody></table>") if rows else '<p class="empty">None.</p>'
    return f'<section class="card pending"><h3>Pending decisions ({len(rows)})</h3>{table}</section>'


def _close(report: WorkspaceReport) -> str:
    latest = report.latest_close
    if latest is None:
        return '<section class="card close"><h3>Latest close report</h3><p class="empty">No close yet.</p></section>'
    items = "".join(f"<dt>{escape(key)}</dt><dd>{escape(value)}</dd>" for key, value in latest.fields)
    return (f'<section class="card close"><h3>Latest close report: {escape(latest.day)}</h3>'
            f'<dl class="close"><dt>Written</dt><dd>{latest.when:%Y-%m-%d %H:%M %z}</dd>{items}</dl></section>')


def _branches(report: WorkspaceReport) -> str:
    """The branches waiting on the human, at the top of the workspace: a proposal or a salvaged cycle is work
    only the human can land or drop."""
    waiting = report.waiting_branches
    if not waiting:
        return ""
    names = "".join(f"<li><code>{escape(name)}</code> · {escape(_kind(name))}</li>" for name in waiting)
    return (f'<section class="card waiting"><h3>Branches waiting on you ({len(waiting)})</h3>'
            f'<ul class="branches">{names}</ul></section>')


def _kind(name: str) -> str:
    for part, said in (("gitmem/proposal/", "a proposal: merge it, or delete it if its decision was No"),
                       ("gitmem/salvage/", "a failed cycle's work: look, then merge or delete"),
                       ("gitmem/side/", "work kept aside: merge it by memory rules, or delete it"),
                       ("gitmem/memory", "the memory pull request's branch"),
                       ("gitmem/cycle-", "a cycle whose push was refused: merge its pull request"),
                       ("gitmem/close-", "a close whose push was refused: merge its pull request")):
        if part in name:
            return said
    return "made by gitmem for you"


def _workspace(index: int, report: WorkspaceReport) -> tuple[str, dict[str, Any]]:
    days = series.daily(report)
    built = charts.build_charts(report, days)
    problems = "".join(f'<p class="problem">{escape(p)}</p>' for p in report.problems)
    html = (f'<section class="workspace" id="workspace-{index}"><h2>{escape(report.label)}</h2>'
            f'<p class="totals">{escape(span(report))} · {escape(totals_line(report))}</p>{problems}'
            f'{_branches(report)}<div class="cards">{"".join(_card(index, c) for c in built)}</div>'
            f'<section class="tables">{_pending(report)}{_close(report)}</section></section>')
    data = {"name": report.label, "timezone": report.timezone, "axes": charts.axes_data(report, days),
            "charts": [c.as_data() for c in built if not c.empty]}
    return html, data


def render_html(reports: Sequence[WorkspaceReport]) -> str:
    """The page for one workspace, or several side by side."""
    parts = [_workspace(index, report) for index, report in enumerate(reports)]
    payload = json.dumps({"workspaces": [data for _, data in parts]}, separators=(",", ":"), ensure_ascii=False)
    first = reports[0]
    labels = ", ".join(r.label for r in reports)
    days = f"{min(r.first_day for r in reports).isoformat()} – {max(r.until for r in reports).isoformat()}"
    title = scrub(f"gitmem report · {labels} · {days}")
    made = f"made {first.moment:%Y-%m-%d %H:%M} ({first.timezone})"
    many = " many" if len(reports) > 1 else ""
    body = (f'<header class="page"><h1>{escape(title)}</h1><p>{escape(made)} from the memory in git; hover a '
            f'chart for exact values, drag across it to zoom, double-click to zoom out.</p></header>'
            f'<noscript><p>The charts need JavaScript; the tables below do not.</p></noscript>'
            f'<main class="workspaces{many}" style="--columns: {len(reports)}">{"".join(h for h, _ in parts)}</main>'
            f'<script type="application/json" id="{DATA_ID}">{payload.replace("<", chr(92) + "u003c")}</script>')
    # Memory texts were redacted when collected; the whole page is passed once more before the scripts go in.
    body = scrub(body)
    notice = asset("uPlot.LICENSE").replace("--", "- -")
    return ("<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
            f"<title>{escape(title)}</title><style>{asset('uPlot.min.css')}\n{asset('report.css')}</style></head>"
            f"<body>{body}\n<!-- uPlot {notice} -->\n<script>{asset('uPlot.iife.min.js')}</script>\n"
            f"<script>{asset('report.js')}</script></body></html>\n")
