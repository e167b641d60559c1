"""A schedule's health is judged by the cycles the runner wrote. An interactive session's entry (`- Session:
interactive`: a human, or the human's own agent through the CLI or MCP) is dated by the human's clock and comes
whenever the human works: counted as the last cycle, a session this morning showed an agent whose scheduled
cycles stopped three days ago as "ok" and "on schedule" (never dispatched), and a laptop clock running fast
made the agent "clock ahead". The "last cycle" column still shows the newest entry, the session's."""
from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from gitmem.fleet.dispatch import DISPATCH, WAIT, plan_dispatch
from gitmem.fleet.fleetfile import load_fleet
from gitmem.fleet.parallel import read_fleet
from gitmem.fleet.read import OK, STALLED
from gitmem.memory_writer import MemoryWriter
from gitmem.workspace import Workspace
from tests.support.gitcli import git
from tests.support.helpers import make_repo


def _entry(path: Path, moment: datetime, *, interactive: bool) -> None:
    MemoryWriter(Workspace.at(path), clock=lambda: moment).add_log_entry(
        task="keep going", outcome="built", result="done", interactive=interactive)
    git(path, "commit", "-qam", "an entry")


def test_a_session_since_does_not_hide_a_schedule_that_stopped(tmp_path: Path, git_env: None) -> None:
    now = datetime.now(UTC).replace(microsecond=0)
    agent = make_repo(tmp_path / "agent")
    assert (agent.path / ".github" / "workflows" / "gitmem.yml").is_file()      # the template's schedule
    _entry(agent.path, now - timedelta(days=3), interactive=False)        # the last scheduled cycle
    _entry(agent.path, now - timedelta(minutes=30), interactive=True)     # the human's session this morning
    (tmp_path / "fleet.yaml").write_text("agents:\n  - name: agent\n    repo: agent\n    github: owner/agent\n",
                                         encoding="utf-8")
    fleet = load_fleet(tmp_path / "fleet.yaml")
    view = read_fleet(fleet, clock=lambda: now)
    row = view.rows[0]
    assert row.verdict == STALLED, row.why
    assert "3 d" in row.why or "3d" in row.why or "72h" in row.why, row.why
    assert row.last_cycle is not None and row.last_cycle["cycle"] == 2           # the column: the newest entry
    assert plan_dispatch(fleet, view)[0].decision == DISPATCH


def test_a_session_dated_by_a_fast_laptop_clock_is_not_the_agents_clock_ahead(tmp_path: Path, git_env: None) -> None:
    now = datetime.now(UTC).replace(microsecond=0)
    agent = make_repo(tmp_path / "agent")
    assert (agent.path / ".github" / "workflows" / "gitmem.yml").is_file()      # the template's schedule
    _entry(agent.path, now - timedelta(hours=1), interactive=False)
    _entry(agent.path, now + timedelta(hours=2), interactive=True)
    (tmp_path / "fleet.yaml").write_text("agents:\n  - name: agent\n    repo: agent\n    github: owner/agent\n",
                                         encoding="utf-8")
    fleet = load_fleet(tmp_path / "fleet.yaml")
    view = read_fleet(fleet, clock=lambda: now)
    assert view.rows[0].verdict == OK, view.rows[0].why
    assert plan_dispatch(fleet, view)[0].decision == WAIT


def test_an_agent_with_only_sessions_entries_is_not_said_to_be_on_schedule(tmp_path: Path, git_env: None) -> None:
    agent = make_repo(tmp_path / "agent")
    _entry(agent.path, datetime.now(UTC) - timedelta(hours=1), interactive=True)
    (tmp_path / "fleet.yaml").write_text("agents:\n  - name: agent\n    repo: agent\n    github: owner/agent\n",
                                         encoding="utf-8")
    fleet = load_fleet(tmp_path / "fleet.yaml")
    view = read_fleet(fleet)
    assert view.rows[0].verdict == OK and "judged from the runner's first cycle" in view.rows[0].why
    step = plan_dispatch(fleet, view)[0]
    assert step.decision == WAIT and "no cycle by the runner" in step.why


def test_a_stall_an_agents_daily_cap_caused_says_so() -> None:
    """Over its cap (fleet.yaml's or its own), an agent's cycles refuse to start, and six hours on it is
    stalled: the row says the cap is why, as that is what the human lifts."""
    from gitmem.fleet.read import AgentRow, verdict

    row = AgentRow("agent", "", "agent", "main", last_cycle={"cycle": 4, "age_days": 0.5, "age": "12h"},
                   scheduled_age_days=0.5, interval_seconds=3 * 3600,
                   over_budget="2000 tokens today, over 1000, its own cap in gitmem.yaml")
    judged, why = verdict(row)
    assert judged == STALLED and "over budget (2000 tokens today, over 1000" in why, why
