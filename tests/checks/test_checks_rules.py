"""Every GM rule, good case and bad case, in a real repo: stage a change, run `gitmem check`, read the line."""
from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

import pytest

from gitmem.codes import CHECK_CODES as RULES
from tests.support.builders import (
    LOG_BASE,
    TS,
    decisions_md,
    filler_rules,
    lesson,
    lessons_md,
    log_entry,
    many_rules,
    now_block,
    now_md,
    pending,
    resolved,
    rules_md,
)
from tests.support.helpers import AGENT, HUMAN, GitRepo

# ---- cases ------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Case:
    """One rule. `base` is committed first (by a human); then `good` must pass and `bad` must fail.

    The expected line is the `nth` line of the bad file containing `needle` (an int is a line number).
    """

    code: str
    name: str
    path: str
    needle: str | int
    good: dict[str, str | bytes | None]
    bad: dict[str, str | bytes | None]
    base: dict[str, str | bytes | None] = field(default_factory=dict)
    nth: int = 1
    also: frozenset[str] = frozenset()       # other codes the bad case legitimately reports
    author_good: tuple[str, str] = HUMAN
    author_bad: tuple[str, str] = HUMAN


N, D, L, LE, R = "NOW.md", "DECISIONS.md", "LOG.md", "LESSONS.md", "RULES.md"


def _titled(decision: str, length: int) -> str:
    """`decision` (tests.support.builders.pending) with a title `length` characters long."""
    return decision.replace("Pick a name", ("Pick a name " + "x" * length)[:length], 1)
YAML_MAX2 = "limits:\n  proven_rules_max: 2\n"
# A small reading budget keeps the size cases small: its hard limit is 12110 characters (gitmem.checks.sizes).
SMALL = "cycle:\n  max_context_tokens: 4000\n"
RM, BRIEF = "ROADMAP.md", "docs/brief.md"
LOADS = SMALL + "  always_load: [docs/brief.md]\n"


_MALFORMED = "\n## yesterday cycle 2 built\n- Task: by hand\n- Result: no reader finds it\n"


def _amendment(line: int) -> str:
    return f"\n## {TS.format(10)} · amends line {line} · cycle 2 · built\n- Task: by hand\n- Result: found\n"


def _long(text: str, size: int) -> str:
    return text.replace("built the parser", "x" * size).replace("we need one", "y" * size).replace(
        "40 tests pass", "z" * size).replace("Read the clock", "w" * size)
YAML_JOURNAL = "files:\n  log: JOURNAL.md\n"


def _from_now(*, minutes: int) -> str:
    return f"{datetime.now(UTC) + timedelta(minutes=minutes):%Y-%m-%d %H:%M} UTC"

