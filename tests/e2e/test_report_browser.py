"""The report as a person sees it: the page drawn by real headless Chromium (Debian's package, installed by the test
setup when missing), and the job summary's Mermaid checked by Mermaid itself (the npm package pinned in
tests/support/js, run in the same Chromium). Screenshots are kept in test-artifacts/report/ (git-ignored).

Skipped, with the reason, where Chromium or npm cannot be had."""
from __future__ import annotations

import json
import re
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest

from gitmem.memory_writer import MemoryWriter
from gitmem.report import build
from gitmem.workspace import Workspace
from tests.support import browser
from tests.support import report_history as planted
from tests.support.helpers import GitRepo, make_repo
from tests.support.npm_cache import skip_loudly

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "test-artifacts" / "report"
ASSETS = ROOT / "gitmem" / "report" / "assets"
EXPECTED = {
    "cycles": ["no-build", "published", "built", "Rule 0 streak"],
    "decisions": ["answered after (days)", "pending for (days)"],
    "lessons": ["opened", "confirmed", "promoted", "retired"],
    "rules": ["proven rules", "cap"],
    "tokens": ["tokens", "cost (USD)"],
    "cache": ["cache hits (%)"],
    "context": ["context tokens", "budget"],
    "guard": ["reverted edits", "salvaged cycles"],
}
pytestmark = pytest.mark.slow

# For each drawn chart: its series' labels, how many points each has, and how many canvas pixels are painted in
# each series' own colour (within a small distance, for anti-aliasing).
INK = """(() => {
  const specs = JSON.parse(document.getElementById('gitmem-report-data').textContent).workspaces;
  const rgb = h => [1, 3, 5].map(i => parseInt(h.slice(i, i + 2), 16));
  return window.gitmemCharts.map(c => {
    const u = c.plot, canvas = u.ctx.canvas;
    const pixels = u.ctx.getImageData(0, 0, canvas.width, canvas.height).data;
    const spec = specs.find(w => w.name === c.workspace).charts.find(s => s.key === c.key);
    const ink = {};
    spec.series.forEach(s => {
      const [r, g, b] = rgb(s.colour);
      let n = 0;
      for (let i = 0; i < pixels.length; i += 4) {
        const off = Math.abs(pixels[i] - r) + Math.abs(pixels[i + 1] - g) + Math.abs(pixels[i + 2] - b);
        if (pixels[i + 3] > 200 && off < 30) n++;
      }
      ink[s.label] = n;
    });
    return {workspace: c.workspace, key: c.key, width: canvas.width, height: canvas.height,
            series: u.series.slice(1).map(s => s.label),
            points: u.data.slice(1).map(a => a.filter(v => v != null).length), ink};
  });
})()"""


@pytest.fixture(scope="module")
def chrome(tmp_path_factory: pytest.TempPathFactory) -> Iterator[browser.Browser]:
    with browser.headless(tmp_path_factory.mktemp("chromium-profile"), "report browser tests") as opened:
        yield opened


@pytest.fixture(scope="module")
def ninety(tmp_path_factory: pytest.TempPathFactory) -> Iterator[GitRepo]:
    with planted.ninety_days(tmp_path_factory.mktemp("report")) as git:
        yield git


def _drawn(chrome: browser.Browser, page: Path, shot: Path) -> list[dict]:
    loaded = chrome.open(page.as_uri())
    assert loaded.errors == [], loaded.errors
    assert all(url.startswith(("file:", "data:", "blob:")) for url in loaded.requests), loaded.requests
    chrome.screenshot(shot)
    return chrome.evaluate(INK)


