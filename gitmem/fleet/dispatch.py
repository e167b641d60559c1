"""The fleet catches up: a cycle for every agent whose scheduled cycles stopped coming.

GitHub runs schedules on a best-effort basis: hours late, dropped at busy times, and disabled in a public
repository after 60 days without activity. An agent whose last cycle is older than its schedule's interval
plus `GRACE` is overdue. For each overdue agent on GitHub (and only for those: a healthy fleet costs no API
call), one pass:

1. reads the state of its workflow: a workflow GitHub disabled for inactivity is enabled again; one a human
   disabled is left alone and said so;
2. starts nothing while a cycle of that workflow is queued or in progress: the agent's own concurrency group
   already keeps two cycles from overlapping, and a second queued run would only replace the first. A run is
   told by its jobs: the template's workflow runs its daily close and its checks in jobs of their own, the
   close in a concurrency group of its own, so a close running is no cycle and a catch-up runs beside it. A
   run whose jobs GitHub does not list yet, or another job, counts as a cycle (never two at once). A workflow
   is reached once a pass, however many agents of fleet.yaml (workspaces of one repository) share it;
3. starts nothing for an agent over its budget, or for any agent while the fleet is over its own;
4. otherwise dispatches the workflow (`workflow_dispatch` with `command: cycle`, the template's input) on the
   repository's default branch, where GitHub runs its schedule, which one more call asks GitHub for.

Every decision is a `CatchUp` (data); `plan_dispatch` decides from the fleet's view alone, `carry_out` makes the calls,
and `dispatch_overdue` is the whole pass (`gitmem fleet dispatch`).
"""
from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from gitmem.cycle.allowance import Spent
from gitmem.errors import GitmemError
from gitmem.fleet.fleetfile import AgentEntry, Fleet
from gitmem.fleet.parallel import FleetView
from gitmem.fleet.read import OVER_BUDGET, STALLED, UNREADABLE, AgentRow
from gitmem.fleet.spending import fleet_spent
from gitmem.publish.github_api import PUBLIC_API, GitHubClient, GitHubError

GRACE = 3600                       # seconds past the interval before a cycle counts as missed
TOKEN_VARIABLE = "GITMEM_FLEET_DISPATCH_TOKEN"
INPUTS = {"command": "cycle"}      # the template workflow's workflow_dispatch input
DISPATCH, WAIT, SKIP = "dispatch", "wait", "skip"
# The jobs of the template's workflow (template-repo/.github/workflows/gitmem.yml) that run no cycle, by the
# names the jobs API gives them: their `name:`, or their id where a workflow gives them none.
NOT_CYCLE_JOBS = frozenset({"Daily close", "close", "Check memory", "check"})
RUNS_LOOKED_AT = 3                 # unfinished runs whose jobs are asked for; more than that: a cycle is among them


@dataclass
class CatchUp:
    """What the pass decided for one agent, and what it did."""

    agent: str
    github: str | None
    decision: str                  # DISPATCH (overdue: act), WAIT (not overdue), SKIP (overdue, but not ours to start)
    why: str
    ref: str = ""                  # the branch a dispatch ran on: the repository's default branch, as GitHub names it
    # "enabled", "dispatched gitmem.yml", "not dispatched: ...", once carried out. Never the branch: a public
    # view shows these as they are, and the branch is the agent's (only `ref` holds it, which it leaves out).
    done: list[str] = field(default_factory=list)
    dispatched: bool = False       # a cycle was started, on `ref`
    calls: int = 0
    error: str = ""


@dataclass(frozen=True)
class CatchUpPass:
    """One pass over the fleet: a step per agent, and whether its calls were only said (`dry_run`)."""

    steps: list[CatchUp]
    dry_run: bool
    failed: bool                   # an agent could not be read, or a call failed

    @property
    def calls(self) -> int:
        return sum(step.calls for step in self.steps)


class NoDispatchToken(GitmemError):
    """Agents are overdue, and there is no token to start their workflows with; nothing was called."""


def overdue_seconds(row: AgentRow) -> float | None:
    """How long past its interval (and GRACE) the row's last cycle by the runner is (an interactive session's
    entry starts no schedule); None when it is not overdue or has no known schedule."""
    interval = row.stall_after_seconds // 2 if row.stall_after_seconds else row.interval_seconds
    if interval is None or row.scheduled_age_days is None:
        return None
    late = row.scheduled_age_days * 86400 - interval - GRACE
    return late if late > 0 else None


def plan_dispatch(fleet: Fleet, view: FleetView) -> list[CatchUp]:
    """One step per agent of fleet.yaml: DISPATCH the overdue ones that may run, with why for every one."""
    spent = fleet_spent([Spent(r.tokens_today, r.cost_today) for r in view.rows])
    fleet_over = spent.over(fleet.budget)
    steps = []
    for entry in fleet.agents:
        rows = [r for r in view.rows if r.agent == entry.name]
        steps.append(_decide(entry, rows, fleet_over))
    return steps


