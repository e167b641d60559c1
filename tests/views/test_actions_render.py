"""What gitmem shows on a GitHub Actions run is rendered in one place (gitmem.views.actions), from typed results,
and held here against saved output (tests/fixtures/render/actions), as the violation formats are.

Each saved file is one command's part of a run: its workflow commands, its $GITHUB_OUTPUT lines and its job
summary. Run this file as a script to write them again after a deliberate change, and read the diff.
"""
from __future__ import annotations

import os
import sys
from collections.abc import Callable
from datetime import date
from pathlib import Path

import pytest

from gitmem.checks.violation import Violation
from gitmem.close import CloseResult
from gitmem.cycle.runner import CycleReport
from gitmem.errors import ExitCode
from gitmem.publish.github_api import PullRequest
from gitmem.publish.push import PushReport, PushStatus
from gitmem.publish.required_check import BranchVerdict
from gitmem.views import actions
from gitmem.views.actions import ActionsText

FIXTURES = Path(__file__).parents[1] / "fixtures" / "render" / "actions"
VIOLATIONS = sorted([
    Violation("LOG.md", 120, "GM301", "LOG was rewritten at line 120; only appending is allowed"),
    Violation("docs/a,b:c.md", 1, "GM904", "memory file docs/a,b:c.md is missing: 100% gone\nsecond line",
              "run `gitmem init`"),
])


def _cycle(push: PushReport | None = None, **changes: object) -> CycleReport:
    report = CycleReport(12, outcome="built", task="fix the `login` <img src=x> page", commit="0123456789abcdef0123",
                         tokens={"input": 1200, "output": 340}, proposal_branch="gitmem/proposal-12",
                         branches_pushed=["gitmem/proposal-12"], pending=["D-0003 · Which [license](http://x)?"],
                         late="started late: 2 h after 06:00", push=push)
    for name, value in changes.items():
        setattr(report, name, value)
    return report


def _close(push: PushReport | None = None) -> CloseResult:
    return CloseResult(date(2026, 12, 6), "closed", "closed", commit="fedcba9876543210",
                       report={"Cycles": "3 built\n1 no-build", "Problems": "", "Waiting": "D-0003", "Plan": "ship it"},
                       promoted=[{"rule": "R-02", "lesson": "L-0004"}], push=push)


SAMPLES: dict[str, Callable[[], ActionsText]] = {
    "cycle-built": lambda: actions.cycle_ran(_cycle()),
    "cycle-pushed": lambda: actions.cycle_ran(_cycle(PushReport(PushStatus.PUSHED))),
    "cycle-refused": lambda: actions.cycle_ran(_cycle(PushReport(PushStatus.REFUSED, "gitmem/cycle-12"))),
    "cycle-rewritten": lambda: actions.cycle_ran(_cycle(PushReport(PushStatus.REWRITTEN, "gitmem/cycle-12"))),
    "cycle-failed": lambda: actions.cycle_ran(_cycle(PushReport(PushStatus.FAILED), outcome="no-build",
                                                     error="the agent exited 1: *boom*", commit=None,
                                                     salvage_branch="gitmem/salvage/cycle-12", tokens={},
                                                     pending=[], late="")),
    "close-closed": lambda: actions.day_closed(_close()),
    "close-conflict": lambda: actions.day_closed(_close(PushReport(PushStatus.CONFLICT, "gitmem/close-2026-12-06"))),
    "verify-clean": lambda: actions.checked("verify", ExitCode.OK, "3 commit(s) verified", []),
    "verify-violations": lambda: actions.checked("verify", ExitCode.VIOLATIONS, "3 commit(s) verified", VIOLATIONS),
    "verify-rewritten": lambda: actions.checked("verify", ExitCode.REWRITTEN, "0 commit(s) verified", []),
    "check-error": lambda: actions.command_failed("check", "not a git repository: /x, y\n(100% sure)"),
    "pr-opened": lambda: actions.pull_request_opened(PullRequest(7, "https://github.example/o/r/pull/7", True),
                                                     branch="gitmem/memory", base="main", commits=3),
    "pr-updated": lambda: actions.pull_request_opened(PullRequest(7, "https://github.example/o/r/pull/7", False),
                                                      branch="gitmem/memory-2", base="main", commits=1),
    "pr-check-reported": lambda: actions.check_reported(
        "Verify memory history", BranchVerdict("failure", "GM301 LOG.md:120 LOG was rewritten", 2)),
    "pr-failed": lambda: actions.step_failed("Pull request not opened: HTTP 403", ["the workflow needs a permission"]),
}