CASES: tuple[Case, ...] = (
    Case("GM101", "block-too-long", N, "cycle 1", good={N: now_md(now_block(9, 1, extra=7))},
         bad={N: now_md(now_block(9, 1, extra=8))}),
    Case("GM102", "heading", N, "## yesterday", good={N: now_md(now_block(9, 1))},
         bad={N: now_md("## yesterday · cycle 1\n- Did: x\n")}),
    Case("GM102", "plan-heading", N, "plan for", good={N: now_md(f"## {TS.format(23)} · plan for 2026-12-01\n")},
         bad={N: now_md(f"## {TS.format(23)} · plan for 2026-13-01\n")}),
    # GM103 and GM302 judge history made under rules 1-3; `check` judges by the newest (GM310, GM309 below).
    Case("GM309", "now-dated-ahead", N, "cycle 2", base={N: now_md(now_block(9, 1)), L: LOG_BASE + log_entry(10, 2)},
         good={N: now_md(now_block(10, 2), now_block(9, 1))},
         bad={N: now_md(now_block(10, 2).replace("2026-11-30", "2099-11-30"), now_block(9, 1))}),
    # NOW and LOG agree (rules 4): a new block names a cycle LOG has, or the next one.
    Case("GM105", "now-cycle-not-in-log", N, "cycle 3", base={L: LOG_BASE},
         good={N: now_md(now_block(10, 2), now_block(9, 1))}, bad={N: now_md(now_block(10, 3), now_block(9, 1))}),
    Case("GM104", "now-block-too-big", N, "cycle 1", base={"gitmem.yaml": SMALL},
         good={N: now_md(_long(now_block(9, 1), 500))}, bad={N: now_md(_long(now_block(9, 1), 600))}),
    Case("GM201", "sections", D, "## Resolved", good={D: decisions_md()},
         bad={D: "# DECISIONS\n\n## Resolved\n\n## Pending\n"}),
    Case("GM202", "duplicate", D, "### D-0001", nth=2, good={D: decisions_md(pending(1) + pending(2))},
         bad={D: decisions_md(pending(1) + pending(1))}),
    Case("GM203", "pending-incomplete", D, "### D-0001", good={D: decisions_md(pending(1))},
         bad={D: decisions_md(pending(1, recommendation=False))}),
    Case("GM204", "resolved-incomplete", D, "### D-0001", good={D: decisions_md(resolved=resolved(1))},
         bad={D: decisions_md(resolved=resolved(1, answered=False))}),
    # An Answered line that does not read is reported at that line, not at the decision's heading.
    Case("GM204", "answered-unreadable", D, "- Answered:", good={D: decisions_md(resolved=resolved(1))},
         bad={D: decisions_md(resolved=resolved(1).replace("12:00 UTC by", "noon by"))}),
    # Judged against the clock when `check` runs: three hours ahead is a local time labelled UTC, five
    # minutes ahead is a clock running fast.
    Case("GM211", "answered-ahead", D, "- Answered:",
         good={D: decisions_md(resolved=resolved(1).replace("2026-11-30 12:00 UTC", _from_now(minutes=5)))},
         bad={D: decisions_md(resolved=resolved(1).replace("2026-11-30 12:00 UTC", _from_now(minutes=180)))}),
    Case("GM205", "resolved-edited", D, "### D-0001", base={D: decisions_md(resolved=resolved(1))},
         good={D: decisions_md(pending(2), resolved(1))},
         bad={D: decisions_md(resolved=resolved(1, answer="something else"))}),
    Case("GM205", "moved-back", D, "### D-0001", base={D: decisions_md(resolved=resolved(1))},
         good={D: decisions_md(pending(2), resolved(1))}, bad={D: decisions_md(pending(1))}),
    Case("GM205", "resolved-removed", D, "## Resolved", base={D: decisions_md(resolved=resolved(1))},
         good={D: decisions_md(pending(2), resolved(1))}, bad={D: decisions_md()}, also=frozenset({"GM206"})),
    Case("GM206", "id-vanished", D, "## Resolved", base={D: decisions_md(pending(1))},
         good={D: decisions_md(resolved=resolved(1))}, bad={D: decisions_md()}),
    Case("GM207", "agent-resolves", D, "### D-0001", base={D: decisions_md(pending(1))},
         good={D: decisions_md(resolved=resolved(1))}, bad={D: decisions_md(resolved=resolved(1))},
         author_bad=AGENT),
    # Rules 4: an answer written in place under Pending is an answer, held as one.
    Case("GM207", "agent-answers-in-place", D, "### D-0001", base={D: decisions_md(pending(1))},
         good={D: decisions_md(resolved(1))}, bad={D: decisions_md(resolved(1))}, author_bad=AGENT),
    # The agent may move a human's answer in place under Resolved byte for byte; it may not answer another.
    Case("GM207", "agent-moves-an-answer", D, "### D-0002", base={D: decisions_md(resolved(1) + pending(2))},
         good={D: decisions_md(pending(2), resolved(1))}, bad={D: decisions_md(resolved(1) + resolved(2))},
         author_good=AGENT, author_bad=AGENT),
    Case("GM205", "answer-in-place-edited", D, "### D-0001", base={D: decisions_md(resolved(1))},
         good={D: decisions_md(pending(2) + resolved(1))},
         bad={D: decisions_md(resolved(1, answer="something else"))}),
    Case("GM205", "answer-in-place-removed", D, "### D-0001", base={D: decisions_md(resolved(1))},
         good={D: decisions_md(resolved=resolved(1))}, bad={D: decisions_md(pending(1))}),
    Case("GM212", "answer-incomplete", D, "### D-0001", good={D: decisions_md(resolved(1))},
         bad={D: decisions_md(resolved(1, answered=False))}),
    # A 5,000-character title was accepted; the bound is docs/format.md's (codes.DECISION_TITLE_MAX).
    Case("GM214", "title-too-long", D, "### D-0001", good={D: decisions_md(_titled(pending(1), 200))},
         bad={D: decisions_md(_titled(pending(1), 201))}),
    # Only a decision new in the change is judged: one already there keeps its title.
    Case("GM214", "only-new-decisions", D, "### D-0002", base={D: decisions_md(_titled(pending(1), 5000))},
         good={D: decisions_md(_titled(pending(1), 5000) + pending(2))},
         bad={D: decisions_md(_titled(pending(1), 5000) + _titled(pending(2), 201))}),
    Case("GM212", "answered-unreadable-in-place", D, "- Answered:", good={D: decisions_md(resolved(1))},
         bad={D: decisions_md(resolved(1).replace("12:00 UTC by", "noon by"))}),
    Case("GM208", "decision-heading", D, "### D-1 ", good={D: decisions_md(pending(1))},
         bad={D: decisions_md("\n### D-1 · Pick a name\n- Asked: 2026-11-30 09:00 UTC\n- Recommendation: x\n")}),
    Case("GM209", "pending-count", D, "### D-0003", base={"gitmem.yaml": "limits:\n  pending_max: 2\n"},
         good={D: decisions_md(pending(1) + pending(2))}, bad={D: decisions_md(pending(1) + pending(2) + pending(3))}),
    Case("GM209", "pending-size", D, "### D-0002", base={"gitmem.yaml": SMALL},
         good={D: decisions_md(_long(pending(1), 900))}, bad={D: decisions_md(_long(pending(1) + pending(2), 900))}),
    Case("GM301", "rewritten", L, "repo rewritten", base={L: LOG_BASE},
         good={L: LOG_BASE + log_entry(10, 2)},
         bad={L: LOG_BASE.replace("repo ready", "repo rewritten") + log_entry(10, 2)}),
    Case("GM301", "truncated", L, "- Result: repo ready", base={L: LOG_BASE + log_entry(10, 2)},
         good={L: LOG_BASE + log_entry(10, 2) + log_entry(11, 3)}, bad={L: LOG_BASE[: LOG_BASE.index("- Result")]
                                                                        + "- Result: repo ready"}),
    Case("GM301", "extends-last-entry", L, "second thoughts", base={L: LOG_BASE},
         good={L: LOG_BASE + log_entry(10, 2) + "\n\n"},
         bad={L: LOG_BASE + "- Learned: second thoughts\n" + log_entry(10, 2)}),
    Case("GM301", "extends-last-line", L, "- Result: repo ready", base={L: LOG_BASE.rstrip("\n")},
         good={L: LOG_BASE + log_entry(10, 2)}, bad={L: LOG_BASE.rstrip("\n") + ", or so I thought\n"}),
    Case("GM309", "log-dated-ahead", L, "cycle 2", base={L: LOG_BASE}, good={L: LOG_BASE + log_entry(10, 2)},
         bad={L: LOG_BASE + log_entry(10, 2).replace("2026-11-30", "2099-11-30")}),
    Case("GM303", "cycle-not-increasing", L, "cycle 1 · built", nth=2, base={L: LOG_BASE},
         good={L: LOG_BASE + log_entry(10, 2)}, bad={L: LOG_BASE + log_entry(10, 1)}),
    Case("GM304", "no-build-reason", L, "no-build", base={L: LOG_BASE},
         good={L: LOG_BASE + log_entry(10, 2, "no-build")},
         bad={L: LOG_BASE + log_entry(10, 2, "no-build", result=False)}),
    Case("GM305", "cycle-incomplete", L, "cycle 2", base={L: LOG_BASE}, good={L: LOG_BASE + log_entry(10, 2)},
         bad={L: LOG_BASE + log_entry(10, 2, task=False)}),
    Case("GM306", "log-heading", L, "shipped", base={L: LOG_BASE}, good={L: LOG_BASE + log_entry(10, 2, "published")},
         bad={L: LOG_BASE + log_entry(10, 2, "shipped")}),
    Case("GM307", "log-entry-too-big", L, "cycle 2", base={L: LOG_BASE, "gitmem.yaml": SMALL},
         good={L: LOG_BASE + _long(log_entry(10, 2), 1100)}, bad={L: LOG_BASE + _long(log_entry(10, 2), 1250)}),
    # The base holds a malformed heading at line 7, committed without the check: an amendment may name it, and
    # not the valid entry at line 3.
    Case("GM313", "log-amendment", L, "amends line 3", base={L: LOG_BASE + _MALFORMED},
         good={L: LOG_BASE + _MALFORMED + _amendment(7)}, bad={L: LOG_BASE + _MALFORMED + _amendment(3)}),
    Case("GM401", "duplicate", LE, "## L-0001", nth=2, good={LE: lessons_md(lesson(1), lesson(2))},
         bad={LE: lessons_md(lesson(1), lesson(1))}),
    Case("GM402", "incomplete", LE, "## L-0001", good={LE: lessons_md(lesson(1))},
         bad={LE: lessons_md(lesson(1, why=False))}),
    Case("GM403", "confirmation-early", LE, "Confirmed", good={LE: lessons_md(lesson(
        1, confirmed="- Confirmed: 2026-12-01 (cycle 4) — right time\n"))},
         bad={LE: lessons_md(lesson(1, confirmed="- Confirmed: 2026-12-01 (cycle 3) — right time\n"))}),
    Case("GM403", "confirmation-repeated", LE, "Confirmed", nth=2, good={LE: lessons_md(lesson(
        1, confirmed="- Confirmed: 2026-12-01 (cycle 4) — a\n- Confirmed: 2026-12-02 (cycle 5) — b\n"))},
         bad={LE: lessons_md(lesson(1, confirmed="- Confirmed: 2026-12-01 (cycle 4) — a\n"
                                                   "- Confirmed: 2026-12-02 (cycle 4) — b\n"))}),
    Case("GM404", "status", LE, "- Status", good={LE: lessons_md(lesson(1, status="retired — obsolete"))},
         bad={LE: lessons_md(lesson(1, status="done"))}),
    Case("GM405", "lesson-vanished", LE, 1, base={LE: lessons_md(lesson(1))},
         good={LE: lessons_md(lesson(1, status="retired — wrong"))}, bad={LE: lessons_md()}),
    Case("GM406", "lesson-heading", LE, "## L-1 ", good={LE: lessons_md(lesson(1))},
         bad={LE: lessons_md(lesson(1).replace("L-0001", "L-1"))}),
    Case("GM501", "not-one-line", R, "and never guess", good={R: rules_md()},
         bad={R: rules_md("- R-01 · Read the clock (human)\n  and never guess\n")}),
    Case("GM502", "duplicate", R, "- R-01", nth=2, good={R: rules_md(many_rules(2))},
         bad={R: rules_md("- R-01 · Read the clock (human)\n- R-01 · Never guess (human)\n")}),
    Case("GM502", "retired-reused", R, "- R-01",
         base={R: rules_md("", "- R-01 · Old (retired on 2026-11-01: wrong)\n")},
         good={R: rules_md("- R-02 · New (human)\n", "- R-01 · Old (retired on 2026-11-01: wrong)\n")},
         bad={R: rules_md("- R-01 · New (human)\n")}),
    Case("GM503", "lesson-missing", R, "- R-01", good={
        R: rules_md("- R-01 · Read the clock (from L-0001; cycles 4, 5)\n"), LE: lessons_md(lesson(1))},
         bad={R: rules_md("- R-01 · Read the clock (from L-0001; cycles 4, 5)\n")}),
    Case("GM504", "too-many-lines", R, 201, good={R: filler_rules(200)}, bad={R: filler_rules(201)}),
    Case("GM504", "too-many-rules", R, "- R-03", good={R: rules_md(many_rules(2)), "gitmem.yaml": YAML_MAX2},
         bad={R: rules_md(many_rules(3)), "gitmem.yaml": YAML_MAX2}),
    Case("GM505", "rule-vanished", R, "## Retired", base={R: rules_md()},
         good={R: rules_md("", "- R-01 · Read the clock (retired on 2026-11-30: clock is automatic)\n")},
         bad={R: rules_md("")}),
    Case("GM506", "rule-malformed", R, "- R-1 ", good={R: rules_md()}, bad={R: rules_md("- R-1 · Read (human)\n")}),
    Case("GM507", "section-order", R, "## Notes", good={R: rules_md(preamble="\n## Notes\nfree text\n")},
         bad={R: rules_md() + "\n## Notes\nfree text\n"}),
    Case("GM508", "proven-missing", R, "free text", good={R: rules_md()},
         bad={R: "# RULES\n\nfree text\n"}),
    Case("GM509", "rules-too-big", R, "- R-01", base={"gitmem.yaml": SMALL},
         good={R: _long(rules_md(), 2500)}, bad={R: _long(rules_md(), 3000)}),
    Case("GM601", "roadmap-section-too-big", RM, "## Big (current)", base={"gitmem.yaml": SMALL},
         good={RM: "# ROADMAP\n\n## Big (current)\n- [ ] " + "v" * 1100 + "\n"},
         bad={RM: "# ROADMAP\n\n## Big (current)\n- [ ] " + "v" * 1300 + "\n"}),
    Case("GM602", "always-load-too-big", BRIEF, 1, base={"gitmem.yaml": LOADS, BRIEF: "# Brief\n"},
         good={BRIEF: "# Brief\n" + "b" * 1100 + "\n"}, bad={BRIEF: "# Brief\n" + "b" * 1300 + "\n"}),
    Case("GM901", "conflict", N, "<<<<<<<", base={L: LOG_BASE + log_entry(10, 2)},
         good={N: now_md(now_block(10, 2), now_block(9, 1))},
         bad={N: now_md("<<<<<<< HEAD\n" + now_block(10, 2) + "=======\n" + now_block(9, 1) + ">>>>>>> other\n")}),
    Case("GM902", "not-utf8", N, "- Did", good={N: now_md(now_block(9, 1))},
         bad={N: now_md(now_block(9, 1)).encode().replace(b"built", b"bu\xffilt")}),
    Case("GM904", "missing", N, 1, good={N: now_md(now_block(9, 1))}, bad={N: None}),
    Case("GM907", "title", N, 1, good={N: now_md(now_block(9, 1))}, bad={N: "State of things\n\n" + now_block(9, 1)}),
    Case("GM920", "bare-cr", N, "forged", good={N: now_md(now_block(9, 1))},
         bad={N: now_md(now_block(9, 1).replace("- Did: built the parser", "- Did: x\r## forged"))}),
    Case("GM921", "unclosed-fence", N, "```", base={L: LOG_BASE + log_entry(10, 2)},
         good={N: now_md(now_block(10, 2) + "```\n```\n", now_block(9, 1))},
         bad={N: now_md(now_block(10, 2) + "```\n", now_block(9, 1))}),
    Case("GM922", "remap-drops-log", "JOURNAL.md", 1, base={L: LOG_BASE},
         good={"gitmem.yaml": YAML_JOURNAL, "JOURNAL.md": LOG_BASE, L: None},
         bad={"gitmem.yaml": YAML_JOURNAL, "JOURNAL.md": "# LOG\n", L: None}, also=frozenset({"GM301"})),
)


