"""`gitmem fleet dispatch`: a fleet of 100 agents (copies of one `gitmem demo`, each with the template's
3-hourly schedule) read a few hours on, and a loopback fake of GitHub's Actions API (tests/support/
fake_actions.py) answering for each agent's workflow: late, dropped and disabled schedules, a run in progress,
and budgets hit mid-day. Only overdue agents cost API calls; no agent gets a second run while one is queued."""
from __future__ import annotations

import json
import re
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, time, timedelta
from pathlib import Path

import pytest

from gitmem.fleet.dispatch import DISPATCH, SKIP, WAIT, NoDispatchToken, carry_out, dispatch_overdue, plan_dispatch
from gitmem.fleet.fleetfile import load_fleet
from gitmem.fleet.parallel import read_fleet
from gitmem.memory_writer import MemoryWriter
from gitmem.publish.github_api import GitHubClient
from gitmem.scaffold.demo import run_demo
from gitmem.workspace import Workspace
from tests.support.fake_actions import FakeActions
from tests.support.gitcli import git
from tests.support.helpers import fleet_home

AGENTS = 100
ON_SCHEDULE = range(0, 80)
PLAIN_OVERDUE = range(80, 95)
DISABLED_FOR_INACTIVITY, DISABLED_BY_HUMAN, RUNNING, OVER_ITS_BUDGET, NOT_ON_GITHUB = 95, 96, 97, 98, 99


@dataclass
class Fleet100:
    root: Path
    base: datetime          # when the demo ran; the fleet is read six hours later


def _cycle(path: Path, moment: datetime, evidence: str | None = None) -> None:
    MemoryWriter(Workspace.at(path), clock=lambda: moment).add_log_entry(
        task="keep going", outcome="built", result="done", evidence=evidence)
    git(path, "commit", "-qam", "a cycle")


def _base(soon: datetime) -> datetime:
    """When the demo's agents are taken to start: `soon`, unless the six hours to the read cross midnight UTC
    between agent-98's cycle and the read, then just after that midnight. Its tokens count "today" only on the
    read's day, so a run between 18:00 and 23:00 UTC found it under budget (the test failed by the hour)."""
    if (soon + timedelta(hours=1)).date() == (soon + timedelta(hours=6)).date():
        return soon
    return datetime.combine(soon.date() + timedelta(days=1), time(0, 1), tzinfo=UTC)


def test_the_fleets_base_keeps_the_budget_cycle_on_the_reads_day() -> None:
    for hour in range(24):
        base = _base(datetime(2026, 12, 6, hour, 7, tzinfo=UTC))
        assert (base + timedelta(hours=1)).date() == (base + timedelta(hours=6)).date()
        assert base >= datetime(2026, 12, 6, hour, 7, tzinfo=UTC)


@pytest.fixture(scope="module")
def fleet100(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Fleet100]:
    with pytest.MonkeyPatch.context() as patch:
        root = fleet_home(patch, tmp_path_factory, "fleet100")
        demo = run_demo(root / "demo").path
        base = _base(datetime.now(UTC).replace(microsecond=0) + timedelta(minutes=1))
        lines = ["agents:"]
        for n in range(AGENTS):
            shutil.copytree(demo, root / f"agent-{n:02d}", symlinks=True)
            github = "" if n == NOT_ON_GITHUB else f"\n    github: owner/agent-{n:02d}"
            cap = "\n    tokens_per_day: 1000" if n == OVER_ITS_BUDGET else ""
            lines.append(f"  - name: agent-{n:02d}\n    repo: agent-{n:02d}{github}{cap}")
        for n in ON_SCHEDULE:                       # a cycle an hour before the read: on schedule
            _cycle(root / f"agent-{n:02d}", base + timedelta(hours=5))
        _cycle(root / f"agent-{OVER_ITS_BUDGET:02d}", base + timedelta(hours=1),
               evidence="tokens: input 1500, output 500, total 2000")
        (root / "fleet.yaml").write_text("\n".join(lines) + "\n", encoding="utf-8")
        yield Fleet100(root, base)


