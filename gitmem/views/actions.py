"""What a command shows on a GitHub Actions run, rendered from typed results: the one place that writes
workflow commands (`::error`), `name=value` lines for $GITHUB_OUTPUT and markdown for $GITHUB_STEP_SUMMARY.

Every function takes a command's result and returns `ActionsText`; `gitmem.cli.common.to_actions` writes it
(the annotations to stdout, the rest to the files the runner names), masked by the one display mask. Text the
agent wrote (a task, a decision's title, an error quoting its output) is made inert in the summary, as in a
pull request (gitmem.publish.pullrequest.for_pr), so no markup hides or fetches anything. Violations as
annotations are `gitmem.checks.render.render_github`, the check's own output format.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from gitmem.checks.render import escape_data, escape_property
from gitmem.errors import ExitCode

if TYPE_CHECKING:
    from gitmem.checks.violation import Violation
    from gitmem.close import CloseResult
    from gitmem.cycle.runner import CycleReport
    from gitmem.publish.github_api import PullRequest
    from gitmem.publish.push import PushReport
    from gitmem.publish.required_check import BranchVerdict

# What `check` and `verify` write as `outcome` for each exit code; any other code is "error".
CHECK_OUTCOMES = {ExitCode.OK: "clean", ExitCode.VIOLATIONS: "violations", ExitCode.REWRITTEN: "rewritten"}


@dataclass(frozen=True)
class ActionsText:
    """One command's part of a run: workflow commands for stdout, lines for $GITHUB_OUTPUT, job summary markdown."""

    annotations: str = ""
    outputs: str = ""
    summary: str = ""


def error_annotation(title: str, message: str) -> str:
    """One `::error` workflow command for a failure that is not a violation (a shallow clone, an unknown revision)."""
    return f"::error title={escape_property(title)}::{escape_data(message)}\n"


def command_failed(command: str, message: str) -> ActionsText:
    """An error that stopped `check` or `verify`: an annotation, `outcome=error` and a summary that says why, as
    the log line alone is easy to miss in a run."""
    return ActionsText(error_annotation(f"gitmem {command}", message), "outcome=error\n",
                       f"### gitmem {command}: error\n\n{message}\n\n")


def checked(command: str, code: int, detail: str, violations: Sequence[Violation]) -> ActionsText:
    """`check` or `verify` done: its `outcome`, and a summary listing what is wrong, so a failed check says why on
    the run's page, not only in its log."""
    from gitmem.checks.render import render_text

    outcome = CHECK_OUTCOMES.get(ExitCode(code), "error")
    lines = [f"### gitmem {command}: {outcome}", "", detail]
    if violations:
        lines += ["", f"{len(violations)} problem(s):", "", "```text", render_text(violations).rstrip("\n"), "```"]
    return ActionsText(outputs=f"outcome={outcome}\n", summary="\n".join(lines) + "\n\n")


def push_outputs(push: PushReport | None) -> str:
    """`push` (what the push came to) and `side-branch` for $GITHUB_OUTPUT: the Action opens a pull request for
    the side branch of a refused push (gitmem.publish.push.PushStatus.REFUSED)."""
    return f"push={push.status}\nside-branch={push.side_branch or ''}\n" if push is not None else ""


def push_summary(push: PushReport | None) -> list[str]:
    """The job summary's lines for a push that did not land where it was meant to."""
    from gitmem.publish.push import PROTECTED_HINT, PushStatus

    if push is None:
        return []
    status, side_branch = push.status, push.side_branch
    if status is PushStatus.REFUSED:
        return [f"- Push: **refused** by the remote (branch protection, a ruleset or a hook); the work is on "
                f"branch `{side_branch}`", f"- Protected branch: {PROTECTED_HINT}"]
    if status in (PushStatus.CONFLICT, PushStatus.REWRITTEN) and side_branch:
        return [f"- Push: **{status}**; the work is on branch `{side_branch}` (on the remote too): land it by "
                f"memory rules with `gitmem merge origin/{side_branch}` after `git fetch`"]
    if status is PushStatus.FAILED:
        return [f"- Push: **failed**; the work is only on this runner's disk (local branch "
                f"{'`' + side_branch + '`' if side_branch else 'only'}), which is thrown away when the job ends"]
    return []