def expected_line(case: Case) -> int:
    if isinstance(case.needle, int):
        return case.needle
    content = case.bad[case.path]
    text = content.decode("utf-8", "replace") if isinstance(content, bytes) else content
    hits = [n for n, line in enumerate(text.split("\n"), 1) if case.needle in line]
    return hits[case.nth - 1]


def run_check(repo: GitRepo, cli, monkeypatch: pytest.MonkeyPatch, author: tuple[str, str]):
    monkeypatch.setenv("GIT_AUTHOR_NAME", author[0])
    monkeypatch.setenv("GIT_AUTHOR_EMAIL", author[1])
    return cli(["check"], cwd=repo.path)


@pytest.fixture
def case_repo(memrepo: GitRepo, request: pytest.FixtureRequest) -> GitRepo:
    case: Case = request.param
    if case.base:
        memrepo.commit_files(case.base, "base for " + case.name)
    return memrepo


def _ids(case: Case) -> str:
    return f"{case.code}-{case.name}"


@pytest.mark.parametrize("case_repo", CASES, ids=_ids, indirect=True)
def test_good_case_passes(case_repo: GitRepo, cli, monkeypatch: pytest.MonkeyPatch, request) -> None:
    case: Case = request.node.callspec.params["case_repo"]
    case_repo.stage_files(case.good)
    result = run_check(case_repo, cli, monkeypatch, case.author_good)
    assert (result.code, result.out) == (0, ""), result.err


