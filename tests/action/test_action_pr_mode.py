"""Pull-request mode against a fake GitHub REST API on loopback and a bare origin.

Each run is the action's own run step (push-mode: pull-request) in a fresh clone of origin, as on a runner:
`gitmem github prepare`, the cycle, `gitmem github pr`. The dev install stands in for the install step.
"""
from __future__ import annotations

import subprocess
from datetime import UTC
from pathlib import Path

import pytest

from gitmem.memory import log
from tests.support.action_support import agent_repo, clean_env, origin_file, origin_log, project_bin, run_action
from tests.support.fake_github import FakeGitHub
from tests.support.gitcli import git, isolated_env, protect_branches, run_git
from tests.support.helpers import HUMAN, fill_in_rules

INSTALL = ("Install gitmem from this action's own checkout", "Install the agent sandbox")
SCRIPT = """\
cycles:
  1:
    - tool: write_file
      input: {path: notes/one.md, content: "one\\n"}
    - tool: ask_decision
      input: {title: Which license?, recommendation: "MIT, like the tools it builds on"}
    - tool: log_entry
      input: {task: write notes/one.md, outcome: built, result: notes/one.md exists}
    - tool: now_block
      input: {did: wrote notes/one.md, human: answer D-0001, next: notes/two.md}
  default:
    - tool: write_file
      input: {path: "notes/cycle-{{cycle}}.md", content: "cycle {{cycle}}\\n"}
    - tool: log_entry
      input: {task: "write notes/cycle-{{cycle}}.md", outcome: built, result: the note exists}
    - tool: now_block
      input: {did: wrote a note, human: nothing, next: another note}
"""


@pytest.fixture
def origin(tmp_path: Path) -> Path:
    script = tmp_path / "script.yaml"
    script.write_text(SCRIPT, encoding="utf-8")
    agent_repo(tmp_path / "first", tmp_path / "origin.git", script=script)
    return tmp_path / "origin.git"


def fresh_checkout(origin: Path, path: Path) -> Path:
    """What actions/checkout leaves: a clone of origin on main, with every branch fetched."""
    git(origin.parent, "clone", "-q", str(origin), str(path))
    return path


def pr_run(workspace: Path, fake: FakeGitHub, scratch: Path, command: str = "cycle"):
    return run_action(workspace, {"command": command, "push-mode": "pull-request"}, bin_dir=project_bin(),
                      scratch=scratch, token=fake.token, skip=INSTALL,
                      env={"GITHUB_API_URL": fake.url, "GITHUB_REPOSITORY": fake.repository,
                           "GITHUB_REF_NAME": "main"})


def test_the_first_run_opens_a_pr_and_the_second_updates_it(tmp_path: Path, origin: Path) -> None:
    main_before = git(origin, "rev-parse", "main").strip()
    with FakeGitHub() as fake:
        first = pr_run(fresh_checkout(origin, tmp_path / "run1"), fake, tmp_path / "runner1")
        assert first.ok, first.describe()
        assert len(fake.pulls) == 1
        pull = dict(fake.pulls[0])
        second = pr_run(fresh_checkout(origin, tmp_path / "run2"), fake, tmp_path / "runner2")
        assert second.ok, second.describe()

    assert pull["head"] == "gitmem/memory" and pull["base"] == "main"
    assert pull["title"] == "gitmem: cycle 1 · built · write notes/one.md"
    assert "### Decisions waiting (1)" in pull["body"] and "**D-0001** Which license?" in pull["body"]
    assert "recommends: MIT, like the tools it builds on" in pull["body"]
    assert first.outputs["pr"] == "1" and first.outputs["pr-url"] == pull["html_url"]
    assert (first.outputs["cycle"], first.outputs["outcome"]) == ("1", "built")
    assert f"- Pull request: [#1]({pull['html_url']}) opened" in first.summary

    # The second run continued the open PR's branch: no second PR, the same one updated.
    assert len(fake.pulls) == 1
    # run 1: is there an open PR? no: open one. run 2: prepare asks whether the branch's PR is still open
    # (it is: continue it), then the PR step finds it and updates it.
    # Each PR step ends by posting the branch's verification on the PR head.
    assert [method for method, _, _ in fake.requests] == ["GET", "POST", "POST", "GET", "GET", "PATCH", "POST"]
    assert fake.pulls[0]["title"] == "gitmem: cycle 2 · built · write notes/cycle-2.md"
    assert "### Commits (2)" in fake.pulls[0]["body"]
    assert second.outputs["pr"] == "1" and second.outputs["cycle"] == "2"
    # A PR opened with the workflow's token runs no workflow: its required check is the action's own status.
    for run, commits in ((first, 1), (second, 2)):
        [status] = fake.statuses[run.outputs["commit"]]
        assert (status["context"], status["state"]) == ("Verify memory history", "success")
        assert status["description"].startswith(f"{commits} commit(s) verified")
    assert "- Check `Verify memory history`: success" in second.summary
    assert "updated" in second.summary
    assert origin_log(origin, "gitmem/memory") == [
        "gitmem: cycle 2 · built · write notes/cycle-2.md", "gitmem: cycle 1 · built · write notes/one.md",
        "agent repository from gitmem init"]
    assert origin_file(origin, "gitmem/memory", "notes/one.md") == "one\n"
    assert git(origin, "rev-parse", "main").strip() == main_before, "pull-request mode never pushes main"


