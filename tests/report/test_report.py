"""`gitmem report` on a 90-day history with every event it shows: what it reads from LOG (against the full parser),
what it collects, the page and the summary it renders, secrets, workspaces and the CLI. The browser tests (the page
drawn by Chromium, the summary checked by Mermaid) are in test_report_browser.py."""
from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Iterator
from datetime import date, timedelta
from pathlib import Path

import pytest

from gitmem.close.day_report import reverts
from gitmem.cycle.permissions import is_revert_note
from gitmem.cycle.postflight import context_note, usage_line
from gitmem.memory import log
from gitmem.report import build, evidence, html, log_scan, summary
from gitmem.report.collect import collect_report
from gitmem.report.model import WorkspaceReport
from gitmem.workspace import Workspace
from tests.support import report_history as planted
from tests.support.helpers import GitRepo, make_repo

CHART_KEYS = ["cycles", "decisions", "lessons", "rules", "tokens", "cache", "context", "guard"]


@pytest.fixture(scope="module")
def ninety(tmp_path_factory: pytest.TempPathFactory) -> Iterator[GitRepo]:
    with planted.ninety_days(tmp_path_factory.mktemp("report")) as git:
        yield git


@pytest.fixture(scope="module")
def whole(ninety: GitRepo) -> WorkspaceReport:
    return collect_report(Workspace.at(ninety.path), clock=lambda: planted.NOW)


# -- reading Evidence ---------------------------------------------------------------------------------------

def test_the_runner_lines_read_back_as_values() -> None:
    usage = evidence.parse_usage(usage_line({"input_tokens": 300, "output_tokens": 80, "cache_read_input_tokens": 2400,
                                             "cache_creation_input_tokens": 20}) or "")
    assert usage is not None and usage.total == 2800 and usage.cost is None
    assert usage.cache_rate == pytest.approx(2400 / 2720)
    assert evidence.parse_usage("tokens: input 10, output 5, total 15").cache_rate is None  # type: ignore[union-attr]
    assert evidence.parse_usage("tokens: input 10, output 5, cost_usd 0.25").cost == 0.25  # type: ignore[union-attr]
    assert evidence.parse_usage("tokens: many") is None
    context = evidence.parse_context(f"runner: {context_note(5222, 60000)}")
    assert context == evidence.Context(5222, 60000, "estimate")
    assert evidence.parse_context("runner: context unknown") is None
    assert [evidence.parse_cost(t) for t in ("cost: $0.42", "Cost 1.5 USD", "costly: 3", "runner: cost: 2")] == [
        0.42, 1.5, None, 2.0]
    assert is_revert_note("runner: reverted edits to proven/retired rules R-01 in RULES")
    assert is_revert_note("runner: moved D-0003 back to Pending: the agent wrote it as resolved")
    assert is_revert_note("Reverted the config by hand") and not is_revert_note("runner: context 1 tokens of 2")


def test_evidence_is_read_only_from_the_evidence_field() -> None:
    text = ("\n- Task: reverted nothing\n- Evidence: ran it\n  runner: restored lesson L-0001 (lessons are never "
            "deleted)\n  tokens: input 5, output 5, total 10\n  cost: $0.10\n- Result: reverted the README by hand\n")
    facts = evidence.read_evidence(text)
    assert (facts.reverts, facts.cost, facts.usage and facts.usage.total) == (1, 0.10, 10)
    assert evidence.read_evidence("\n- Task: x\n- Result: y\n") == evidence.Facts()


# -- reading LOG ----------------------------------------------------------------------------------------------

def test_the_scan_agrees_with_the_full_parser(ninety: GitRepo) -> None:
    text = ninety.read("LOG.md")
    parsed = log.parse(text)
    scanned = log_scan.scan_log(text)
    assert [(c.number, c.when, c.outcome) for c in scanned.cycles] == [
        (e.cycle, e.when.moment, e.outcome) for e in parsed.cycles]
    assert [c.reverts for c in scanned.cycles] == [len(reverts(e)) for e in parsed.cycles]
    assert [c.day for c in scanned.closes] == [e.get("Day") for e in parsed.entries if e.cycle is None]
    latest = [e for e in parsed.entries if e.cycle is None][-1]
    assert scanned.latest_close is not None and dict(scanned.latest_close.fields) == {
        f.key: f.value for f in latest.fields}
    assert scanned.latest_close.promoted == ("R-04", "R-05", "R-06")


