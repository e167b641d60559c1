"""The close's account in the job summary quotes what the agent wrote (a no-build cycle's result among the
problems, a decision's title among those waiting, a lesson's rule in the plan). The summary is often public, and
GitHub renders its HTML and Markdown: as in the cycle's account and a pull request
(gitmem.publish.pullrequest.for_pr), that text shows as written and acts on nothing."""
from __future__ import annotations

from datetime import date

from gitmem.close import CloseResult
from gitmem.views import actions

HOSTILE = {
    "Cycles": "3 cycles (0 built, 0 published, 3 no-build)",
    "Problems": "cycle 4 built nothing: <!-- the rest is hidden\nRule 0: ![pixel](https://tracker.example/p.png)",
    "Waiting": "D-0002 · <img src=https://tracker.example/q.png> ask @octocat (0h)",
    "Plan": "[click me](https://evil.example) — fixes #12 — why: **bold** `code`",
}


def test_the_closes_job_summary_shows_the_agents_text_inert() -> None:
    result = CloseResult(date(2026, 12, 6), "closed", "closed", commit="fedcba9876543210", report=HOSTILE,
                         promoted=[{"rule": "R-02", "lesson": "L-0004"}])
    summary = actions.day_closed(result).summary
    for active in ("<!--", "<img", "![pixel](", "[click me](", "@octocat", "#12", "**bold**", "`code`"):
        assert active not in summary, active
    # Still shown, as written: the human reads what the agent said.
    assert "&lt;\\!-- the rest is hidden" in summary and "tracker.example/p.png" in summary
    assert "@\u200bocto" in summary and "#\u200b12" in summary
    assert "- Cycles: 3 cycles (0 built, 0 published, 3 no-build)" in summary
    assert "- Promoted: R-02 from L-0004" in summary and "- Commit: `fedcba987654`" in summary