def test_after_the_pr_is_merged_the_next_run_opens_a_new_one(tmp_path: Path, origin: Path) -> None:
    with FakeGitHub() as fake:
        assert pr_run(fresh_checkout(origin, tmp_path / "run1"), fake, tmp_path / "runner1").ok
        # The human merges PR #1 (a fast-forward here) and GitHub closes it.
        git(origin, "update-ref", "refs/heads/main", "refs/heads/gitmem/memory")
        fake.pulls[0]["state"] = "closed"
        third = pr_run(fresh_checkout(origin, tmp_path / "run2"), fake, tmp_path / "runner2")
    assert third.ok, third.describe()
    assert len(fake.pulls) == 2 and fake.pulls[1]["state"] == "open"
    assert third.outputs["pr"] == "2"
    assert "### Commits (1)" in fake.pulls[1]["body"]
    assert origin_log(origin, "gitmem/memory")[:2] == ["gitmem: cycle 2 · built · write notes/cycle-2.md",
                                                      "gitmem: cycle 1 · built · write notes/one.md"]


def test_after_a_squash_merge_the_old_branch_is_left_alone_and_a_new_one_continues(tmp_path: Path,
                                                                                  origin: Path) -> None:
    with FakeGitHub() as fake:
        assert pr_run(fresh_checkout(origin, tmp_path / "run1"), fake, tmp_path / "runner1").ok
        human = fresh_checkout(origin, tmp_path / "human")
        git(human, "merge", "-q", "--squash", "origin/gitmem/memory")
        git(human, "commit", "-q", "-m", "Memory from gitmem (#1)")
        git(human, "push", "-q", "origin", "main")
        fake.pulls[0]["state"] = "closed"
        old_branch = git(origin, "rev-parse", "gitmem/memory").strip()
        second = pr_run(fresh_checkout(origin, tmp_path / "run2"), fake, tmp_path / "runner2")
        assert second.ok, second.describe()
        assert [p["head"] for p in fake.pulls] == ["gitmem/memory", "gitmem/memory-2"]
        third = pr_run(fresh_checkout(origin, tmp_path / "run3"), fake, tmp_path / "runner3")
    assert third.ok, third.describe()
    assert "on gitmem/memory-2" in third.steps[-1].out and "continuing" in third.steps[-1].out
    assert len(fake.pulls) == 2 and (second.outputs["pr"], third.outputs["pr"]) == ("2", "2")
    assert fake.pulls[1]["title"] == "gitmem: cycle 3 · built · write notes/cycle-3.md"
    assert "### Commits (2)" in fake.pulls[1]["body"]
    assert origin_log(origin, "gitmem/memory-2")[:3] == ["gitmem: cycle 3 · built · write notes/cycle-3.md",
                                                        "gitmem: cycle 2 · built · write notes/cycle-2.md",
                                                        "Memory from gitmem (#1)"]
    assert git(origin, "rev-parse", "gitmem/memory").strip() == old_branch, "never rewritten or deleted"