@pytest.mark.parametrize("case_repo", CASES, ids=_ids, indirect=True)
def test_bad_case_reports_path_line_and_code(case_repo: GitRepo, cli, monkeypatch: pytest.MonkeyPatch,
                                             request) -> None:
    case: Case = request.node.callspec.params["case_repo"]
    case_repo.stage_files(case.bad)
    result = run_check(case_repo, cli, monkeypatch, case.author_bad)
    assert result.code == 1, result.out + result.err
    prefix = f"{case.path}:{expected_line(case)}: {case.code} "
    assert any(line.startswith(prefix) for line in result.lines), f"no `{prefix}` in:\n{result.out}"
    reported = {line.split(": ", 2)[1].split()[0] for line in result.lines}
    assert reported <= {case.code, *case.also}, result.out
    assert "Traceback" not in result.err


def test_every_registered_code_has_a_case() -> None:
    # GM903 and GM905 have their own tests below; GM906 comes from `verify` (tests/checks/test_check_cli.py),
    # GM308 from `verify` of a merge (tests/hostile/test_hostile_history.py), GM908 from
    # tests/hostile/test_hostile_files.py, GM210 from `verify` of an answering commit and its signature
    # (tests/checks/test_signed_answers.py), GM923 from an agent's commit to two workspaces
    # (tests/hostile/test_hostile_workspaces.py). GM103 and GM302 judge history made under rules 1-3, and GM310 is
    # a warning: tests/memory/test_clock_skew.py. GM314 and GM315 judge LOG's sealed volumes, which need a long
    # LOG: tests/checks/test_log_volumes.py. GM319 is the merge driver's, on a real `git merge` of two sides that
    # sealed different entries: tests/publish/test_sealed_driver.py. GM924 is `gitmem merge`'s refusal:
    # tests/publish/test_merge_refusals.py. GM213 is a warning about two clocks, an answer's and its ask's:
    # tests/checks/test_answer_time.py. GM925 is a clone's, not a change's: tests/publish/test_clone_without_driver.py.
    # GM926-GM930 refuse gitmem.yaml (or a fleet file) as it loads: tests/config/test_config.py,
    # tests/config/test_config_diagnostics.py. GM931 is an agent a fleet file names that cannot be read:
    # tests/fleet/test_fleet_mistakes.py. GM932 is two fleet entries for one agent:
    # tests/fleet/test_fleet_duplicates.py.
    # GM407 needs a LOG entry a merge or a replay renumbered: tests/publish/test_merge_renumbered_lessons.py.
    covered = {case.code for case in CASES} | {"GM903", "GM905", "GM906", "GM308", "GM908", "GM210", "GM923",
                                               "GM103", "GM302", "GM310", "GM314", "GM315", "GM319", "GM924",
                                               "GM213", "GM925", "GM926", "GM407", "GM927", "GM928",
                                               "GM929", "GM930", "GM931", "GM932"}
    assert {rule.code for rule in RULES} <= covered