def _fake(fake: FakeActions) -> None:
    for n in range(AGENTS):
        fake.add(f"owner/agent-{n:02d}")
    fake.workflows[("owner/agent-95", "gitmem.yml")].state = "disabled_inactivity"
    fake.workflows[("owner/agent-96", "gitmem.yml")].state = "disabled_manually"
    fake.workflows[("owner/agent-97", "gitmem.yml")].runs = ["completed", "in_progress"]


def test_only_overdue_agents_are_started_and_only_they_cost_api_calls(fleet100: Fleet100) -> None:
    fleet = load_fleet(fleet100.root / "fleet.yaml")
    view = read_fleet(fleet, clock=lambda: fleet100.base + timedelta(hours=6))
    steps = plan_dispatch(fleet, view)
    decided = {step.agent: step for step in steps}
    assert all(decided[f"agent-{n:02d}"].decision == WAIT for n in ON_SCHEDULE)
    assert decided["agent-99"].decision == SKIP and "not a GitHub repository" in decided["agent-99"].why
    assert decided["agent-98"].decision == SKIP and "2000 tokens today, over 1000" in decided["agent-98"].why
    with FakeActions() as fake:
        _fake(fake)
        carry_out(steps, fleet, lambda repository: GitHubClient(fake.url, repository, fake.token))
        dispatched = sorted(repo for (repo, _), flow in fake.workflows.items() if flow.dispatched)
        assert dispatched == sorted([f"owner/agent-{n:02d}" for n in PLAIN_OVERDUE] + ["owner/agent-95"])
        flow = fake.workflows[("owner/agent-95", "gitmem.yml")]
        assert flow.enabled == 1 and flow.dispatched == [{"ref": "main", "inputs": {"command": "cycle"}}]
        assert fake.workflows[("owner/agent-96", "gitmem.yml")].enabled == 0
        assert "a human disabled" in decided["agent-96"].done[0]
        assert "still queued or in progress" in decided["agent-97"].done[0]
        assert len(fake.requests) == sum(step.calls for step in steps) == 15 * 4 + 5 + 1 + 3
        touched = {path.split("/")[3] for _, path in fake.requests}
        assert touched == {f"agent-{n:02d}" for n in [*PLAIN_OVERDUE, 95, 96, 97]}   # on-schedule agents: no call
        # The next pass, with the dispatched runs still queued, starts nothing twice.
        again = carry_out(plan_dispatch(fleet, view), fleet, lambda repo: GitHubClient(fake.url, repo, fake.token))
        assert all(len(flow.dispatched) <= 1 for flow in fake.workflows.values())
        assert all("still queued" in s.done[-1] for s in again if s.decision == DISPATCH and s.agent != "agent-96")


def test_a_fleet_over_its_budget_starts_nothing(fleet100: Fleet100, tmp_path: Path) -> None:
    text = (fleet100.root / "fleet.yaml").read_text(encoding="utf-8").replace("repo: agent-", f"repo: "
                                                                              f"{fleet100.root}/agent-")
    (tmp_path / "fleet.yaml").write_text(text + "budget:\n  tokens_per_day: 1500\n", encoding="utf-8")
    fleet = load_fleet(tmp_path / "fleet.yaml")
    steps = plan_dispatch(fleet, read_fleet(fleet, clock=lambda: fleet100.base + timedelta(hours=6)))
    overdue = [step for step in steps if step.decision != WAIT]
    assert overdue and all(step.decision == SKIP for step in overdue)
    assert "the fleet is over its budget (2000 tokens today, over 1500)" in overdue[0].why


