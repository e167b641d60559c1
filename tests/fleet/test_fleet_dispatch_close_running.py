"""`gitmem fleet dispatch` starts nothing while a cycle of the agent's workflow is queued or in progress. The
template's workflow (template-repo/.github/workflows/gitmem.yml) runs its cycles, its daily close and its
checks as runs of one workflow, each in a job of its own, and the close and the cycle have concurrency groups
of their own: a close running is no cycle in progress, and an overdue agent gets its catch-up beside it. The
old pass counted every unfinished run as a cycle, so the agent waited one more pass (two hours, in the fleet
template) whenever its close was running. A run whose jobs GitHub does not list yet still counts: never two
cycles at once."""
from __future__ import annotations

import shutil
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from ruamel.yaml import YAML

from gitmem.fleet.dispatch import NOT_CYCLE_JOBS, dispatch_overdue
from gitmem.fleet.fleetfile import load_fleet
from gitmem.fleet.parallel import read_fleet
from gitmem.memory_writer import MemoryWriter
from gitmem.workspace import Workspace
from tests.support.fake_actions import TEMPLATE_JOBS, FakeActions
from tests.support.gitcli import git
from tests.support.helpers import make_repo

TEMPLATE = Path(__file__).resolve().parents[2] / "template-repo"


@pytest.mark.parametrize(("runs", "dispatched", "calls"), [
    (["completed", "in_progress close"], True, 5),       # state, runs, the close's jobs, default branch, dispatch
    (["queued close"], True, 5),                         # the close waiting for its runner
    (["in_progress check"], True, 5),                    # a human's `gitmem check`: read-only
    (["in_progress close", "in_progress check"], True, 6),
    (["in_progress"], False, 3),                         # a cycle: state, runs, its jobs
    (["in_progress close", "queued"], False, 3),         # a cycle queued beside a close: its jobs are enough
    (["queued unlisted"], False, 3),                     # jobs not made yet: it may be a cycle
    (["in_progress anonymous"], False, 2),               # no id to ask its jobs by: it may be a cycle
    (["queued"] * 4, False, 2),                          # more runs waiting than are looked at, one by one
])
def test_a_running_close_is_no_cycle_in_progress(tmp_path: Path, git_env: None, runs: list[str], dispatched: bool,
                                                 calls: int) -> None:
    late = make_repo(tmp_path / "late")
    shutil.copytree(TEMPLATE / ".github", late.path / ".github", dirs_exist_ok=True)
    MemoryWriter(Workspace.at(late.path), clock=lambda: datetime.now(UTC) - timedelta(hours=9)).add_log_entry(
        task="keep going", outcome="built", result="done")      # GitHub dropped the last three scheduled runs
    git(late.path, "commit", "-qam", "a cycle")
    (tmp_path / "fleet.yaml").write_text("agents:\n  - name: late\n    repo: late\n    github: owner/late\n",
                                         encoding="utf-8")
    fleet = load_fleet(tmp_path / "fleet.yaml")
    with FakeActions() as fake:
        flow = fake.add("owner/late", runs=list(runs))
        done = dispatch_overdue(fleet, read_fleet(fleet), dry_run=False,
                                environ={"GITHUB_API_URL": fake.url, "GITMEM_FLEET_DISPATCH_TOKEN": fake.token})
    step = done.steps[0]
    assert not done.failed, step
    assert step.dispatched is dispatched and len(flow.dispatched) == int(dispatched), step
    assert step.calls == len(fake.requests) == calls, fake.requests
    if dispatched:
        assert step.done[-1] == "dispatched gitmem.yml"
        assert step.done[0] == "the close or a check is queued or in progress, not a cycle: one runs beside it"
    else:
        assert len(step.done) == 1 and step.done[0].startswith("not dispatched: "), step.done
        assert step.done[0].endswith("still queued or in progress"), step.done


def test_the_jobs_told_from_a_cycle_are_the_template_s_close_and_check() -> None:
    """The names the pass knows are the ones the template's workflow gives its jobs (the jobs API names a job by
    its `name:`, else by its id): renaming one there without here would make the close a cycle again."""
    jobs = YAML(typ="safe").load((TEMPLATE / ".github" / "workflows" / "gitmem.yml").read_text("utf-8"))["jobs"]
    named = {key: job.get("name", key) for key, job in jobs.items()}
    assert named == TEMPLATE_JOBS
    assert {named["close"], named["check"], "close", "check"} == set(NOT_CYCLE_JOBS)
    assert named["cycle"] not in NOT_CYCLE_JOBS
