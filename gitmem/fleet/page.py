"""`gitmem fleet report`: one self-contained page for the human: the inbox, the health table, and per agent two
sparklines drawn from its `gitmem.report` data (cycles per day by outcome over the last two weeks; the context
each recent cycle read against its budget), each agent linking to its own report page.

The sparklines are inline SVG, so the page needs no script at all; styles come from the report's own sheet.
Every text was redacted when it was read, and the whole page is redacted once more here.
"""
from __future__ import annotations

import hashlib
import os
import re
import unicodedata
from collections.abc import Sequence
from datetime import timedelta
from html import escape
from pathlib import Path
from urllib.parse import quote

from gitmem.confined import files
from gitmem.fleet.fleetfile import DEVICE_NAMES
from gitmem.fleet.need import by_need, fleet_notes, headline, nothing_waits, unread_note
from gitmem.fleet.parallel import FleetView
from gitmem.fleet.public import PUBLIC_NOTE, public_row
from gitmem.fleet.read import UNREADABLE, AgentReading, AgentRow, InboxItem
from gitmem.memory.log import OUTCOMES
from gitmem.report import series
from gitmem.report.charts import COLOURS
from gitmem.report.html import DATA_ID, asset
from gitmem.report.model import WorkspaceReport
from gitmem.secrets import scrub

SPARK_DAYS = 14
SPARK_CYCLES = 30
WIDTH, HEIGHT = 132, 18          # small enough that 22 agents fit a laptop screen, one line each
VERDICT_CLASS = {"ok": "ok", "stalled": "bad", "clock ahead": "bad", "over budget": "bad", "rule 0 streak": "bad",
                 "unreadable": "bad",
                 "waiting on you": "warn", "no cycles yet": "warn"}
STYLE = """
section.fleet { padding: 8px 28px 24px; }
section.fleet > h2 { margin: 8px 0 8px; font-size: 18px; }
td.verdict { font-weight: 600; white-space: nowrap; } td.verdict.bad { color: #b3261e; }
td.verdict.warn { color: #9a6700; } td.verdict.ok { color: #2e7d32; }
td.why { color: var(--muted); font-size: 12.5px; max-width: 28ch; overflow: hidden; text-overflow: ellipsis; }
table.health td { white-space: nowrap; padding-top: 3px; padding-bottom: 3px; }
p.note { color: var(--muted); font-size: 12.5px; margin: 2px 0; }
section.fleet { overflow-x: auto; }
@media (max-width: 700px) { table.health .why, table.health .spark { display: none; } }
svg.spark { display: inline-block; vertical-align: middle; margin-right: 4px; background: #fbfcfd;
            border: 1px solid var(--line); border-radius: 3px; }
a { color: #0b57d0; }
"""


AGENT_PAGES = "agents"            # the folder of the agents' own pages, beside the fleet page
# A workspace name kept as its page's file name: lower case, and nothing a URL or a file system reads otherwise.
PLAIN_STEM = re.compile(r"[a-z0-9][a-z0-9._-]{0,99}\Z")


def page_stem(name: str) -> str:
    """The file name (without `.html`) of a workspace's page. A workspace name is the agent's, from its own
    gitmem.yaml, and may be anything without a slash: `Docs` and `docs` are one file on macOS and Windows, and
    `#`, `?` or `%` break a link. A plain lower-case name is its own stem; any other keeps its safe letters and
    gains the start of its own hash, so it is stable from one run to the next whatever its siblings are called,
    and unique ignoring case."""
    if PLAIN_STEM.match(name) and not DEVICE_NAMES.match(name):
        return name
    safe = re.sub(r"[^A-Za-z0-9._-]", "_", name).strip(".") or "_"
    return f"{safe}-{hashlib.sha256(name.encode('utf-8')).hexdigest()[:10]}"