def test_the_page_draws_every_chart_in_chromium(chrome: browser.Browser, ninety: GitRepo) -> None:
    page = ARTIFACTS / "report-90-days.html"
    page.parent.mkdir(parents=True, exist_ok=True)
    page.write_text(build(Workspace.at(ninety.path), clock=lambda: planted.NOW), encoding="utf-8")
    charts = _drawn(chrome, page, ARTIFACTS / "report-90-days.png")
    assert [c["key"] for c in charts] == list(EXPECTED)
    for chart in charts:
        assert chart["series"] == EXPECTED[chart["key"]], chart
        assert chart["width"] > 300 and chart["height"] > 150
        assert all(count > 0 for count in chart["points"]), chart
        assert all(count > 0 for count in chart["ink"].values()), chart
    legend = chrome.evaluate("Array.from(document.querySelectorAll('#card-0-cycles .u-legend .u-label'))"
                             ".map(e => e.textContent)")
    assert legend == ["day", *EXPECTED["cycles"]]
    assert (ARTIFACTS / "report-90-days.png").read_bytes().startswith(b"\x89PNG")


def test_workspaces_are_drawn_side_by_side(chrome: browser.Browser, tmp_path: Path, git_env: None) -> None:
    git = make_repo(tmp_path / "repo")
    git.write("gitmem.yaml", git.read("gitmem.yaml") + "workspaces:\n  writer:\n    memory_dir: agents/writer\n"
              "  reviewer:\n    memory_dir: agents/reviewer\n")
    for name, days in (("writer", 9), ("reviewer", 6)):
        for rel in ("NOW.md", "DECISIONS.md", "LOG.md", "LESSONS.md", "RULES.md"):
            git.write(f"agents/{name}/{rel}", git.read(rel))
        planted.write_cycles(Workspace.at(git.path, workspace=name), days)
    page = ARTIFACTS / "report-workspaces.html"
    page.write_text(build(Workspace.at(git.path), all_workspaces=True, clock=lambda: planted.NOW), encoding="utf-8")
    charts = _drawn(chrome, page, ARTIFACTS / "report-workspaces.png")
    drawn = {(c["workspace"], c["key"]) for c in charts}
    assert {("writer", "cycles"), ("reviewer", "cycles"), ("writer", "tokens"), ("reviewer", "context")} <= drawn
    columns = chrome.evaluate("Array.from(document.querySelectorAll('section.workspace'))"
                              ".map(e => Math.round(e.getBoundingClientRect().left))")
    assert len(columns) == 2 and columns == sorted(set(columns))     # two columns, left to right


def test_the_summary_is_valid_mermaid(chrome: browser.Browser, ninety: GitRepo) -> None:
    try:
        modules = browser.npm_packages()
    except browser.Unavailable as why:
        skip_loudly("report browser tests", f"no Mermaid: {why}")
    text = build(Workspace.at(ninety.path), fmt="summary", clock=lambda: planted.NOW)
    (ARTIFACTS / "summary.md").write_text(text, encoding="utf-8")
    blocks = re.findall(r"```mermaid\n(.*?)```", text, re.S)
    assert len(blocks) == 6
    host = ARTIFACTS / "mermaid.html"
    script = (modules / "mermaid" / "dist" / "mermaid.min.js").as_uri()
    host.write_text(f'<!doctype html><html><body><div id="out"></div><script src="{script}"></script>'
                    "<script>mermaid.initialize({startOnLoad: false});</script></body></html>", encoding="utf-8")
    loaded = chrome.open(host.as_uri())
    assert loaded.errors == [], loaded.errors
    results = chrome.evaluate(f"""(async () => {{
      const blocks = {json.dumps(blocks)};
      const found = [];
      for (const [i, text] of blocks.entries()) {{
        const parsed = await mermaid.parse(text);
        const {{svg}} = await mermaid.render('chart' + i, text);
        document.getElementById('out').insertAdjacentHTML('beforeend', svg);
        found.push({{type: parsed.diagramType, rects: (svg.match(/<rect/g) || []).length,
                     paths: (svg.match(/<path/g) || []).length}});
      }}
      return found;
    }})()""", await_promise=True)
    assert [r["type"] for r in results] == ["xychart"] * 6
    assert all(r["rects"] + r["paths"] > 3 for r in results), results
    assert chrome.page().errors == []
    chrome.screenshot(ARTIFACTS / "summary-mermaid.png")
    with pytest.raises(RuntimeError):
        chrome.evaluate("mermaid.parse('xychart-beta\\n  bar [1, 2')", await_promise=True)