def golden(text: ActionsText) -> str:
    return (f"== workflow commands (stdout)\n{text.annotations}== $GITHUB_OUTPUT\n{text.outputs}"
            f"== $GITHUB_STEP_SUMMARY\n{text.summary}")


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_each_command_renders_as_saved(name: str) -> None:
    assert golden(SAMPLES[name]()) == (FIXTURES / f"{name}.txt").read_text(encoding="utf-8")


def test_every_saved_rendering_has_a_sample() -> None:
    assert sorted(path.stem for path in FIXTURES.glob("*.txt")) == sorted(SAMPLES)


def test_the_cycle_and_the_close_report_a_push_in_one_type() -> None:
    """The cycle's push status was a string and the close's an untyped dict: both are a PushReport now."""
    import dataclasses
    import typing

    from gitmem.close import compose
    from gitmem.cycle import runner

    assert typing.get_type_hints(runner.CycleReport)["push"] == PushReport | None
    assert typing.get_type_hints(compose.CloseResult)["push"] == PushReport | None
    assert _cycle(PushReport(PushStatus.REFUSED, "gitmem/cycle-12")).as_dict()["push_status"] == "refused"
    assert dataclasses.asdict(_close(PushReport(PushStatus.CONFLICT, "b", "c", ["m"])))["push"] == {
        "status": "conflict", "side_branch": "b", "commit": "c", "messages": ["m"]}


SECRET = "ghp_" + "abcdefghijklmnopqrstuvwxyz0123456789"


def test_an_errors_annotation_is_masked_as_its_message_is(memrepo, cli, tmp_path: Path, monkeypatch) -> None:
    """The disagreement: the error map masked a failed verify's message, its `::error` annotation printed it
    whole. Every workflow command now passes the one display mask (gitmem.secrets.scrub)."""
    summary = tmp_path / "summary"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))

    result = cli(["verify", "--range", f"{SECRET}..HEAD", "--format", "github"], cwd=memrepo.path)

    assert result.code == ExitCode.USAGE
    assert result.out.startswith("::error title=gitmem verify::unknown revision '***'"), result.out
    assert SECRET not in result.out + result.err + summary.read_text(encoding="utf-8")


def test_a_refused_cycles_json_and_annotation_are_masked_as_its_message_is(memrepo, cli, monkeypatch) -> None:
    """The disagreement: `cycle --json` printed a refusal, and its annotation under GitHub Actions, unmasked,
    while the error map masked the same words. A staged file's name is the agent's or anyone's text."""
    memrepo.commit_files({"agent-script.yaml": "cycles:\n  default: []\n",
                          "gitmem.yaml": memrepo.read("gitmem.yaml").replace(
                              "  # backend: anthropic", "  backend: scripted\n  script: agent-script.yaml")},
                         "use the scripted agent")
    memrepo.write(f"{SECRET}.txt", "left over\n")
    memrepo.stage(f"{SECRET}.txt")
    monkeypatch.setenv("GITHUB_ACTIONS", "true")

    result = cli(["cycle", "--json"], cwd=memrepo.path)

    assert result.code == ExitCode.DIRTY
    assert "staged: ***.txt" in result.out and "::error file=***.txt,line=1" in result.out, result.out
    assert SECRET not in result.out + result.err


def test_a_status_that_cannot_be_reported_is_said_as_github_pr_says_everything(tmp_path: Path) -> None:
    """The disagreement: `github pr` named itself `gitmem: gitmem github pr:` for this one failure only."""
    import subprocess

    from tests.support.action_support import SCRIPT, agent_repo, clean_env, project_bin
    from tests.support.fake_github import FakeGitHub
    from tests.support.gitcli import git

    agent_repo(tmp_path / "first", tmp_path / "origin.git", script=SCRIPT)
    work = tmp_path / "run"
    git(tmp_path, "clone", "-q", str(tmp_path / "origin.git"), str(work))
    with FakeGitHub() as fake:
        fake.forbid_statuses = True
        env = {**clean_env(project_bin(), tmp_path), "GITHUB_API_URL": fake.url,
               "GITHUB_REPOSITORY": fake.repository, "GITHUB_TOKEN": fake.token}
        for argv in (["github", "prepare"], ["cycle"], ["github", "pr", "--phase", "cycle"]):
            done = subprocess.run([str(project_bin() / "gitmem"), *argv], cwd=work, env=env, capture_output=True,
                                  text=True)
    assert done.returncode == 4, done.stderr
    assert "gitmem: github pr: could not report 'Verify memory history'" in done.stderr, done.stderr


if __name__ == "__main__":      # write the saved renderings again
    FIXTURES.mkdir(parents=True, exist_ok=True)
    for stale in FIXTURES.glob("*.txt"):
        os.remove(stale)
    for each, render in SAMPLES.items():
        (FIXTURES / f"{each}.txt").write_text(golden(render()), encoding="utf-8")
    sys.exit(0)