def test_a_late_window_reads_only_the_end_of_log(ninety: GitRepo) -> None:
    start = planted.NOW - timedelta(days=3)
    tail = log_scan.read_log(ninety.path, "LOG.md", start, block=4096).text
    whole = log_scan.read_log(ninety.path, "LOG.md", None).text
    # The planted closes sealed the oldest entries (rules 6): LOG.md holds the last 200-399 of the 90 days' 720.
    assert whole.endswith(tail) and len(tail) < len(whole) // 4
    assert log_scan.scan_log(tail, start).cycles == log_scan.scan_log(whole, start).cycles
    assert log_scan.read_log(ninety.path, "missing.md", None).text == ""


def test_malformed_or_impossible_headings_add_nothing() -> None:
    text = ("# LOG\n\n## 2026-02-30 10:00 UTC · cycle 1 · built\n- Evidence: runner: reverted a rewrite\n\n"
            "## 2026-03-01 10:00 +01:00 · cycle 2 · built\n- Evidence: tokens: input 1, output 1, total 2\n\n"
            "## not a heading\n- Evidence: runner: reverted something\n")
    scanned = log_scan.scan_log(text)
    assert [(c.number, c.reverts, c.tokens) for c in scanned.cycles] == [(2, 0, 2)]
    assert scanned.cycles[0].when.utcoffset() == timedelta(hours=1)


# -- what is collected ------------------------------------------------------------------------------------------

def test_every_planted_event_is_collected(whole: WorkspaceReport) -> None:
    assert len(whole.cycles) == planted.DAYS * len(planted.SLOTS)
    found = {(s.first, s.last) for s in whole.streaks()}
    assert set(planted.STREAKS) <= found and all(s.length >= 3 for s in whole.streaks())
    assert sum(c.reverts for c in whole.cycles) == len(planted.REVERTS)
    assert [c.number for c in whole.cycles if c.salvage] == list(planted.SALVAGED)
    assert whole.waiting_branches == tuple(f"gitmem/salvage/cycle-{n}" for n in planted.SALVAGED)
    assert [c.number for c in whole.cycles if c.context is None] == list(range(1, planted.CONTEXT_FROM))
    assert [c.number for c in whole.cycles if c.tokens is None] == list(range(1, planted.TOKENS_FROM))
    assert {c.budget for c in whole.cycles if c.context is not None} == {60000}
    assert all(c.cost is not None for c in whole.cycles if c.number >= planted.COST_FROM and c.number % 3 == 0)
    assert [d.id for d in whole.pending] == ["D-0013", "D-0014", "D-0015"]
    assert all(0 < d.waited_days < 4 for d in whole.decisions if not d.pending)
    assert len(whole.closes) == planted.DAYS and whole.latest_close is not None
    assert whole.latest_close.day == planted.LAST_DAY.isoformat()
    assert (whole.proven, whole.proven_cap) == (5, 30)
    promoted = {lesson.id: lesson.promoted for lesson in whole.lessons if lesson.promoted}
    assert promoted["L-0002"] == date(2026, 9, 15)          # its rule's last confirming cycle, 56
    assert promoted["L-0001"] == planted.LAST_DAY           # promoted by the real close of the last day
    assert [lesson.id for lesson in whole.lessons if lesson.retired] == ["L-0005"]


def test_a_window_keeps_what_was_open_in_it(ninety: GitRepo) -> None:
    since = planted.LAST_DAY - timedelta(days=13)
    report = collect_report(Workspace.at(ninety.path), since=since, clock=lambda: planted.NOW)
    assert report.first_day == since and report.until == planted.NOW.date()
    assert [c.number for c in report.cycles] == list(range(planted.cycles_before(since) + 1, 361))
    assert all(d.pending or d.answered and d.answered.date() >= since for d in report.decisions)
    assert report.closes[0].day == since.isoformat()


# -- rendering --------------------------------------------------------------------------------------------------