def _decide(entry: AgentEntry, rows: Sequence[AgentRow], fleet_over: str) -> CatchUp:
    def step(decision: str, why: str) -> CatchUp:
        return CatchUp(entry.name, entry.github, decision, why)

    if not rows or any(r.verdict == UNREADABLE for r in rows):
        return step(SKIP, "its memory could not be read; see `gitmem fleet status`")
    late = [seconds for r in rows if (seconds := overdue_seconds(r)) is not None]
    if not late:
        if not any(r.interval_seconds or r.stall_after_seconds for r in rows):
            return step(WAIT, "no schedule known")
        if all(r.scheduled_age_days is None for r in rows):
            return step(WAIT, "no cycle by the runner in LOG yet: nothing to be overdue from")
        if any(r.verdict == STALLED for r in rows):     # a stall_after shorter than the interval and GRACE
            return step(WAIT, "stalled, but not overdue yet: a cycle is started once the last one is older than "
                              "its interval (half its stall_after) and an hour")
        return step(WAIT, "its cycles are on schedule")
    if entry.github is None:
        return step(SKIP, "overdue, but not a GitHub repository: start its cycle where it runs")
    if fleet_over:
        return step(SKIP, f"overdue, but the fleet is over its budget ({fleet_over})")
    over = [r.over_budget for r in rows if r.verdict == OVER_BUDGET or r.over_budget]
    if over:
        return step(SKIP, f"overdue, but over its budget ({over[0]})")
    return step(DISPATCH, f"overdue by {max(late) / 3600:.1f}h")


def carry_out(steps: list[CatchUp], fleet: Fleet, client_for: Callable[[str], GitHubClient]) -> list[CatchUp]:
    """Make the calls of every DISPATCH step (at most five each), recording what was done or what failed."""
    entries = {entry.name: entry for entry in fleet.agents}
    # A workflow is caught up once a pass, for the first agent that reaches it: fleet.yaml may list one repository
    # twice (a workspace each). GitHub creates a dispatched run a moment after it answers, so the second agent's
    # look at the runs would not see it, and a second cycle would queue behind the first (tokens spent twice).
    reached: dict[tuple[str, str], str] = {}
    for step in steps:
        if step.decision != DISPATCH or step.github is None:
            continue
        entry = entries[step.agent]
        workflow = (step.github.lower(), entry.workflow)      # GitHub's owner and name ignore case
        if workflow in reached:
            step.done.append(f"not dispatched: {entry.workflow} is also {reached[workflow]}'s, caught up once a "
                             "pass (see its line)")
            continue
        reached[workflow] = step.agent
        client = client_for(step.github)
        try:
            _catch_up(step, entry, client)
        except GitHubError as err:
            step.error = str(err)
    return steps


def _catch_up(step: CatchUp, entry: AgentEntry, client: GitHubClient) -> None:
    state = client.workflow_state(entry.workflow)
    step.calls += 1
    if state == "disabled_manually":
        step.done.append("left alone: a human disabled the workflow")
        return
    if state == "disabled_inactivity":
        client.enable_workflow(entry.workflow)
        step.calls += 1
        step.done.append("enabled (GitHub had disabled its schedule for inactivity)")
    elif state != "active":
        step.done.append(f"left alone: the workflow's state is {state or 'unknown'}")
        return
    busy = _cycle_unfinished(step, entry, client)
    if busy:
        step.done.append(f"not dispatched: {busy} still queued or in progress")
        return
    # Where the schedule runs: GitHub starts scheduled workflows on the default branch only. Not fleet.yaml's
    # `branch:`, the branch the agent's memory is read from: in pull-request mode that is the memory branch,
    # and a cycle started there would open its pull request onto itself.
    step.ref = client.default_branch()
    step.calls += 1
    if not step.ref:
        step.done.append("left alone: GitHub named no default branch to dispatch on")
        return
    client.dispatch_workflow(entry.workflow, ref=step.ref, inputs=INPUTS)
    step.calls += 1
    step.dispatched = True
    step.done.append(f"dispatched {entry.workflow}")


def _cycle_unfinished(step: CatchUp, entry: AgentEntry, client: GitHubClient) -> str:
    """What of the workflow's unfinished runs holds a catch-up back ("" when nothing does): a run with a job of
    its own that is not NOT_CYCLE_JOBS, or whose jobs are not listed yet. A close or a check alone is said in
    `step.done` and holds nothing back."""
    runs = client.unfinished_runs(entry.workflow)
    step.calls += 1
    if len(runs) > RUNS_LOOKED_AT:
        return f"{len(runs)} runs"
    for run in runs:
        if not run:                # GitHub named no id to ask its jobs by: it may be a cycle
            return "a run (its jobs not listed)"
        jobs = client.unfinished_jobs(run)
        step.calls += 1
        if not jobs or any(job not in NOT_CYCLE_JOBS for job in jobs):
            return "a cycle" if jobs else "a run (its jobs not listed yet)"
    if runs:
        step.done.append("the close or a check is queued or in progress, not a cycle: one runs beside it")
    return ""


def dispatch_overdue(fleet: Fleet, view: FleetView, *, dry_run: bool, environ: Mapping[str, str]) -> CatchUpPass:
    """The whole pass: plan every agent, then (unless `dry_run`) make the calls of the overdue ones with
    TOKEN_VARIABLE's token against GITHUB_API_URL (github.com's API when unset). NoDispatchToken when a call is
    due and the token is not set."""
    steps = plan_dispatch(fleet, view)
    token = environ.get(TOKEN_VARIABLE, "")
    wanted = [step for step in steps if step.decision == DISPATCH]
    if wanted and not dry_run and not token:
        raise NoDispatchToken(f"{len(wanted)} agent(s) are overdue, but {TOKEN_VARIABLE} is not set: give it a "
                              "token with Actions read and write on the agent repositories, or pass --dry-run")
    if not dry_run:
        api = environ.get("GITHUB_API_URL") or PUBLIC_API
        carry_out(steps, fleet, lambda repository: GitHubClient(api, repository, token))
    return CatchUpPass(steps, dry_run, view.failed or any(step.error for step in steps))