def test_the_close_goes_to_the_same_pr(tmp_path: Path, origin: Path) -> None:
    with FakeGitHub() as fake:
        assert pr_run(fresh_checkout(origin, tmp_path / "run1"), fake, tmp_path / "runner1").ok
        closed = run_action(fresh_checkout(origin, tmp_path / "run2"),
                            {"command": "close", "push-mode": "pull-request", "args": "--no-llm"},
                            bin_dir=project_bin(), scratch=tmp_path / "runner2", token=fake.token, skip=INSTALL,
                            env={"GITHUB_API_URL": fake.url, "GITHUB_REPOSITORY": fake.repository})
    assert closed.ok, closed.describe()
    assert len(fake.pulls) == 1
    assert fake.pulls[0]["title"].startswith("gitmem: close ")
    assert origin_log(origin, "gitmem/memory")[0].startswith("gitmem: close ")


def test_a_failed_cycle_publishes_its_no_build_entry_and_its_salvaged_work(tmp_path: Path, origin: Path) -> None:
    workspace = fresh_checkout(origin, tmp_path / "run")
    (workspace / "gitmem-script.yaml").write_text(
        "cycles:\n  1:\n    - tool: write_file\n      input: {path: half.md, content: \"half done\\n\"}\n"
        "    - crash: the model API went away\n", encoding="utf-8")
    git(workspace, "commit", "-q", "-am", "a crashing script")
    git(workspace, "push", "-q", "origin", "main")
    with FakeGitHub() as fake:
        run = pr_run(workspace, fake, tmp_path / "runner")
    assert run.steps[-1].code == 4, run.describe()
    assert (run.outputs["cycle"], run.outputs["outcome"], run.outputs["pr"]) == ("1", "no-build", "1")
    assert origin_log(origin, "gitmem/memory")[0].startswith("gitmem: cycle 1 · no-build")
    assert origin_file(origin, "gitmem/salvage/cycle-1", "half.md") == "half done\n"
    assert "the model API went away" in fake.pulls[0]["body"]


def _cli(workspace: Path, *args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(project_bin() / "gitmem"), *args], cwd=workspace, env=env, capture_output=True,
                          text=True)


def test_nothing_to_propose_opens_no_pr(tmp_path: Path, origin: Path) -> None:
    workspace = fresh_checkout(origin, tmp_path / "run")
    with FakeGitHub() as fake:
        env = {**clean_env(project_bin(), tmp_path), "GITHUB_API_URL": fake.url,
               "GITHUB_REPOSITORY": fake.repository, "GITHUB_TOKEN": fake.token}
        assert _cli(workspace, "github", "prepare", env=env).returncode == 0
        done = _cli(workspace, "github", "pr", "--phase", "close", env=env)
    assert done.returncode == 0, done.stderr
    assert "nothing to propose" in done.stdout
    assert fake.requests == []


def test_an_api_failure_keeps_the_commits_on_the_branch_and_never_shows_the_token(tmp_path: Path,
                                                                                    origin: Path) -> None:
    workspace = fresh_checkout(origin, tmp_path / "run")
    secret = "ghs_" + "x1y2z3" * 6
    with FakeGitHub() as fake:
        env = {**clean_env(project_bin(), tmp_path), "GITHUB_API_URL": fake.url,
               "GITHUB_REPOSITORY": fake.repository, "GITMEM_GIT_TOKEN": secret}
        assert _cli(workspace, "github", "prepare", env=env).returncode == 0
        assert _cli(workspace, "cycle", env=env).returncode == 0
        done = _cli(workspace, "github", "pr", "--phase", "cycle", env=env)
    assert done.returncode == 4
    assert "HTTP 401" in done.stderr and "the commits are on origin/gitmem/memory" in done.stderr
    assert secret not in done.stdout + done.stderr
    assert fake.pulls == []
    assert origin_log(origin, "gitmem/memory")[0] == "gitmem: cycle 1 · built · write notes/one.md"