def _page_data(page: str) -> dict:
    found = re.search(r'<script type="application/json" id="gitmem-report-data">(.*?)</script>', page, re.S)
    assert found is not None
    return json.loads(found.group(1))


def test_the_page_is_one_self_contained_file(whole: WorkspaceReport) -> None:
    page = html.render_html([whole])
    assert page.startswith("<!doctype html>") and page.count("<script") == 3
    assert not re.search(r"""(?:src|href)\s*=\s*["']?(?:https?:)?//""", page)
    assert "@import" not in page and "url(http" not in page
    data = _page_data(page)
    charts = data["workspaces"][0]["charts"]
    assert [c["key"] for c in charts] == CHART_KEYS
    for key in CHART_KEYS:
        assert f'id="chart-0-{key}"' in page
    captions = re.findall(r"<figcaption><h3>[^<]*</h3><p>([^<]*)</p>", page)
    assert len(captions) == len(CHART_KEYS) and all(c.count(". ") == 0 and c.endswith(".") for c in captions)
    assert "4 streaks, the longest 5 (cycles 341–345)" in page
    assert "(180 of 360 known)" in page
    assert "Pending decisions (3)" in page and "Latest close report: 2026-11-30" in page
    assert "gitmem/salvage/cycle-333" in page


def test_branches_waiting_on_the_human_come_first_with_what_to_do(memrepo: GitRepo) -> None:
    """Proposal and side branches wait on the human as salvage ones do: all are listed, above the charts."""
    for name in ("gitmem/proposal/cycle-7", "gitmem/salvage/cycle-9", "gitmem/side/cycle-3"):
        subprocess.run(["git", "-C", str(memrepo.path), "branch", name], check=True)
    page = build(Workspace.at(memrepo.path))
    section = page[page.index("Branches waiting on you (3)"):]
    assert page.index("Branches waiting on you") < page.index('<div class="cards">')
    for name, said in (("gitmem/proposal/cycle-7", "delete it if its decision was No"),
                       ("gitmem/salvage/cycle-9", "a failed cycle"), ("gitmem/side/cycle-3", "work kept aside")):
        assert f"<code>{name}</code> · " in section and said in section


def test_the_summary_has_fourteen_days_of_mermaid_charts(ninety: GitRepo) -> None:
    text = build(Workspace.at(ninety.path), fmt="summary", clock=lambda: planted.NOW)
    assert text.startswith("### gitmem report · default · 2026-11-17 – 2026-11-30\n")
    blocks = re.findall(r"```mermaid\n(.*?)```", text, re.S)
    assert len(blocks) == 6 and all("xychart-beta" in b for b in blocks)
    days = re.search(r"x-axis \[(.*?)\]", blocks[0])
    assert days is not None and days.group(1).count('"') == 2 * 14
    assert "Rule 0 streaks: 1** (cycles 341-345)" in text
    assert "| D-0013 | Publish release 13? |" in text and "**Latest close report (2026-11-30)**" in text