# ---- exact lines for the rules against HEAD ------------------------------------------------------------------

def test_gm301_names_the_first_differing_line_exactly(memrepo: GitRepo, cli) -> None:
    memrepo.commit_files({L: LOG_BASE})
    memrepo.stage_files({L: LOG_BASE.replace("- Task: set up", "- Task: set everything up") + log_entry(10, 2)})
    result = cli(["check"], cwd=memrepo.path)
    assert result.code == 1
    assert result.lines == [
        "LOG.md:4: GM301 LOG was rewritten at line 4; only appending is allowed [log-not-append-only] "
        "(hint: restore the old lines and add a new entry at the end instead)"]


def test_deleting_log_is_gm301(memrepo: GitRepo, cli) -> None:
    memrepo.stage_files({L: None})
    result = cli(["check"], cwd=memrepo.path)
    assert result.code == 1
    assert [line.split(" ", 2)[:2] for line in result.lines] == [["LOG.md:1:", "GM301"], ["LOG.md:1:", "GM904"]]


def test_renaming_log_is_gm301(memrepo: GitRepo, cli) -> None:
    memrepo.write("HISTORY.md", memrepo.read(L))
    memrepo.stage_files({L: None})
    memrepo.stage("HISTORY.md")
    result = cli(["check"], cwd=memrepo.path)
    assert result.code == 1
    assert result.lines[0].startswith("LOG.md:1: GM301 LOG was deleted or renamed")