def test_without_a_repository_the_pr_step_says_what_to_set(tmp_path: Path, origin: Path) -> None:
    workspace = fresh_checkout(origin, tmp_path / "run")
    env = {**clean_env(project_bin(), tmp_path), "GITHUB_TOKEN": "ghs_" + "q" * 36}
    assert _cli(workspace, "github", "prepare", env=env).returncode == 0
    assert _cli(workspace, "cycle", env=env).returncode == 0
    done = _cli(workspace, "github", "pr", "--phase", "cycle", env=env)
    assert done.returncode == 2
    assert "GITHUB_REPOSITORY must be owner/name" in done.stderr
    assert env["GITHUB_TOKEN"] not in done.stderr


def test_prepare_refuses_a_detached_head(tmp_path: Path, origin: Path) -> None:
    workspace = fresh_checkout(origin, tmp_path / "run")
    git(workspace, "checkout", "-q", "--detach")
    done = _cli(workspace, "github", "prepare", env=clean_env(project_bin(), tmp_path))
    assert done.returncode == 2
    assert "detached" in done.stderr and "git switch main" in done.stderr
    assert git(workspace, "branch", "--list", "gitmem/*") == "", "nothing was created"


@pytest.mark.parametrize("branch", ["main", "refs/heads/memory", "-x", "a..b"])
def test_prepare_refuses_a_memory_branch_that_is_the_base_or_no_plain_branch_name(tmp_path: Path, origin: Path,
                                                                                  branch: str) -> None:
    """`--branch main` would have the cycle commit to main itself (what pull-request mode exists to avoid), and
    `--branch refs/heads/memory` made a branch named so: both are refused before anything is switched or made."""
    workspace = fresh_checkout(origin, tmp_path / "run")
    head = git(workspace, "rev-parse", "HEAD")
    done = _cli(workspace, "github", "prepare", f"--branch={branch}", env=clean_env(project_bin(), tmp_path))
    assert done.returncode == 2, done.stdout + done.stderr
    assert "cannot be the memory branch" in done.stderr
    assert git(workspace, "rev-parse", "HEAD") == head
    assert git(workspace, "branch", "--show-current").strip() == "main"
    assert git(workspace, "for-each-ref", "--format=%(refname)", "refs/heads/").split() == ["refs/heads/main"]


def test_the_pr_text_of_a_close_on_a_long_lived_branch() -> None:
    from datetime import datetime

    from gitmem.memory.timestamps import Timestamp
    from gitmem.publish.pullrequest import MAX_COMMITS_LISTED, pr_text

    when = Timestamp.from_datetime(datetime(2026, 11, 30, 23, 47, tzinfo=UTC))
    entry = log.make_entry(when, cycle=None, outcome=None,
                           fields={"Day": "2026-11-30", "Cycles": "8 (6 built, 2 no-build)", "Plan": "ship it"})
    commits = [(f"{n:010d}", f"gitmem: cycle {n}") for n in range(1, MAX_COMMITS_LISTED + 6)]
    title, body = pr_text(log.append_entry("", entry), [], commits, phase="close", branch="gitmem/memory-2",
                          base="main")
    assert title == "gitmem: close 2026-11-30"
    assert "### Latest LOG entry: 2026-11-30 23:47 UTC · close" in body
    assert "- Cycles: 8 (6 built, 2 no-build)" in body and "- Plan: ship it" in body
    assert f"### Commits ({MAX_COMMITS_LISTED + 5})" in body and "- … 5 earlier commit(s)" in body
    assert "gitmem: cycle 5\n" not in body and f"gitmem: cycle {MAX_COMMITS_LISTED + 5}\n" in body
    assert "### Decisions waiting (0)\n\nnone\n" in body
    assert "`gitmem/memory-2`" in body