def agent_page_files(rows: Sequence[AgentRow]) -> dict[int, str]:
    """id(row) -> the file of its agent's own report, relative to the fleet page: agents/NAME.html, or for a
    workspace agents/NAME/STEM.html (`page_stem`). fleet.yaml's names are unique ignoring case and hold no
    slash (gitmem.fleet.fleetfile); two stems that still fold to one name (chosen to, or masked alike) are told
    apart by a number, in the rows' order."""
    found: dict[int, str] = {}
    taken: set[str] = set()
    for row in rows:
        base = f"{AGENT_PAGES}/{row.agent}/{page_stem(row.workspace)}" if row.workspace else \
            f"{AGENT_PAGES}/{row.agent}"
        name, number = f"{base}.html", 1
        while unicodedata.normalize("NFC", name).casefold() in taken:
            number += 1
            name = f"{base}-{number}.html"
        taken.add(unicodedata.normalize("NFC", name).casefold())
        found[id(row)] = name
    return found


def agent_page_names(view: FleetView) -> list[str]:
    """The agents' own pages a full report writes, relative to the fleet page's folder."""
    files_of = agent_page_files(view.rows)
    return [files_of[id(reading.row)] for reading in view.readings if reading.page]


def write_agent_pages(view: FleetView, folder: Path) -> int:
    """Each agent's own report written in `folder`, the fleet page's, at `agent_page_files`; how many were
    written. Never through a link, in a directory of links or not (gitmem.confined.files: FileRefused); OSError
    when a page cannot be written."""
    files_of = agent_page_files(view.rows)
    written = 0
    for reading in view.readings:
        if reading.page:
            files.write_bytes(folder, files_of[id(reading.row)], reading.page.encode("utf-8"))
            written += 1
    return written


def stale_agent_pages(folder: Path, rows: Sequence[AgentRow]) -> list[str]:
    """The agents' pages in `folder`'s AGENT_PAGES a report wrote earlier for no agent of `rows` (the fleet's
    agents, read this time or not: an unreadable one keeps every page of its own): an agent taken out of the fleet
    file, a workspace renamed. Each quotes that
    agent's memory, which whoever publishes the folder would publish with the new pages. Only a report's page is
    named (its data script, `DATA_ID`); a file of the human's own there, a link, or a deeper folder is not, and
    nothing is followed."""
    kept = {unicodedata.normalize("NFC", name).casefold() for name in agent_page_files(rows).values()}
    # An agent that could not be read this time has no workspace rows: its workspaces' pages stay.
    agents = {unicodedata.normalize("NFC", f"{AGENT_PAGES}/{row.agent}/").casefold() for row in rows
              if row.verdict == UNREADABLE}
    found: list[str] = []
    if (folder / AGENT_PAGES).is_symlink():
        return found
    for rel in _html_below(folder, AGENT_PAGES, depth=2):
        folded = unicodedata.normalize("NFC", rel).casefold()
        if folded in kept or any(folded.startswith(agent) for agent in agents):
            continue
        try:
            head = files.read_bytes(folder, rel)
        except (files.FileRefused, OSError):
            continue
        if head is not None and REPORT_MARK in head:
            found.append(rel)
    return found


def remove_pages(folder: Path, names: Sequence[str]) -> None:
    """Remove each of `names` (`stale_agent_pages`) from `folder`, never through a link."""
    for rel in names:
        files.remove_entry(folder, rel)


# What a report's page holds and a human's file does not: the script element its data is in.
REPORT_MARK = f'<script type="application/json" id="{DATA_ID}">'.encode()


def _html_below(folder: Path, rel: str, *, depth: int) -> list[str]:
    """The `*.html` regular files below `folder/rel`, `depth` folders deep at most, as relative paths; links and
    other entries are passed over, never followed."""
    try:
        entries = sorted(os.scandir(folder / rel), key=lambda entry: entry.name)
    except OSError:
        return []
    found = []
    for entry in entries:
        path = f"{rel}/{entry.name}"
        if entry.is_symlink():
            continue
        if entry.is_dir(follow_symlinks=False) and depth > 1:
            found += _html_below(folder, path, depth=depth - 1)
        elif entry.is_file(follow_symlinks=False) and entry.name.endswith(".html"):
            found.append(path)
    return found


def _answer(decision: InboxItem) -> str:
    where = escape(decision.answer_at)
    return f'<a href="{where}">{where}</a>' if decision.answer_at.startswith("https://") else f"<code>{where}</code>"