def test_gm207_uses_the_agent_identity_from_config(memrepo: GitRepo, cli, monkeypatch) -> None:
    """A renamed agent identity in gitmem.yaml is the one refused; the template's default is then a human."""
    memrepo.commit_files({D: decisions_md(pending(1)),
                          "gitmem.yaml": "agent:\n  name: bot\n  email: bot@example.org\n"})
    memrepo.stage_files({D: decisions_md(resolved=resolved(1))})
    assert run_check(memrepo, cli, monkeypatch, AGENT).code == 0
    result = run_check(memrepo, cli, monkeypatch, ("Bot", "BOT@example.org"))
    assert result.code == 1
    line = decisions_md(resolved=resolved(1)).split("\n").index("### D-0001 · Pick a name") + 1
    assert result.lines[0].startswith(f"DECISIONS.md:{line}: GM207 D-0001 was resolved by "
                                      "the agent identity <bot@example.org>")


def test_gm207_applies_when_decisions_is_new(tmp_path, git_env, cli, monkeypatch) -> None:
    """With an unborn HEAD every file is new: the agent still may not commit an already resolved decision."""
    from tests.support.helpers import make_repo

    repo = make_repo(tmp_path / "fresh", commit=False)
    repo.stage_files({D: decisions_md(resolved=resolved(1))})
    assert run_check(repo, cli, monkeypatch, HUMAN).code == 0
    result = run_check(repo, cli, monkeypatch, AGENT)
    assert codes_of(result) == ["GM207"]