def test_a_memory_branch_rewritten_upstream_exits_5_as_the_cycle_and_the_close_do(tmp_path: Path,
                                                                                   origin: Path) -> None:
    """`github pr` maps what its push came to through the one push status: a memory branch force-pushed since
    `prepare` saw it is never built on, and exits 5 (history rewritten), not 4."""
    with FakeGitHub() as fake:
        env = {**clean_env(project_bin(), tmp_path), "GITHUB_API_URL": fake.url,
               "GITHUB_REPOSITORY": fake.repository, "GITHUB_TOKEN": fake.token}
        first = fresh_checkout(origin, tmp_path / "first-run")
        for step in (("github", "prepare"), ("cycle",), ("github", "pr", "--phase", "cycle")):
            assert _cli(first, *step, env=env).returncode == 0
        second = fresh_checkout(origin, tmp_path / "second-run")
        assert _cli(second, "github", "prepare", env=env).returncode == 0
        assert _cli(second, "cycle", env=env).returncode == 0
        # Meanwhile someone force-pushes the memory branch back to main, dropping the first cycle.
        git(origin, "update-ref", "refs/heads/gitmem/memory", git(origin, "rev-parse", "main").strip())
        done = _cli(second, "github", "pr", "--phase", "cycle", env=env)
    assert done.returncode == 5, done.stderr
    assert "refused to push" in done.stderr and "the push did not land" in done.stderr
    assert git(origin, "rev-parse", "gitmem/memory").strip() == git(origin, "rev-parse", "main").strip()


def test_a_token_without_statuses_write_fails_the_pr_step_and_says_which_permission(tmp_path: Path,
                                                                                  origin: Path) -> None:
    workspace = fresh_checkout(origin, tmp_path / "run")
    with FakeGitHub() as fake:
        fake.forbid_statuses = True
        run = pr_run(workspace, fake, tmp_path / "runner")
    assert run.steps[-1].code == 4, run.describe()
    assert len(fake.pulls) == 1, "the PR is open; only its check could not be reported"
    assert "HTTP 403" in run.steps[-1].err and "permissions: statuses: write" in run.steps[-1].err
    # The job summary, where people look first, names the missing permission too.
    assert "not reported" in run.summary and "To fix: the workflow needs `permissions: statuses: write`" in run.summary


def test_a_memory_branch_that_fails_verification_is_reported_as_a_failed_check(tmp_path: Path,
                                                                               origin: Path) -> None:
    """The status is the branch's real verdict: a commit on the memory branch that rewrites LOG fails it."""
    with FakeGitHub() as fake:
        env = {**clean_env(project_bin(), tmp_path), "GITHUB_API_URL": fake.url,
               "GITHUB_REPOSITORY": fake.repository, "GITHUB_TOKEN": fake.token}
        workspace = fresh_checkout(origin, tmp_path / "run")
        assert _cli(workspace, "github", "prepare", env=env).returncode == 0
        assert _cli(workspace, "cycle", env=env).returncode == 0
        text = (workspace / "LOG.md").read_text(encoding="utf-8")
        (workspace / "LOG.md").write_text(text.replace("notes/one.md exists", "nothing happened"), encoding="utf-8")
        git(workspace, "commit", "-q", "-am", "tidy the LOG")
        done = _cli(workspace, "github", "pr", "--phase", "cycle", env=env)
    head = git(workspace, "rev-parse", "HEAD").strip()
    assert done.returncode == 1, done.stderr
    [status] = fake.statuses[head]
    assert (status["context"], status["state"]) == ("Verify memory history", "failure")
    assert "GM" in status["description"] and len(status["description"]) <= 140
    assert "LOG.md:" in done.stderr