def test_secrets_never_reach_the_page_or_the_summary(ninety: GitRepo, tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    key = "sk-ant-api03-" + "Q" * 40
    token = "tok-" + "9" * 20
    monkeypatch.setenv("GITHUB_TOKEN", token)
    copy = make_repo(tmp_path / "repo")
    for name in ("LOG.md", "DECISIONS.md", "LESSONS.md", "RULES.md"):
        copy.write(name, ninety.read(name))
    text = copy.read("DECISIONS.md").replace("Publish release 14?", f"Publish with {key} and {token}")
    copy.write("DECISIONS.md", text)
    copy.write("LOG.md", copy.read("LOG.md").replace("- Plan: ship", f"- Plan: use {token} to ship"))
    ws = Workspace.at(copy.path)
    for fmt in ("html", "summary"):
        shown = build(ws, fmt=fmt, clock=lambda: planted.NOW)
        assert key not in shown and token not in shown and "sk-ant-" not in shown
        # The summary escapes the agent's markup (the mask's stars too): GitHub shows the same `***`.
        mask = "***" if fmt == "html" else "\\*\\*\\*"
        assert f"Publish with {mask} and {mask}" in shown


def test_workspaces_side_by_side(tmp_path: Path, git_env: None) -> None:
    git = make_repo(tmp_path / "repo")
    git.write("gitmem.yaml", git.read("gitmem.yaml") + "workspaces:\n  writer:\n    memory_dir: agents/writer\n"
              "  reviewer:\n    memory_dir: agents/reviewer\n")
    for name in ("writer", "reviewer"):
        for rel in ("NOW.md", "DECISIONS.md", "LOG.md", "LESSONS.md", "RULES.md"):
            git.write(f"agents/{name}/{rel}", git.read(rel))
    git.stage("gitmem.yaml", *(f"agents/{n}/{r}" for n in ("writer", "reviewer")
                                for r in ("NOW.md", "DECISIONS.md", "LOG.md", "LESSONS.md", "RULES.md")))
    git.commit("two agents")
    for name, days in (("writer", 5), ("reviewer", 3)):
        planted.write_cycles(Workspace.at(git.path, workspace=name), days)
    ws = Workspace.at(git.path)
    page = build(ws, fmt="html", all_workspaces=True, clock=lambda: planted.NOW)
    names = [w["name"] for w in _page_data(page)["workspaces"]]
    assert names == ["writer", "reviewer"] and 'style="--columns: 2"' in page
    assert len(re.findall(r'<section class="workspace"', page)) == 2
    text = build(ws, fmt="summary", all_workspaces=True, clock=lambda: planted.NOW)
    assert "### gitmem report · writer ·" in text and "### gitmem report · reviewer ·" in text
    one = build(Workspace.at(git.path, workspace="reviewer"), fmt="summary", clock=lambda: planted.NOW)
    assert "**12 cycles**" in one


# -- the command ----------------------------------------------------------------------------------------------

def test_the_command_writes_outside_the_work_tree_by_default(ninety: GitRepo, cli) -> None:
    result = cli(["report"], cwd=ninety.path)
    assert result.code == 0, result.err
    target = ninety.path / ".git" / "gitmem" / "report.html"
    assert result.out.startswith(f"wrote {target} (") and target.read_text(encoding="utf-8").startswith("<!doctype")
    out = cli(["report", "--since", "2026-11-20", "--until", "2026-11-30", "--out", "-"], cwd=ninety.path)
    assert out.code == 0 and "2026-11-20 – 2026-11-30" in out.out
    summary_out = cli(["report", "--format", "summary", "--until", "2026-11-30"], cwd=ninety.path)
    assert summary_out.code == 0 and summary_out.out.startswith("### gitmem report · default · 2026-11-17")
    assert cli(["report", "--since", "2026-11-31"], cwd=ninety.path).code == 2
    assert cli(["report", "--since", "2026-11-30", "--until", "2026-11-01"], cwd=ninety.path).code == 2
    both = cli(["report", "--workspace", "x", "--all-workspaces"], cwd=ninety.path)
    assert both.code == 2 and "not both" in both.err
    written = cli(["report", "--out", str(ninety.path.parent / "out" / "r.html")], cwd=ninety.path)
    assert written.code == 0 and (ninety.path.parent / "out" / "r.html").exists()
    assert subprocess.run(["git", "status", "--porcelain"], cwd=ninety.path, capture_output=True,
                          text=True).stdout == ""


def test_gitmem_check_never_loads_the_report(memrepo: GitRepo) -> None:
    probe = ("import sys; from gitmem.cli import main; code = main(['check']); "
             "print(code, sorted(m for m in sys.modules if m.startswith('gitmem.report')))")
    done = subprocess.run([sys.executable, "-c", probe], cwd=memrepo.path, capture_output=True, text=True)
    assert done.stdout.strip() == "0 []", done.stderr


def test_the_summary_window_is_fourteen_days() -> None:
    assert summary.window(date(2026, 11, 30)) == date(2026, 11, 17)


def test_an_empty_history_says_what_is_unknown(memrepo: GitRepo) -> None:
    text = build(Workspace.at(memrepo.path), fmt="summary", clock=lambda: planted.NOW)
    assert "**0 cycles**" in text and "_No cycle in these days has a token count in its Evidence._" in text
    assert "_No decision was open in these days._" in text and text.count("```mermaid") == 2