def _inbox(items: Sequence[InboxItem], agents: Sequence[AgentRow]) -> str:
    if not items:
        return f'<p class="empty">{escape(nothing_waits(agents))}</p>'
    rows = "".join(f"<tr><td>{escape(d.agent + ('/' + d.workspace if d.workspace else ''))}</td>"
                   f"<td>{escape(d.id)}</td><td>{escape(d.title)}</td><td class=\"age\">{escape(d.age)}</td>"
                   f"<td>{escape(d.recommendation)}</td><td>{_answer(d)}</td></tr>" for d in items)
    return ("<table class=\"inbox\"><thead><tr><th>agent</th><th>ID</th><th>decision</th><th>waiting</th>"
            f"<th>recommendation</th><th>answer at</th></tr></thead><tbody>{rows}</tbody></table>")


def _bars(report: WorkspaceReport) -> str:
    """Cycles per day by outcome, stacked, over the last SPARK_DAYS days."""
    daily = series.daily(report, report.until - timedelta(days=SPARK_DAYS - 1))
    count = len(daily.days)
    totals = [sum(daily.outcomes[o][i] for o in OUTCOMES) for i in range(count)]
    top = max([1, *totals])
    step = WIDTH / max(count, 1)
    shapes = []
    for i in range(count):
        base = float(HEIGHT)
        for outcome in OUTCOMES:
            value = daily.outcomes[outcome][i]
            if not value:
                continue
            height = value / top * (HEIGHT - 2)
            base -= height
            shapes.append(f'<rect x="{i * step + 1:.1f}" y="{base:.1f}" width="{max(step - 2, 1):.1f}" '
                          f'height="{height:.1f}" fill="{COLOURS[outcome]}"><title>{daily.days[i]}: {value} '
                          f'{outcome}</title></rect>')
    label = f"cycles per day, last {count} days: {sum(totals)} cycles"
    return (f'<svg class="spark cycles" role="img" aria-label="{escape(label)}" width="{WIDTH}" height="{HEIGHT}" '
            f'viewBox="0 0 {WIDTH} {HEIGHT}">{"".join(shapes)}</svg>')


def _context(report: WorkspaceReport) -> str:
    """The context each of the last SPARK_CYCLES cycles read (blue), against its budget (grey, dashed)."""
    cycles = report.cycles[-SPARK_CYCLES:]
    sizes = [c.context for c in cycles]
    budgets = [c.budget if c.budget is not None else report.budget for c in cycles]
    top = max([1, *(v for v in [*sizes, *budgets] if v)])
    step = WIDTH / max(len(cycles) - 1, 1)

    def points(values: Sequence[int | None]) -> str:
        return " ".join(f"{i * step:.1f},{HEIGHT - 1 - v / top * (HEIGHT - 3):.1f}"
                        for i, v in enumerate(values) if v is not None)

    known = sum(v is not None for v in sizes)
    label = f"context per cycle against the budget: {known} of {len(cycles)} recent cycles known"
    lines = (f'<polyline points="{points(budgets)}" fill="none" stroke="{COLOURS["budget"]}" stroke-width="1" '
             f'stroke-dasharray="3 2"/>'
             f'<polyline points="{points(sizes)}" fill="none" stroke="{COLOURS["context"]}" stroke-width="1.5"/>')
    return (f'<svg class="spark context" role="img" aria-label="{escape(label)}" width="{WIDTH}" height="{HEIGHT}" '
            f'viewBox="0 0 {WIDTH} {HEIGHT}">{lines if cycles else ""}</svg>')


def _sparks(reading: AgentReading) -> str:
    return (_bars(reading.report) + _context(reading.report)) if reading.report is not None else ""


def _verdict_cell(verdict: str) -> str:
    return f'<td class="verdict {VERDICT_CLASS.get(verdict, "warn")}">{escape(verdict)}</td>'