def test_a_direct_push_to_a_protected_main_opens_a_pr_for_its_branch(tmp_path: Path, origin: Path) -> None:
    """push-mode: direct against a main that refuses pushes as GitHub's protection does: the cycle's work goes
    to gitmem/cycle-1 with a PR (and its check), the run fails, and the summary names push-mode: pull-request.
    Then the close, likewise, to gitmem/close-DAY."""
    protect_branches(origin, "main")
    main_before = git(origin, "rev-parse", "main").strip()
    with FakeGitHub() as fake:
        env = {"GITHUB_API_URL": fake.url, "GITHUB_REPOSITORY": fake.repository, "GITHUB_REF_NAME": "main"}
        cycle = run_action(fresh_checkout(origin, tmp_path / "run1"), {"command": "cycle"}, bin_dir=project_bin(),
                           scratch=tmp_path / "runner1", token=fake.token, skip=INSTALL, env=env)
        closed = run_action(fresh_checkout(origin, tmp_path / "run2"), {"command": "close", "args": "--no-llm"},
                            bin_dir=project_bin(), scratch=tmp_path / "runner2", token=fake.token, skip=INSTALL,
                            env=env)
    assert cycle.steps[-1].code == 4, cycle.describe()
    assert (cycle.outputs["push"], cycle.outputs["side-branch"]) == ("refused", "gitmem/cycle-1")
    assert git(origin, "rev-parse", "main").strip() == main_before
    assert origin_log(origin, "gitmem/cycle-1")[0] == "gitmem: cycle 1 · built · write notes/one.md"
    pull = fake.pulls[0]
    assert (pull["head"], pull["base"], cycle.outputs["pr"]) == ("gitmem/cycle-1", "main", "1")
    assert fake.statuses[cycle.outputs["commit"]][0]["state"] == "success"
    assert "push-mode: pull-request" in cycle.summary and "**refused**" in cycle.summary
    assert "::warning::" in cycle.steps[-1].out and cycle.steps[-1].err.count("attempt ") == 1

    # A fresh checkout of the protected main has no cycle: the close of the day goes to its own branch.
    assert closed.steps[-1].code == 4, closed.describe()
    side = closed.outputs["side-branch"]
    assert side.startswith("gitmem/close-") and closed.outputs["push"] == "refused"
    assert origin_log(origin, side)[0].startswith("gitmem: close ")
    assert [p["head"] for p in fake.pulls] == ["gitmem/cycle-1", side]
    assert "push-mode: pull-request" in closed.summary


def test_a_session_landed_on_main_while_the_pr_is_open_is_brought_in_so_the_pr_merges_on_github(
        tmp_path: Path, origin: Path) -> None:
    """A human's session reaches main (their own PR, or a push) while the memory PR is open: both took cycle 1.
    The next run brings main into the memory branch by memory rules (main's entries keep their numbers, the
    branch's follow), with a merge commit the branch fast-forwards to, so GitHub merges the PR with no driver."""
    with FakeGitHub() as fake:
        assert pr_run(fresh_checkout(origin, tmp_path / "run1"), fake, tmp_path / "runner1").ok
        human = fresh_checkout(origin, tmp_path / "human")
        env = isolated_env(who=HUMAN)
        for argv in (["log", "add", "--task", "review the notes", "--outcome", "built", "--result", "read"],
                     ["now", "add", "--did", "reviewed the notes", "--human", "nothing", "--next", "more"]):
            subprocess.run([str(project_bin() / "gitmem"), *argv], cwd=human, env=env, check=True,
                           capture_output=True)
        git(human, "commit", "-q", "-am", "session: review the notes")
        git(human, "push", "-q", "origin", "main")
        pushed_before = git(origin, "rev-parse", "gitmem/memory").strip()
        second = pr_run(fresh_checkout(origin, tmp_path / "run2"), fake, tmp_path / "runner2")
        assert second.ok, second.describe()
        assert len(fake.pulls) == 1 and second.outputs["cycle"] == "3"

    # Never forced: the old tip is in the branch. GitHub's merge (no merge driver there) is clean.
    git(origin, "merge-base", "--is-ancestor", pushed_before, "gitmem/memory")
    git(origin, "merge-base", "--is-ancestor", "main", "gitmem/memory")
    merged = run_git(origin, "merge-tree", "--write-tree", "main", "gitmem/memory", env=isolated_env(who=HUMAN),
                     check=False)
    assert merged.returncode == 0, merged.stdout
    entries = log.parse(origin_file(origin, "gitmem/memory", "LOG.md")).entries
    assert [(e.cycle, e.get("Task")) for e in entries] == [
        (1, "review the notes"), (2, "write notes/one.md"), (3, "write notes/cycle-3.md")]
    main_log = origin_file(origin, "main", "LOG.md")
    assert origin_file(origin, "gitmem/memory", "LOG.md").startswith(main_log.rstrip("\n"))   # main's, untouched
    [status] = fake.statuses[second.outputs["commit"]]
    assert status["state"] == "success", status