def test_the_vendored_uplot_is_the_pinned_npm_package() -> None:
    try:
        modules = browser.npm_packages()
    except browser.Unavailable as why:
        skip_loudly("report browser tests", f"no npm: {why}")
    pinned = json.loads((ROOT / "tests" / "support" / "js" / "package-lock.json").read_text())
    version = pinned["packages"]["node_modules/uplot"]["version"]
    for vendored, packaged in (("uPlot.iife.min.js", "dist/uPlot.iife.min.js"), ("uPlot.min.css", "dist/uPlot.min.css"),
                               ("uPlot.LICENSE", "LICENSE")):
        assert (ASSETS / vendored).read_bytes() == (modules / "uplot" / packaged).read_bytes(), (
            f"gitmem/report/assets/{vendored} differs from uplot {version}: copy node_modules/uplot/{packaged} "
            "from `npm ci` in tests/support/js")
    assert f"(v{version})" in (ASSETS / "uPlot.iife.min.js").read_text()[:200]


def test_a_new_agent_with_no_history_gets_a_page_that_says_so(chrome: browser.Browser, memrepo: GitRepo) -> None:
    """No chart is drawn as empty axes: every card says in words that there is nothing yet."""
    page = ARTIFACTS / "report-empty.html"
    page.write_text(build(Workspace.at(memrepo.path), clock=lambda: planted.NOW), encoding="utf-8")
    assert _drawn(chrome, page, ARTIFACTS / "report-empty.png") == []
    assert chrome.evaluate("document.querySelectorAll('canvas, .chart').length") == 0
    said = chrome.evaluate("Array.from(document.querySelectorAll('figure.card p.empty')).map(e => e.textContent)")
    assert len(said) == len(EXPECTED) and "No lesson has been promoted to a rule yet." in said
    assert "No cycle ran in this window." in said
    totals = chrome.evaluate("document.querySelector('p.totals').textContent")
    assert "0 cycles" in totals and "0 daily closes" in totals


# Each drawn chart's x-axis ticks: where uPlot put them (seconds) and the labels it drew there.
TICKS = """window.gitmemCharts.map(c => ({key: c.key, splits: c.plot.axes[0]._splits,
                                     labels: c.plot.axes[0]._values}))"""
Y_TICKS = """window.gitmemCharts.map(c => ({key: c.key, splits: c.plot.axes[1]._splits,
                                       labels: c.plot.axes[1]._values}))"""
DAY_LABEL = re.compile(r"[A-Z][a-z]{2} \d{1,2}")
DAYS_CHARTS = {"cycles", "lessons", "rules", "guard"}


def test_a_one_day_window_ticks_its_day_and_counts_in_the_singular(chrome: browser.Browser, ninety: GitRepo) -> None:
    """A one-day window got ticks every 6 hours under bars that each stand for the whole day; and "1 daily
    closes". Days axes tick whole days, and every count agrees with its noun."""
    day = planted.NOW.date()
    page = ARTIFACTS / "report-one-day.html"
    page.write_text(build(Workspace.at(ninety.path), since=day, until=day, clock=lambda: planted.NOW),
                    encoding="utf-8")
    _drawn(chrome, page, ARTIFACTS / "report-one-day.png")
    ticks = {t["key"]: t for t in chrome.evaluate(TICKS)}
    assert {"cycles", "lessons", "rules"} <= set(ticks)
    before = day - timedelta(days=1)      # a line needs two points: the window's charts start the day before
    for key in DAYS_CHARTS & set(ticks):
        assert ticks[key]["labels"] == [f"{before:%b} {before.day}", f"{day:%b} {day.day}"], ticks[key]
    totals = chrome.evaluate("document.querySelector('p.totals').textContent")
    assert "· 1 daily close" in totals and "1 daily closes" not in totals, totals
    assert not re.search(r"\b1 (cycles|decisions|Rule 0 streaks)\b", totals), totals