def test_the_whole_pass_is_the_librarys_token_api_and_calls_from_the_environment_given(fleet100: Fleet100) -> None:
    fleet = load_fleet(fleet100.root / "fleet.yaml")
    view = read_fleet(fleet, clock=lambda: fleet100.base + timedelta(hours=6))
    with FakeActions() as fake:
        _fake(fake)
        with pytest.raises(NoDispatchToken, match="18 agent\\(s\\) are overdue, but GITMEM_FLEET_DISPATCH_TOKEN"):
            dispatch_overdue(fleet, view, dry_run=False, environ={"GITHUB_API_URL": fake.url})
        said = dispatch_overdue(fleet, view, dry_run=True, environ={"GITHUB_API_URL": fake.url})
        assert fake.requests == [] and said.dry_run and said.calls == 0 and not said.failed
        done = dispatch_overdue(fleet, view, dry_run=False,
                                environ={"GITHUB_API_URL": fake.url, "GITMEM_FLEET_DISPATCH_TOKEN": fake.token})
        assert done.calls == len(fake.requests) == 15 * 4 + 5 + 1 + 3 and not done.failed
        assert [step.decision for step in done.steps] == [step.decision for step in said.steps]


def test_the_cli_dispatches_with_the_token_and_a_dry_run_calls_nothing(tmp_path: Path, cli, git_env: None,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.support.helpers import make_repo

    late = make_repo(tmp_path / "late")
    shutil.copytree(Path(__file__).resolve().parents[2] / "template-repo" / ".github",
                    late.path / ".github", dirs_exist_ok=True)
    _cycle(late.path, datetime.now(UTC) - timedelta(hours=9))          # GitHub dropped the last three runs
    (tmp_path / "fleet.yaml").write_text("agents:\n  - name: late\n    repo: late\n    github: owner/late\n",
                                         encoding="utf-8")
    with FakeActions() as fake:
        fake.add("owner/late")
        monkeypatch.setenv("GITHUB_API_URL", fake.url)
        monkeypatch.delenv("GITMEM_FLEET_DISPATCH_TOKEN", raising=False)
        refused = cli(["fleet", "dispatch"], cwd=tmp_path)
        assert refused.code == 2 and "GITMEM_FLEET_DISPATCH_TOKEN is not set" in refused.err
        dry = cli(["fleet", "dispatch", "--dry-run"], cwd=tmp_path)
        assert dry.code == 0 and "late: dispatch: overdue by" in dry.out and fake.requests == []
        monkeypatch.setenv("GITMEM_FLEET_DISPATCH_TOKEN", fake.token)
        done = cli(["fleet", "dispatch", "--json"], cwd=tmp_path)
        assert done.code == 0, done.err
        said = json.loads(done.out)
        assert said["calls"] == 4 and said["agents"][0]["done"] == ["dispatched gitmem.yml"]
        assert said["agents"][0]["ref"] == "main" and said["agents"][0]["dispatched"] is True
        assert fake.workflows[("owner/late", "gitmem.yml")].dispatched == [{"ref": "main",
                                                                            "inputs": {"command": "cycle"}}]


def test_the_catch_up_step_without_a_token_lists_the_overdue_agents_and_starts_nothing(tmp_path: Path,
                                                                                      git_env: None) -> None:
    import os
    import subprocess
    import sys

    from ruamel.yaml import YAML

    from tests.support.helpers import make_repo

    late = make_repo(tmp_path / "late")
    shutil.copytree(Path(__file__).resolve().parents[2] / "template-repo" / ".github",
                    late.path / ".github", dirs_exist_ok=True)
    _cycle(late.path, datetime.now(UTC) - timedelta(hours=9))
    (tmp_path / "fleet.yaml").write_text("agents:\n  - name: late\n    repo: late\n    github: owner/late\n",
                                         encoding="utf-8")
    workflow = Path(__file__).resolve().parents[2] / "template-fleet" / ".github" / "workflows" / "fleet.yml"
    steps = {s["name"]: s for s in YAML(typ="safe").load(workflow.read_text(encoding="utf-8"))["jobs"]["fleet"]["steps"]
             if "name" in s}
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
           "RUNNER_TEMP": str(tmp_path), "GITHUB_STEP_SUMMARY": str(tmp_path / "summary"),
           "GITMEM_FLEET_DISPATCH_TOKEN": ""}
    done = subprocess.run(["bash", "-eo", "pipefail", "-c", steps["Catch up on missed cycles"]["run"]], cwd=tmp_path,
                          env=env, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    assert "overdue agents are listed, not started" in done.stdout and "late: dispatch: overdue by" in done.stdout
    assert "(dry run: none made)" in done.stdout


def test_an_agent_over_its_own_daily_cap_is_over_budget_and_not_dispatched(tmp_path: Path, git_env: None) -> None:
    """The agent's own `cycle.tokens_per_day` (its gitmem.yaml) stops its cycles (exit 3, GM750): its schedule
    looks dropped, and a dispatched cycle would only refuse again, a failed run every pass. The fleet reads
    that cap as well as fleet.yaml's."""
    from tests.support.helpers import make_repo

    late = make_repo(tmp_path / "late")
    shutil.copytree(Path(__file__).resolve().parents[2] / "template-repo" / ".github",
                    late.path / ".github", dirs_exist_ok=True)
    capped = late.read("gitmem.yaml").replace("\ncycle:\n", "\ncycle:\n  tokens_per_day: 1000\n", 1)
    late.commit_files({"gitmem.yaml": capped}, "a daily cap")
    now = datetime.now(UTC)
    moment = max(now - timedelta(hours=5), datetime.combine(now.date(), time(0, 1), tzinfo=UTC))
    _cycle(late.path, moment, evidence="tokens: input 1500, output 500, total 2000")
    (tmp_path / "fleet.yaml").write_text("agents:\n  - name: late\n    repo: late\n    github: owner/late\n"
                                         "    stall_after: 2h\n", encoding="utf-8")
    fleet = load_fleet(tmp_path / "fleet.yaml")
    view = read_fleet(fleet, clock=lambda: max(now, moment + timedelta(hours=2, minutes=5)))
    step = plan_dispatch(fleet, view)[0]
    assert "2000 tokens today, over 1000" in view.rows[0].over_budget
    assert step.decision == SKIP and "over its budget" in step.why


@pytest.mark.parametrize("branch", ["", "    branch: gitmem/memory\n"])
def test_a_dispatch_runs_on_the_default_branch_where_the_schedule_runs(tmp_path: Path, git_env: None, branch: str,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """GitHub runs scheduled workflows on the default branch, so a catch-up cycle starts there, asked of GitHub
    (`GET /repos/{owner}/{repo}`): a URL's copy holds its remote's HEAD and never learns its name (guessing
    `main` fails, HTTP 422, on a `master` or `trunk` repository), and fleet.yaml's `branch:` is where memory is
    read, in pull-request mode the memory branch, onto which a cycle would open its pull request."""
    from tests.support.helpers import make_repo

    late = make_repo(tmp_path / "late")
    git(late.path, "branch", "-m", "trunk")
    shutil.copytree(Path(__file__).resolve().parents[2] / "template-repo" / ".github",
                    late.path / ".github", dirs_exist_ok=True)
    _cycle(late.path, datetime.now(UTC) - timedelta(hours=9))
    git(late.path, "branch", "gitmem/memory")
    (tmp_path / "fleet.yaml").write_text(f"agents:\n  - name: late\n    repo: {late.path.as_uri()}\n"
                                         f"    github: owner/late\n{branch}", encoding="utf-8")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    fleet = load_fleet(tmp_path / "fleet.yaml")
    view = read_fleet(fleet)
    with FakeActions() as fake:
        fake.add("owner/late")
        fake.default_branches["owner/late"] = "trunk"
        done = dispatch_overdue(fleet, view, dry_run=False,
                                environ={"GITHUB_API_URL": fake.url, "GITMEM_FLEET_DISPATCH_TOKEN": fake.token})
        dispatched = fake.workflows[("owner/late", "gitmem.yml")].dispatched
    assert not done.failed, done.steps
    assert [body["ref"] for body in dispatched] == ["trunk"]
    assert done.steps[0].ref == "trunk" and done.calls == len(fake.requests) == 4


def test_a_copy_whose_last_fetch_failed_is_not_read_offline_nor_dispatched(tmp_path: Path, git_env: None,
                                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """The fleet workflow fetches in its report step and reads the copies `--offline` after it (the summary, the
    catch-up). When a fetch fails (an expired read token, a renamed repository) the copy is the last good one,
    hours or runs old: read offline it looks overdue and the catch-up would start a cycle each pass for an agent
    whose own schedule may be running fine. It is unreadable offline too, until a fetch succeeds."""
    from tests.support.helpers import make_repo

    agent = make_repo(tmp_path / "agent")
    shutil.copytree(Path(__file__).resolve().parents[2] / "template-repo" / ".github",
                    agent.path / ".github", dirs_exist_ok=True)
    _cycle(agent.path, datetime.now(UTC) - timedelta(hours=9))
    (tmp_path / "fleet.yaml").write_text(f"agents:\n  - name: far\n    repo: {agent.path.as_uri()}\n"
                                         "    github: owner/far\n", encoding="utf-8")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    fleet = load_fleet(tmp_path / "fleet.yaml")
    assert read_fleet(fleet).rows[0].verdict != "unreadable"
    assert plan_dispatch(fleet, read_fleet(fleet, offline=True))[0].decision == DISPATCH
    agent.path.rename(tmp_path / "moved")
    assert read_fleet(fleet).rows[0].verdict == "unreadable"
    offline = read_fleet(fleet, offline=True)
    assert offline.rows[0].verdict == "unreadable" and "last fetch" in (offline.rows[0].error or "")
    assert plan_dispatch(fleet, offline)[0].decision == SKIP
    (tmp_path / "moved").rename(agent.path)
    assert read_fleet(fleet).rows[0].verdict != "unreadable"
    assert read_fleet(fleet, offline=True).rows[0].verdict != "unreadable"


def test_a_last_cycle_dated_ahead_of_the_clock_is_not_ok_and_comes_before_the_healthy_ones(
        tmp_path: Path, git_env: None, cli) -> None:
    """A cycle written by a clock 40 days fast (a human's laptop, a runner with a wrong clock) would read as
    "0h ago, ok" for 40 days: no stall could be seen however long the schedule stays dead. The fleet says
    the clock is ahead, as `gitmem status` warns in the agent itself, and ranks it above the agents that
    are fine."""
    from tests.support.helpers import make_repo

    now = datetime.now(UTC)
    for name, moment in (("fine", now - timedelta(minutes=30)), ("fast", now + timedelta(days=40))):
        agent = make_repo(tmp_path / name)
        shutil.copytree(Path(__file__).resolve().parents[2] / "template-repo" / ".github",
                        agent.path / ".github", dirs_exist_ok=True)
        _cycle(agent.path, moment)
    (tmp_path / "fleet.yaml").write_text("agents:\n  - name: fine\n    repo: fine\n  - name: fast\n    repo: fast\n",
                                         encoding="utf-8")
    view = read_fleet(load_fleet(tmp_path / "fleet.yaml"), clock=lambda: now)
    rows = {row.agent: row for row in view.rows}
    assert rows["fine"].verdict == "ok"
    assert rows["fast"].verdict == "clock ahead", rows["fast"].why
    assert re.search(r"dated (39d 23h|40d 0h) ahead of this clock", rows["fast"].why), rows["fast"].why
    for public in ([], ["--public"]):
        shown = cli(["fleet", "status", *public], cwd=tmp_path)
        lines = shown.out.splitlines()
        assert "2 agents: 1 clock ahead, 1 ok" in lines[0], shown.out
        assert lines.index(next(line for line in lines if line.startswith("fast"))) < \
            lines.index(next(line for line in lines if line.startswith("fine")))
        assert "clock ahead" in next(line for line in lines if line.startswith("fast"))


def test_a_workflow_two_agents_share_is_started_once_a_pass(tmp_path: Path, git_env: None) -> None:
    """fleet.yaml may name one GitHub repository for several entries (a workspace each, or clones of it read in
    place): all are overdue when its schedule stops, and they share its workflow. GitHub answers a dispatch
    before it creates the run, so the second agent's look at the runs finds none: the old pass dispatched again,
    and a second cycle queued behind the first. The workflow is now reached once a pass, by the first agent, and
    the others say so."""
    from tests.support.helpers import make_repo

    late = make_repo(tmp_path / "late")
    shutil.copytree(Path(__file__).resolve().parents[2] / "template-repo" / ".github",
                    late.path / ".github", dirs_exist_ok=True)
    _cycle(late.path, datetime.now(UTC) - timedelta(hours=9))
    for clone in ("late-b", "late-c"):       # one repository twice is one agent twice (GM932): clones of it
        shutil.copytree(late.path, tmp_path / clone, symlinks=True)
    (tmp_path / "fleet.yaml").write_text(
        "agents:\n"
        "  - name: late-a\n    repo: late\n    github: owner/late\n"
        "  - name: late-b\n    repo: late-b\n    github: owner/late\n"
        "  - name: late-c\n    repo: late-c\n    github: Owner/Late\n", encoding="utf-8")
    fleet = load_fleet(tmp_path / "fleet.yaml")
    view = read_fleet(fleet)
    with FakeActions() as fake:
        flow = fake.add("owner/late", run_shows_at_once=False)
        done = dispatch_overdue(fleet, view, dry_run=False,
                                environ={"GITHUB_API_URL": fake.url, "GITMEM_FLEET_DISPATCH_TOKEN": fake.token})
    assert [step.decision for step in done.steps] == [DISPATCH] * 3
    assert not done.failed, done.steps
    assert flow.dispatched == [{"ref": "main", "inputs": {"command": "cycle"}}]
    assert [step.dispatched for step in done.steps] == [True, False, False]
    for step in done.steps[1:]:
        assert step.done == ["not dispatched: gitmem.yml is also late-a's, caught up once a pass (see its line)"]
        assert step.calls == 0
    assert done.calls == len(fake.requests) == 4


def test_a_short_stall_after_is_said_in_minutes_and_a_stalled_agent_not_yet_overdue_is_not_on_schedule(
        tmp_path: Path, git_env: None) -> None:
    """`stall_after: 10m` and a last cycle 25 minutes old: the row said "last cycle by the runner 0h ago, over
    0h", and the catch-up, which waits for the interval (half of stall_after) and an hour, said "its cycles are on
    schedule" of the agent the status calls stalled. Both now say what holds."""
    from tests.support.helpers import make_repo

    quick = make_repo(tmp_path / "quick")
    moment = datetime.now(UTC).replace(second=0, microsecond=0) - timedelta(hours=1)     # LOG holds minutes
    _cycle(quick.path, moment)
    (tmp_path / "fleet.yaml").write_text("agents:\n  - name: quick\n    repo: quick\n    github: owner/quick\n"
                                         "    stall_after: 10m\n", encoding="utf-8")
    fleet = load_fleet(tmp_path / "fleet.yaml")
    view = read_fleet(fleet, clock=lambda: moment + timedelta(minutes=25))
    row = view.rows[0]
    assert row.verdict == "stalled"
    assert row.why == "last cycle by the runner 25 min ago, over 10 min (stall_after)"
    step = plan_dispatch(fleet, view)[0]
    assert step.decision == WAIT and step.why.startswith("stalled, but not overdue yet")
    later = read_fleet(fleet, clock=lambda: moment + timedelta(minutes=66))
    assert plan_dispatch(fleet, later)[0].decision == DISPATCH