def cycle_ran(report: CycleReport) -> ActionsText:
    """`cycle`, `outcome`, `commit` (and the push's) for $GITHUB_OUTPUT, and a short account of the cycle."""
    return ActionsText(outputs=f"cycle={report.cycle}\noutcome={report.outcome}\ncommit={report.commit or ''}\n"
                       + push_outputs(report.push), summary=cycle_summary(report))


def cycle_summary(report: CycleReport) -> str:
    """A short markdown account of one cycle for the job summary."""
    from gitmem.publish.pullrequest import for_pr

    tokens = ", ".join(f"{k} {v}" for k, v in report.tokens.items()) or "not reported"
    lines = [f"### gitmem cycle {report.cycle}: {report.outcome}", "",
             f"- Task: {for_pr(report.task) or '-'}", f"- Commit: `{(report.commit or '-')[:12]}`",
             f"- Tokens: {tokens}"]
    if report.error:
        lines.append(f"- Error: {for_pr(report.error)}")
    for name, value in (("Salvage branch", report.salvage_branch), ("Side branch", report.side_branch),
                        ("Proposal branch", report.proposal_branch)):
        if value:
            lines.append(f"- {name}: `{value}`")
    if report.branches_pushed:
        lines.append(f"- Branches pushed: {', '.join(f'`{name}`' for name in report.branches_pushed)}")
    lines += push_summary(report.push)
    if report.late:
        lines.append(f"- Schedule: {report.late}")
    waiting = "; ".join(for_pr(item) for item in report.pending) if report.pending else "none"
    lines.append(f"- Decisions waiting: {waiting}")
    return "\n".join(lines) + "\n\n"


def day_closed(result: CloseResult) -> ActionsText:
    """`outcome` and `commit` (and the push's) for $GITHUB_OUTPUT, and a short account of the close. The report
    quotes the agent (results among the problems, decision titles, the plan's task): inert, as in the cycle's."""
    from gitmem.publish.pullrequest import for_pr

    account = [f"### gitmem close {result.day.isoformat()}: {result.status}", ""]
    for key in ("Cycles", "Problems", "Waiting", "Plan"):
        if result.report.get(key):
            account.append(f"- {key}: {for_pr('; '.join(result.report[key].splitlines()))}")
    account += [f"- Promoted: {p['rule']} from {p['lesson']}" for p in result.promoted]
    account.append(f"- Commit: `{(result.commit or '-')[:12]}`")
    account += push_summary(result.push)
    return ActionsText(outputs=f"outcome={result.status}\ncommit={result.commit or ''}\n" + push_outputs(result.push),
                       summary="\n".join(account) + "\n\n")


def pull_request_opened(opened: PullRequest, *, branch: str, base: str, commits: int) -> ActionsText:
    """`pr` and `pr-url` for $GITHUB_OUTPUT, and the PR in the job summary."""
    verb = "opened" if opened.created else "updated"
    return ActionsText(outputs=f"pr={opened.number}\npr-url={opened.url}\n",
                       summary=f"- Pull request: [#{opened.number}]({opened.url}) {verb}: `{branch}` -> `{base}`, "
                               f"{commits} commit(s)\n\n")


def check_reported(name: str, verdict: BranchVerdict) -> ActionsText:
    """The verdict `github pr` posted as the commit status `name`."""
    return ActionsText(summary=f"- Check `{name}`: {verdict.state}, {verdict.description}\n\n")


def step_failed(what: str, notes: Sequence[str]) -> ActionsText:
    """A failed step and what to change, in the job summary too: a run's log is the last place people look."""
    return ActionsText(summary=f"- **{what}**" + "".join(f"\n  - To fix: {note}" for note in notes) + "\n\n")