def codes_of(result) -> list[str]:
    return [line.split(": ", 2)[1].split()[0] for line in result.lines]


def test_unreadable_lessons_does_not_cascade_into_gm503(memrepo: GitRepo, cli) -> None:
    memrepo.stage_files({LE: lessons_md(lesson(1)).encode().replace(b"clock", b"cl\xf6ck"),
                    R: rules_md("- R-01 · Read the clock (from L-0001; cycles 4, 5)\n")})
    assert codes_of(cli(["check"], cwd=memrepo.path)) == ["GM902"]


def test_a_multi_line_value_quoted_in_a_message_stays_on_one_line(memrepo: GitRepo, cli) -> None:
    memrepo.stage_files({LE: lessons_md(lesson(1, status="done\n  and dusted"))})
    result = cli(["check"], cwd=memrepo.path)
    status_line = lessons_md(lesson(1, status="done\n  and dusted")).split("\n").index("- Status: done") + 1
    assert result.lines == [f"LESSONS.md:{status_line}: GM404 L-0001: bad Status `done and dusted` "
                            "[lesson-status-invalid] (hint: use `open`, `promoted R-NN` or `retired — <reason>`)"]


def test_gm405_and_gm505_name_the_vanished_ids(memrepo: GitRepo, cli) -> None:
    memrepo.commit_files({LE: lessons_md(lesson(1), lesson(2)),
                          R: rules_md("- R-01 · A (human)\n- R-02 · B (from L-0002; cycles 4, 5)\n")})
    memrepo.stage_files({LE: lessons_md(lesson(1)), R: rules_md("- R-01 · A (human)\n")})
    result = cli(["check"], cwd=memrepo.path)
    retired_line = rules_md("- R-01 · A (human)\n").split("\n").index("## Retired") + 1
    assert result.code == 1
    assert [line.split(" [")[0] for line in result.lines] == [
        "LESSONS.md:1: GM405 lesson L-0002 disappeared; lessons are history",
        f"RULES.md:{retired_line}: GM505 R-02 vanished without moving to `## Retired`",
    ]


def test_appending_to_log_checks_only_the_new_entries(memrepo: GitRepo, cli) -> None:
    """An old, already committed bad entry is history: appending a good one does not re-report it."""
    memrepo.commit_files({L: LOG_BASE + log_entry(10, 2, task=False)})
    memrepo.stage_files({L: LOG_BASE + log_entry(10, 2, task=False) + log_entry(11, 3)})
    assert cli(["check"], cwd=memrepo.path).code == 0
    memrepo.stage_files({L: LOG_BASE + log_entry(10, 2, task=False) + log_entry(11, 2)})
    result = cli(["check"], cwd=memrepo.path)
    line = (LOG_BASE + log_entry(10, 2, task=False)).count("\n") + 2
    assert result.lines[0].startswith(f"LOG.md:{line}: GM303 cycle 2 does not follow cycle 2")


# ---- GM9xx: secrets, encodings ------------------------------------------------------------------------------