def _commit_and_draw(chrome: browser.Browser, memrepo: GitRepo, changed: str, name: str) -> None:
    """Commit `changed`, then write the repository's report as ARTIFACTS/NAME.html and draw it."""
    memrepo.stage(changed)
    memrepo.commit(f"{changed} for {name}")
    page = ARTIFACTS / f"{name}.html"
    page.write_text(build(Workspace.at(memrepo.path)), encoding="utf-8")
    _drawn(chrome, page, ARTIFACTS / f"{name}.png")


def test_counts_tick_whole_numbers(chrome: browser.Browser, memrepo: GitRepo) -> None:
    """One cycle in the window: the cycles chart's axis was labelled 0, 0.2, 0.4 ... 1 cycles."""
    MemoryWriter(Workspace.at(memrepo.path)).add_log_entry(task="one", outcome="built", result="done")
    _commit_and_draw(chrome, memrepo, "LOG.md", "report-one-cycle")
    counts = {c["key"]: c for c in chrome.evaluate(Y_TICKS)}
    assert "cycles" in counts
    for key in DAYS_CHARTS & set(counts):
        assert counts[key]["splits"] and all(float(v).is_integer() for v in counts[key]["splits"]), counts[key]
        assert all(label == "" or label.isdigit() for label in counts[key]["labels"]), counts[key]


def test_a_chart_with_one_point_spans_the_day_around_it(chrome: browser.Browser, memrepo: GitRepo) -> None:
    """One decision, asked and answered: uPlot got no span for its x axis and stretched it over three years
    (ticks "Apr 2027" to "Aug 2029" around a decision asked today). A single moment gets the day around it."""
    writer = MemoryWriter(Workspace.at(memrepo.path))
    asked = writer.ask_decision(title="Ship it?", recommendation="yes")
    writer.answer_decision(asked.id, answer="yes", name="Dana", email="dana@example.com")
    _commit_and_draw(chrome, memrepo, "DECISIONS.md", "report-one-decision")
    ticks = {t["key"]: t for t in chrome.evaluate(TICKS)}
    span = max(ticks["decisions"]["splits"]) - min(ticks["decisions"]["splits"])
    assert 0 < span <= 86400, ticks["decisions"]
    assert not any(re.search(r"20\d\d", label) for label in ticks["decisions"]["labels"] if label), ticks


def test_ninety_days_tick_whole_days_at_an_even_step(chrome: browser.Browser, ninety: GitRepo) -> None:
    page = ARTIFACTS / "report-90-days.html"
    page.parent.mkdir(parents=True, exist_ok=True)
    page.write_text(build(Workspace.at(ninety.path), clock=lambda: planted.NOW), encoding="utf-8")
    chrome.open(page.as_uri())
    for tick in chrome.evaluate(TICKS):
        if tick["key"] not in DAYS_CHARTS:
            continue
        assert 4 <= len(tick["labels"]) <= 16, tick
        assert all(DAY_LABEL.fullmatch(label) for label in tick["labels"]), tick
        steps = {b - a for a, b in zip(tick["splits"], tick["splits"][1:], strict=False)}
        assert len(steps) == 1 and steps.pop() % 86400 == 0, tick        # the report's zone is UTC: no DST