def _health(readings: Sequence[AgentReading]) -> str:
    files_of = agent_page_files([reading.row for reading in readings])
    rows = []
    for reading in by_need_readings(readings):
        row = reading.row
        last = row.last_cycle
        last_text = f"{last['cycle']} · {last['outcome']} · {last['age']} ago" if last else "—"
        name = escape(row.label)
        link = f'<a href="{escape(quote(files_of[id(row)]))}">{name}</a>' if reading.page else name
        streak = row.streak.get("length", 0) if row.streak else 0
        why = escape(row.said)
        rows.append(f"<tr><td>{link}</td>{_verdict_cell(row.verdict)}<td>{escape(last_text)}</td>"
                    f"<td>{row.cycles_today}</td><td>{streak}</td><td>{row.pending}</td>"
                    f"<td>{escape(row.last_close or '—')}</td>"
                    f"<td>{escape(', '.join(row.waiting_branches) or '—')}</td>"
                    f"<td class=\"spark\">{_sparks(reading)}</td>"
                    f"<td class=\"why\" title=\"{why}\">{why}</td></tr>")
    return ("<table class=\"health\"><thead><tr><th>agent</th><th>verdict</th><th>last cycle</th><th>today</th>"
            "<th>Rule 0 streak</th><th>pending</th><th>last close</th><th>gitmem/* branches</th>"
            "<th class=\"spark\">cycles/day · context</th><th class=\"why\">why</th></tr></thead>"
            f"<tbody>{''.join(rows)}</tbody></table>")


def _public_health(readings: Sequence[AgentReading]) -> str:
    """The health table with verdicts and counts only (`gitmem.fleet.public`): no text of any agent's memory."""
    rows = []
    for reading in by_need_readings(readings):
        row = public_row(reading.row)
        last = f"{row.last_cycle} · {row.last_outcome} · {row.last_age} ago" if row.last_cycle is not None else "—"
        rows.append(f"<tr><td>{escape(row.label)}</td>{_verdict_cell(row.verdict)}<td>{escape(last)}</td>"
                    f"<td>{row.cycles_today}</td><td>{row.streak}</td><td>{row.pending}</td>"
                    f"<td>{escape(row.last_close or '—')}</td><td>{row.waiting_branches}</td>"
                    f"<td class=\"spark\">{_sparks(reading)}</td></tr>")
    return ("<table class=\"health\"><thead><tr><th>agent</th><th>verdict</th><th>last cycle</th><th>today</th>"
            "<th>Rule 0 streak</th><th>pending</th><th>last close</th><th>gitmem/* branches</th>"
            "<th class=\"spark\">cycles/day · context</th></tr></thead>"
            f"<tbody>{''.join(rows)}</tbody></table>")


def by_need_readings(readings: Sequence[AgentReading]) -> list[AgentReading]:
    """The readings in the order of their rows' need (`gitmem.fleet.need.by_need`)."""
    order = {id(row): n for n, row in enumerate(by_need([r.row for r in readings]))}
    return sorted(readings, key=lambda reading: order[id(reading.row)])


def render_page(view: FleetView, *, public: bool = False) -> str:
    """The fleet's page; each agent's own page is `AgentReading.page`, written at `agent_page_files`. A `public`
    page carries verdicts and counts only (`gitmem.fleet.public`): it is the one to publish where anyone reads."""
    inbox = view.inbox
    rows = view.rows
    title = f"gitmem fleet · {headline(rows)} · {len(inbox)} decision{'s' if len(inbox) != 1 else ''} waiting"
    made = f"made {view.moment:%Y-%m-%d %H:%M %Z} from each agent's memory in git"
    notes = "".join(f"<p class=\"note\">{escape(note)}</p>" for note in
                    [*fleet_notes(rows), *([PUBLIC_NOTE] if public else [])])
    waiting = (f'<p class="empty">{len(inbox)} decision(s) wait on you; read them in the agents\' repositories '
               f'(<code>gitmem fleet pending</code>).</p>' if inbox else
               f'<p class="empty">{escape(nothing_waits(rows))}</p>')
    # An inbox says what it cannot see: the decisions of agents that could not be read.
    unread = f'<p class="note unread">{escape(note)}</p>' if (note := unread_note(rows)) else ""
    # Health first: one row per agent, most urgent on top, fits above the fold; the inbox grows with decisions.
    body = (f'<header class="page"><h1>{escape(title)}</h1><p>{escape(made)}</p>{notes}</header>'
            f'<section class="fleet health"><h2>Health</h2>'
            f'{_public_health(view.readings) if public else _health(view.readings)}</section>'
            f'<section class="fleet inbox"><h2>Inbox ({len(inbox)})</h2>{waiting if public else _inbox(inbox, rows)}'
            f'{unread}</section>')
    body = scrub(body)
    return ("<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
            f"<title>{escape(scrub(title))}</title><style>{asset('report.css')}\n{STYLE}</style>"
            f"</head><body>{body}</body></html>\n")