SECRETS = {
    "anthropic": "sk-ant-api03-" + "Q" * 40,
    "aws": "AKIA" + "ABCDEFGHIJKLMNOP",
    "github": "ghp_" + "a1B2" * 9,
}


@pytest.mark.parametrize("kind", sorted(SECRETS))
def test_secrets_are_reported_without_repeating_them(memrepo: GitRepo, cli, kind: str) -> None:
    secret = SECRETS[kind]
    text = LOG_BASE + log_entry(10, 2) + f"- Evidence: token {secret} in the output\n"
    memrepo.commit_files({L: LOG_BASE})
    memrepo.stage_files({L: text})
    for fmt in ("text", "github", "json"):
        result = cli(["check", "--format", fmt], cwd=memrepo.path)
        assert result.code == 1
        assert secret not in result.out + result.err
        assert secret[:12] not in result.out + result.err
    result = cli(["check"], cwd=memrepo.path)
    line = text.split("\n").index(f"- Evidence: token {secret} in the output") + 1
    assert result.lines[0].startswith(f"LOG.md:{line}: GM903 this looks like")


@pytest.mark.parametrize("kind", sorted(SECRETS))
def test_a_secret_inside_a_malformed_line_is_not_echoed(memrepo: GitRepo, cli, kind: str) -> None:
    """Messages that quote a bad heading or status must not carry a secret along with it."""
    secret = SECRETS[kind]
    memrepo.stage_files({N: now_md(f"## {secret} · cycle 1\n- Did: x\n"),
                    LE: lessons_md(lesson(1, status=f"open {secret}")),
                    D: decisions_md(f"\n### {secret}\n- Asked: x\n")})
    for fmt in ("text", "github", "json"):
        result = cli(["check", "--format", fmt], cwd=memrepo.path)
        assert result.code == 1
        assert secret not in result.out + result.err
    codes = {line.split(": ", 2)[1].split()[0] for line in cli(["check"], cwd=memrepo.path).lines}
    assert {"GM102", "GM404", "GM208", "GM903"} <= codes


def test_crlf_and_bom_are_warnings_that_keep_exit_zero(memrepo: GitRepo, cli) -> None:
    memrepo.stage_files({N: now_md(now_block(9, 1)).replace("\n", "\r\n"),
                    LE: b"\xef\xbb\xbf" + lessons_md(lesson(1)).encode()})
    result = cli(["check"], cwd=memrepo.path)
    assert result.code == 0, result.out
    assert [line.split(" (hint")[0] for line in result.lines] == [
        "LESSONS.md:1: GM905 warning: file starts with a UTF-8 byte order mark; it is accepted, canonical files "
        "have none [non-canonical-encoding]",
        "NOW.md:1: GM905 warning: CRLF line endings; they are accepted, canonical files use LF "
        "[non-canonical-encoding]",
    ]


def test_a_crlf_conflict_marker_is_still_found(memrepo: GitRepo, cli) -> None:
    body = now_md("<<<<<<< HEAD\n" + now_block(10, 2) + "=======\n" + now_block(9, 1) + ">>>>>>> other\n")
    memrepo.stage_files({N: body.replace("\n", "\r\n").replace("<<<<<<< HEAD", "<<<<<<<")})
    result = cli(["check"], cwd=memrepo.path)
    assert any(line.startswith("NOW.md:3: GM901 ") for line in result.lines), result.out


def test_non_utf8_names_path_and_line_without_crashing(memrepo: GitRepo, cli) -> None:
    data = LOG_BASE.encode() + b"\n## 2026-11-30 10:00 UTC \xb7 cycle 2 \xb7 built\n"   # Latin-1 middle dot
    memrepo.commit_files({L: LOG_BASE})
    memrepo.stage_files({L: data})
    result = cli(["check"], cwd=memrepo.path)
    line = LOG_BASE.count("\n") + 2
    assert result.code == 1
    byte = data.index(b"UTC \xb7") + 4      # the encoded U+00B7 in LOG_BASE is \xc2\xb7, valid
    assert result.lines == [f"LOG.md:{line}: GM902 not valid UTF-8 (byte {byte}: invalid start byte) "
                            "[not-utf8] (hint: save the file as UTF-8; LOG, which is append-only, only by "
                            "replacing each byte that is not UTF-8 with U+FFFD)"]
    assert "Traceback" not in result.err
