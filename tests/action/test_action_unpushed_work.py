"""Exit 6 under the Action: the push failed and nothing reached origin, and the runner's disk, the only place
the cycle's work was, is thrown away when the job ends. The Run step bundles every branch origin does not hold,
and a step of the action keeps the bundle as the run's artifact; the job summary says how to bring it back."""
from __future__ import annotations

from pathlib import Path

from tests.action.test_action_pr_mode import INSTALL, fresh_checkout, origin  # noqa: F401  (the fixture)
from tests.support.action_support import ROOT as ACTION_ROOT
from tests.support.action_support import load_yaml, origin_log, project_bin, run_action
from tests.support.gitcli import git


def test_a_push_that_fails_for_good_keeps_the_work_as_an_artifact_it_can_be_fetched_from(
        tmp_path: Path, origin: Path) -> None:  # noqa: F811
    runner = fresh_checkout(origin, tmp_path / "runner")
    git(runner, "remote", "set-url", "--push", "origin", str(tmp_path / "unreachable.git"))
    run = run_action(runner, {"command": "cycle"}, bin_dir=project_bin(), scratch=tmp_path / "scratch", skip=INSTALL,
                     env={"GITHUB_REPOSITORY": "owner/agent", "GITHUB_REF_NAME": "main", "GITHUB_RUN_ID": "77",
                          "GITHUB_RUN_ATTEMPT": "2"})
    assert run.steps[-1].code == 6, run.describe()
    assert run.outputs["push"] == "failed" and origin_log(origin) == ["agent repository from gitmem init"]
    bundle = Path(run.outputs["unpushed-bundle"])
    assert bundle.name == "gitmem-unpushed-77-2.bundle" and bundle.is_file()
    assert "the artifact `gitmem-unpushed-77-2.bundle` of this run" in run.summary

    # The human, with nothing but the artifact: the cycle's commit comes back and can be pushed.
    human = fresh_checkout(origin, tmp_path / "human")
    git(human, "fetch", "-q", str(bundle), "refs/heads/*:refs/remotes/unpushed/*")
    assert git(human, "log", "-1", "--format=%s", "unpushed/main").strip() == \
        "gitmem: cycle 1 · built · write notes/one.md"

    step = next(s for s in load_yaml(ACTION_ROOT / "action.yml")["runs"]["steps"]
                if s.get("name") == "Keep the unpushed work")
    assert step["uses"].startswith("actions/upload-artifact@")
    assert step["if"] == "failure() && steps.run.outputs.unpushed-bundle != ''"
    assert step["with"]["path"] == "${{ steps.run.outputs.unpushed-bundle }}"