# For the lesson funnel: for each series, at the middle of each day's step, is the series' own colour painted
# within a few pixels of where its value is? Lines drawn at one width over one another hid all but the top one.
FUNNEL_SAMPLES = """(() => {
  const c = window.gitmemCharts.find(c => c.key === 'lessons'), u = c.plot, ctx = u.ctx;
  const spec = JSON.parse(document.getElementById('gitmem-report-data').textContent)
    .workspaces[0].charts.find(s => s.key === 'lessons');
  const rgb = h => [1, 3, 5].map(i => parseInt(h.slice(i, i + 2), 16));
  const x = u.data[0], found = {};
  spec.series.forEach((s, si) => {
    const [r, g, b] = rgb(s.colour);
    let seen = 0, tried = 0;
    for (let i = 0; i + 1 < x.length; i++) {
      const left = u.valToPos(x[i], 'x', true), right = u.valToPos(x[i + 1], 'x', true);
      const y = Math.round(u.valToPos(s.values[i], 'y', true)), mid = Math.round((left + right) / 2);
      const column = ctx.getImageData(mid, y - 6, 1, 13).data;
      let hit = false;
      for (let p = 0; p < column.length; p += 4) {
        if (Math.abs(column[p] - r) + Math.abs(column[p + 1] - g) + Math.abs(column[p + 2] - b) < 40) hit = true;
      }
      tried++; if (hit) seen++;
    }
    found[s.label] = {seen, tried, flat: s.values.filter((v, i) => i && v === s.values[i - 1]).length};
  });
  const same = spec.series[0].values.filter((v, i) => spec.series.every(s => s.values[i] === v)).length;
  return {found, same};
})()"""


def test_the_funnel_lines_show_where_they_run_together(chrome: browser.Browser, ninety: GitRepo) -> None:
    page = ARTIFACTS / "report-90-days.html"
    page.write_text(build(Workspace.at(ninety.path), clock=lambda: planted.NOW), encoding="utf-8")
    chrome.open(page.as_uri())
    sampled = chrome.evaluate(FUNNEL_SAMPLES)
    assert sampled["same"] > 0, sampled          # the history has days where every count is the same
    for label, seen in sampled["found"].items():
        assert seen["seen"] == seen["tried"] > 0, (label, sampled)


LAYOUT = """(() => {
  const waiting = document.querySelector('section.waiting');
  const charts = Array.from(document.querySelectorAll('.cards canvas'));
  const box = e => e.getBoundingClientRect();
  return {scrollWidth: document.documentElement.scrollWidth, innerWidth: window.innerWidth,
          waitingTop: waiting ? box(waiting).top : null, waiting: waiting ? waiting.querySelectorAll('li').length : 0,
          firstChartTop: charts.length ? Math.min(...charts.map(c => box(c).top)) : null,
          charts: charts.length, right: Math.max(...charts.map(c => box(c).right))};
})()"""


def test_the_report_reads_on_a_laptop_and_on_a_phone(chrome: browser.Browser, ninety: GitRepo) -> None:
    """As the human opens it: at 1400x900 and at a phone's 390x844 nothing is wider than the screen, the
    branches waiting on the human are on the first screen above every chart, and every chart is drawn."""
    page = ARTIFACTS / "report-90-days-sizes.html"
    page.parent.mkdir(parents=True, exist_ok=True)
    page.write_text(build(Workspace.at(ninety.path), clock=lambda: planted.NOW), encoding="utf-8")
    try:
        for width, height, name in ((1400, 900, "laptop"), (390, 844, "phone")):
            chrome.resize(width, height)
            loaded = chrome.open(page.as_uri())
            assert loaded.errors == [], loaded.errors
            seen = chrome.evaluate(LAYOUT)
            assert seen["scrollWidth"] <= seen["innerWidth"] == width, (name, seen)
            assert seen["right"] <= width, (name, seen)                     # no chart runs off the screen
            assert seen["charts"] >= len(EXPECTED), (name, seen)
            assert seen["waiting"] == len(planted.SALVAGED), (name, seen)
            assert seen["waitingTop"] < min(seen["firstChartTop"], height), (name, seen)
            chrome.screenshot(ARTIFACTS / f"report-90-days-{name}.png")
    finally:
        chrome.resize(1400, 1000)