def test_a_base_that_does_not_merge_by_memory_rules_leaves_the_branch_as_it_was_and_says_so(
        tmp_path: Path, origin: Path) -> None:
    """The human wrote the file the agent wrote, differently: no rule merges it, so the run continues the branch as
    before (the PR needs a human) and says what to run."""
    with FakeGitHub() as fake:
        assert pr_run(fresh_checkout(origin, tmp_path / "run1"), fake, tmp_path / "runner1").ok
        human = fresh_checkout(origin, tmp_path / "human")
        (human / "notes").mkdir()
        (human / "notes" / "one.md").write_text("the human's own\n", encoding="utf-8")
        git(human, "add", "notes/one.md")
        git(human, "commit", "-q", "-m", "notes: mine")
        git(human, "push", "-q", "origin", "main")
        pushed_before = git(origin, "rev-parse", "gitmem/memory").strip()
        second = pr_run(fresh_checkout(origin, tmp_path / "run2"), fake, tmp_path / "runner2")
    assert second.ok, second.describe()
    prepared = next(step for step in second.steps if "github prepare" in step.err or "on gitmem/memory" in step.out)
    assert "continuing it as it is: its PR needs `gitmem merge gitmem/memory` on the base" in prepared.err
    assert git(origin, "rev-parse", "gitmem/memory~1").strip() == pushed_before     # one more cycle, no merge
    assert origin_file(origin, "main", "notes/one.md") == "the human's own\n"


@pytest.mark.parametrize("args", ["--workspace ops", "-wops"])     # -wops: as click reads it (the plan step too)
def test_a_named_workspaces_pr_is_worded_and_pushed_by_that_workspaces_memory(tmp_path: Path, args: str) -> None:
    """`args: --workspace ops` in pull-request mode: the PR step reads and merges the memory the cycle wrote
    (ops/), not the default workspace's, whose LOG holds no cycle and whose DECISIONS asks nothing."""
    script = tmp_path / "script.yaml"
    script.write_text(SCRIPT, encoding="utf-8")
    first = agent_repo(tmp_path / "first", tmp_path / "origin.git", script=script)
    (first / "gitmem.yaml").write_text((first / "gitmem.yaml").read_text(encoding="utf-8")
                                       + "\nworkspaces:\n  ops:\n    memory_dir: ops\n", encoding="utf-8")
    subprocess.run([str(project_bin() / "gitmem"), "init", "."], cwd=first, check=True, capture_output=True)
    fill_in_rules(first / "ops")
    git(first, "add", "-A")
    git(first, "commit", "-q", "-m", "the ops workspace")
    git(first, "push", "-q", "origin", "main")
    origin = tmp_path / "origin.git"
    with FakeGitHub() as fake:
        ran = run_action(fresh_checkout(origin, tmp_path / "run1"),
                         {"command": "cycle", "push-mode": "pull-request", "args": args},
                         bin_dir=project_bin(), scratch=tmp_path / "runner1", token=fake.token, skip=INSTALL,
                         env={"GITHUB_API_URL": fake.url, "GITHUB_REPOSITORY": fake.repository,
                              "GITHUB_REF_NAME": "main"})
    assert ran.ok, ran.describe()
    assert log.parse(origin_file(origin, "gitmem/memory", "ops/LOG.md")).entries[-1].cycle == 1
    [pull] = fake.pulls
    assert pull["title"] == "gitmem: cycle 1 · built · write notes/one.md"
    assert "### Decisions waiting (1)" in pull["body"] and "**D-0001** Which license?" in pull["body"]


def test_a_branch_whose_pr_was_never_opened_is_continued_by_the_next_run(tmp_path: Path, origin: Path) -> None:
    """The first run pushed the memory branch but could not open its PR (the repository setting that lets Actions
    create pull requests was off). Once it is on, the next run continues that branch and proposes both cycles;
    it never starts `gitmem/memory-2` beside it, which would leave the first cycle in no PR."""
    with FakeGitHub() as fake:
        fake.forbid_new_pulls = True
        first = pr_run(fresh_checkout(origin, tmp_path / "run1"), fake, tmp_path / "runner1")
        assert not first.ok and fake.pulls == []
        fake.forbid_new_pulls = False
        second = pr_run(fresh_checkout(origin, tmp_path / "run2"), fake, tmp_path / "runner2")
    assert second.ok, second.describe()
    [pull] = fake.pulls
    assert pull["head"] == "gitmem/memory" and "### Commits (2)" in pull["body"]
    assert second.outputs["cycle"] == "2"
    assert "gitmem/memory-2" not in git(origin, "branch", "--list")
