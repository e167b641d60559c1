"""The fleet's public view and the fleet workflow's privacy: what the agents wrote never reaches a place anyone can
read (GitHub Pages, a public repository's job summary or artifact) unless the repository is private.

The agents are copies of one `gitmem demo` whose memory is full of marked text (decision titles and
recommendations, LOG task lines, a proposal branch, a private remote's URL); the workflow's own step scripts
(template-fleet/.github/workflows/fleet.yml) run with bash against them, and the Pages step pushes to a real
bare repository standing in for GitHub."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from ruamel.yaml import YAML

from gitmem.fleet.fleetfile import load_fleet
from gitmem.fleet.need import by_need, headline
from gitmem.fleet.parallel import read_fleet
from gitmem.fleet.public import public_row
from gitmem.memory_writer import MemoryWriter
from gitmem.scaffold.demo import run_demo
from gitmem.workspace import Workspace
from tests.support.gitcli import git
from tests.support.helpers import fleet_home

ROOT = Path(__file__).resolve().parents[2]
WORKFLOW = ROOT / "template-fleet" / ".github" / "workflows" / "fleet.yml"
BIN = Path(sys.executable).parent
# Every text below is the agents' (or git's) and must never reach a public view.
MARKS = ("Zanzibar licence question", "Quokka recommendation", "gitmem/proposal/cycle-7", "Ship hello.py",
         "hidden-agent.git", "git fetch", "Publish release")


@pytest.fixture(scope="module")
def fleet_root(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    with pytest.MonkeyPatch.context() as patch:
        root = fleet_home(patch, tmp_path_factory, "public-fleet")
        demo = run_demo(root / "demo").path
        moment = datetime.now(UTC) - timedelta(hours=1)
        for name in ("alpha", "beta", "calm"):
            shutil.copytree(demo, root / name, symlinks=True)
        for name in ("alpha", "beta"):
            MemoryWriter(Workspace.at(root / name), clock=lambda: moment).ask_decision(
                title="Zanzibar licence question", recommendation="Quokka recommendation")
            git(root / name, "commit", "-qam", "a decision")
        git(root / "beta", "branch", "gitmem/proposal/cycle-7")
        (root / "fleet.yaml").write_text(
            "agents:\n  - name: calm\n    repo: calm\n  - name: alpha\n    repo: alpha\n"
            "  - name: beta\n    repo: beta\n"
            f"  - name: hidden\n    repo: {(root / 'hidden-agent.git').as_uri()}\n", encoding="utf-8")
        yield root


def _no_mark(text: str, where: str) -> None:
    found = [mark for mark in MARKS if mark in text]
    assert found == [], f"{where} carries {found}"


def _tree_text(top: Path) -> dict[str, str]:
    return {str(path.relative_to(top)): path.read_text(encoding="utf-8", errors="replace")
            for path in sorted(top.rglob("*")) if path.is_file() and ".git" not in path.relative_to(top).parts}


def test_the_full_view_has_the_marks_so_the_public_checks_below_mean_something(fleet_root: Path, cli) -> None:
    done = cli(["fleet", "status"], cwd=fleet_root)
    pending = cli(["fleet", "pending"], cwd=fleet_root)
    assert "gitmem/proposal/cycle-7" in done.out and "hidden-agent.git" in done.err + done.out
    assert "Zanzibar licence question" in pending.out and "Quokka recommendation" in pending.out


def test_the_public_page_pending_and_status_carry_verdicts_and_counts_and_no_word_of_memory(
        fleet_root: Path, cli) -> None:
    done = cli(["fleet", "report", "--public", "--out", "site/index.html"], cwd=fleet_root)
    assert done.code == 2 and "0 agent page(s); public view" in done.out
    tree = _tree_text(fleet_root / "site")
    assert list(tree) == ["index.html"]                       # no agent's own report is written
    _no_mark(tree["index.html"], "the public page")
    assert "4 agents: 1 unreadable, 2 waiting on you, 1 ok" in tree["index.html"]
    assert "verdicts and counts only" in tree["index.html"]
    for argv in (["fleet", "pending", "--public"], ["fleet", "pending", "--public", "--json"],
                 ["fleet", "status", "--public"], ["fleet", "status", "--public", "--json"]):
        said = cli(argv, cwd=fleet_root)
        _no_mark(said.out, " ".join(argv))
    counts = json.loads(cli(["fleet", "pending", "--public", "--json"], cwd=fleet_root).out)["waiting"]
    assert counts == {"alpha": 1, "beta": 1}
    rows = json.loads(cli(["fleet", "status", "--public", "--json"], cwd=fleet_root).out)["agents"]
    beta = next(row for row in rows if row["label"] == "beta")
    assert beta["waiting_branches"] == 1 and beta["pending"] == 1 and beta["verdict"] == "waiting on you"


def test_a_public_page_is_never_written_beside_the_agent_pages_a_full_report_left(fleet_root: Path, cli) -> None:
    """`fleet report` then `fleet report --public` to the same folder would leave the agents' own pages, which
    quote their memory, beside the public page: whoever publishes that folder publishes them too."""
    full = cli(["fleet", "report", "--out", "both/index.html"], cwd=fleet_root)
    assert full.code == 2 and (fleet_root / "both" / "agents").is_dir()
    page = (fleet_root / "both" / "index.html").read_bytes()
    refused = cli(["fleet", "report", "--public", "--out", "both/index.html"], cwd=fleet_root)
    assert refused.code == 2 and "holds agents' own pages" in refused.err, refused.err
    assert (fleet_root / "both" / "index.html").read_bytes() == page        # nothing written
    (fleet_root / "fleet-pages.yaml").write_text((fleet_root / "fleet.yaml").read_text(encoding="utf-8")
                                                  + "pages: public\n", encoding="utf-8")
    refused = cli(["fleet", "pages", "--fleet", "fleet-pages.yaml", "--out", "both/index.html"], cwd=fleet_root)
    assert refused.code == 2 and "holds agents' own pages" in refused.err, refused.err
    assert (fleet_root / "both" / "index.html").read_bytes() == page


def test_rows_come_most_urgent_first_and_a_pending_decision_is_not_ok(fleet_root: Path) -> None:
    view = read_fleet(load_fleet(fleet_root / "fleet.yaml"))
    ordered = [row.label for row in by_need(view.rows)]
    assert ordered[0] == "hidden" and ordered[-1] == "calm"
    assert {row.label: row.verdict for row in view.rows} == {
        "calm": "ok", "alpha": "waiting on you", "beta": "waiting on you", "hidden": "unreadable"}
    assert headline(view.rows) == "4 agents: 1 unreadable, 2 waiting on you, 1 ok"
    assert public_row(view.rows[-1]).verdict == "unreadable"


def _steps() -> dict[str, dict[str, object]]:
    workflow = YAML(typ="safe").load(WORKFLOW.read_text(encoding="utf-8"))
    return {step["name"]: step for step in workflow["jobs"]["fleet"]["steps"] if "name" in step}


def _run_step(name: str, cwd: Path, tmp: Path, **env: str) -> subprocess.CompletedProcess[str]:
    """The workflow step's own script, run by bash as the runner would, with this venv's gitmem on PATH."""
    script = str(_steps()[name]["run"])
    environ = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}", "RUNNER_TEMP": str(tmp),
               "GITHUB_STEP_SUMMARY": str(tmp / "summary.md"), "GITHUB_OUTPUT": str(tmp / "output"), **env}
    return subprocess.run(["bash", "-eo", "pipefail", "-c", script], cwd=cwd, env=environ, capture_output=True,
                          text=True, timeout=300, check=False)


def test_a_public_fleet_repository_shows_verdicts_and_counts_in_its_summary_and_artifact(
        fleet_root: Path, tmp_path: Path) -> None:
    done = _run_step("Read the fleet", fleet_root, tmp_path, PRIVATE_REPOSITORY="false", GITMEM_FLEET_TOKEN="")
    assert done.returncode == 0, done.stderr
    assert "::notice::this fleet repository is public" in done.stdout
    assert "status=2" in (tmp_path / "output").read_text(encoding="utf-8")
    summary = (tmp_path / "summary.md").read_text(encoding="utf-8")
    assert "alpha: 1 decision(s) waiting" in summary
    _no_mark(summary, "a public repository's job summary")
    _no_mark(done.stdout + done.stderr, "a public repository's run log")      # public too
    assert "gitmem: fleet.yaml:8: GM931 hidden: could not be read (the error is left out of the public view" in \
        done.stderr
    for path, text in _tree_text(tmp_path / "page").items():     # what the artifact step uploads
        _no_mark(text, f"the artifact's {path}")


def test_a_public_fleet_repositorys_catch_up_step_says_no_word_of_memory(fleet_root: Path, tmp_path: Path) -> None:
    done = _run_step("Catch up on missed cycles", fleet_root, tmp_path, PRIVATE_REPOSITORY="false",
                     GITMEM_FLEET_DISPATCH_TOKEN="")
    assert done.returncode == 0, done.stderr
    assert "hidden: skip: its memory could not be read" in done.stdout
    _no_mark(done.stdout + done.stderr, "a public repository's catch-up log")


def test_a_failed_dispatch_keeps_its_error_out_of_the_public_view(tmp_path: Path, cli, git_env) -> None:
    """A call that fails names the agent's repository and quotes GitHub; the public view says only that it
    failed, the full one says why."""
    from tests.support.helpers import make_repo

    late = make_repo(tmp_path / "late")
    moment = datetime.now(UTC) - timedelta(hours=10)
    MemoryWriter(late.ws(), clock=lambda: moment).add_log_entry(task="t", outcome="built", result="r", cycle=1)
    late.commit_files({"LOG.md": late.read("LOG.md")}, "cycle 1")
    (tmp_path / "fleet.yaml").write_text("agents:\n  - name: late\n    repo: late\n    github: acme/zz-secret-agent\n",
                                         encoding="utf-8")
    env = {"GITMEM_FLEET_DISPATCH_TOKEN": "t", "GITHUB_API_URL": "http://127.0.0.1:9"}
    with pytest.MonkeyPatch.context() as patch:
        for key, value in env.items():
            patch.setenv(key, value)
        full = cli(["fleet", "dispatch"], cwd=tmp_path)
        public = cli(["fleet", "dispatch", "--public"], cwd=tmp_path)
        public_json = cli(["fleet", "dispatch", "--public", "--json"], cwd=tmp_path)
    assert full.code == public.code == 2
    assert "late: dispatch: overdue by" in public.out and "failed: " in full.out and "zz-secret-agent" in full.out
    assert "failed (the error is left out of the public view)" in public.out
    for said in (public, public_json):
        assert "zz-secret-agent" not in said.out + said.err and "127.0.0.1" not in said.out + said.err
    agent = json.loads(public_json.out)["agents"][0]
    assert agent["failed"] is True and "error" not in agent and "ref" not in agent


def test_a_private_fleet_repository_keeps_the_full_inbox_in_its_summary(fleet_root: Path, tmp_path: Path) -> None:
    done = _run_step("Read the fleet", fleet_root, tmp_path, PRIVATE_REPOSITORY="true", GITMEM_FLEET_TOKEN="")
    assert done.returncode == 0, done.stderr
    summary = (tmp_path / "summary.md").read_text(encoding="utf-8")
    assert "Zanzibar licence question" in summary and "gitmem/proposal/cycle-7" in summary
    assert (tmp_path / "page" / "agents" / "alpha.html").is_file()


def _pages_step(fleet_root: Path, tmp_path: Path, pages: str) -> tuple[subprocess.CompletedProcess[str], Path]:
    """The Pages step against a bare repository standing in for GitHub, with fleet.yaml's `pages:` set."""
    fleet = (fleet_root / "fleet.yaml").read_text(encoding="utf-8")
    here = tmp_path / "fleet"
    here.mkdir()
    (here / "fleet.yaml").write_text(fleet.replace("repo: calm", f"repo: {fleet_root / 'calm'}")
                                     .replace("repo: alpha", f"repo: {fleet_root / 'alpha'}")
                                     .replace("repo: beta", f"repo: {fleet_root / 'beta'}") + f"pages: {pages}\n",
                                     encoding="utf-8")
    server = tmp_path / "server"
    (server / "owner").mkdir(parents=True)
    git(server / "owner", "init", "-q", "--bare", "fleet.git")
    done = _run_step("Publish the public page to GitHub Pages", here, tmp_path, PUSH_TOKEN="not-a-token",
                     GITHUB_SERVER_URL=server.as_uri(), GITHUB_REPOSITORY="owner/fleet", GITHUB_RUN_ID="7")
    return done, server / "owner" / "fleet.git"


def test_pages_are_published_only_when_fleet_yaml_chooses_them_and_only_the_public_page_reaches_them(
        fleet_root: Path, tmp_path: Path) -> None:
    done, origin = _pages_step(fleet_root, tmp_path, "public")
    assert done.returncode == 0, done.stderr
    assert "::warning::publishing the fleet page to GitHub Pages, which anyone can read" in done.stdout
    published = tmp_path / "published"
    git(tmp_path, "clone", "-q", "--branch", "gh-pages", str(origin), str(published))
    tree = _tree_text(published)
    assert sorted(tree) == [".nojekyll", "index.html"]
    for path, text in tree.items():
        _no_mark(text, f"the published {path}")
    assert "4 agents: 1 unreadable, 2 waiting on you, 1 ok" in tree["index.html"]


def test_with_pages_off_nothing_is_published(fleet_root: Path, tmp_path: Path) -> None:
    done, origin = _pages_step(fleet_root, tmp_path, "off")
    assert done.returncode == 0, done.stderr
    assert "GitHub Pages: off in fleet.yaml" in done.stdout and "::warning::" not in done.stdout
    branches = subprocess.run(["git", "-C", str(origin), "branch", "--list"], capture_output=True, text=True,
                              check=True).stdout
    assert branches == ""


@pytest.mark.parametrize(("text", "said"), [
    ("pages: yes\n", "fleet.yaml:4: GM928 pages: expected one of off, public"),
    ("page: public\n", "fleet.yaml:4: GM929 unknown key 'page'; known: agents, budget, pages"),
])
def test_a_misspelt_pages_setting_is_an_error_naming_the_line(text: str, said: str, cli, tmp_path: Path) -> None:
    (tmp_path / "fleet.yaml").write_text("agents:\n  - name: a\n    repo: a\n" + text, encoding="utf-8")
    done = cli(["fleet", "pages"], cwd=tmp_path)
    assert done.code == 2 and said in done.err


def test_the_template_readme_a_new_user_follows_names_every_permission_pull_request_mode_needs() -> None:
    """The template's README is the file a new user follows: pull-request mode needs the same permissions there
    as in the main README and in the template workflow's comments."""
    needed = ("contents: write", "pull-requests: write", "statuses: write")
    template = (ROOT / "template-repo" / "README.md").read_text(encoding="utf-8")
    section = template[template.index("**Pull-request mode.**"):]
    section = section[:section.index("\n\n")]
    workflow = (ROOT / "template-repo" / ".github" / "workflows" / "gitmem.yml").read_text(encoding="utf-8")
    main = (ROOT / "README.md").read_text(encoding="utf-8")
    for permission in needed[1:]:
        assert permission in section, f"template README, pull-request mode: {permission} missing"
    for permission in needed:
        assert permission in workflow and permission in main, permission
    assert "Read and write permissions" not in template      # no repository-wide write default is needed


def test_a_public_dispatch_that_succeeds_names_no_branch(tmp_path: Path, cli, git_env) -> None:
    """A dispatch that went through says which workflow it started; the branch it ran on is the agent's
    repository's, so only the full view names it."""
    from tests.support.fake_actions import FakeActions
    from tests.support.helpers import make_repo

    late = make_repo(tmp_path / "late")
    git(late.path, "switch", "-qc", "zz-private-branch")
    shutil.copytree(ROOT / "template-repo" / ".github", late.path / ".github", dirs_exist_ok=True)
    moment = datetime.now(UTC) - timedelta(hours=9)
    MemoryWriter(late.ws(), clock=lambda: moment).add_log_entry(task="t", outcome="built", result="r", cycle=1)
    late.commit_files({"LOG.md": late.read("LOG.md")}, "cycle 1")
    (tmp_path / "fleet.yaml").write_text("agents:\n  - name: late\n    repo: late\n    github: owner/late\n",
                                         encoding="utf-8")
    with FakeActions() as fake, pytest.MonkeyPatch.context() as patch:
        fake.add("owner/late")
        fake.default_branches["owner/late"] = "zz-private-branch"
        patch.setenv("GITHUB_API_URL", fake.url)
        patch.setenv("GITMEM_FLEET_DISPATCH_TOKEN", fake.token)
        public = cli(["fleet", "dispatch", "--public"], cwd=tmp_path)
        fake.workflows[("owner/late", "gitmem.yml")].runs.clear()
        public_json = cli(["fleet", "dispatch", "--public", "--json"], cwd=tmp_path)
        fake.workflows[("owner/late", "gitmem.yml")].runs.clear()
        full = cli(["fleet", "dispatch", "--json"], cwd=tmp_path)
        fake.workflows[("owner/late", "gitmem.yml")].runs.clear()
        full_text = cli(["fleet", "dispatch"], cwd=tmp_path)
        dispatched = fake.workflows[("owner/late", "gitmem.yml")].dispatched
    assert public.code == public_json.code == full.code == full_text.code == 0, public.err + full.err
    assert [body["ref"] for body in dispatched] == ["zz-private-branch"] * 4
    assert "-> dispatched gitmem.yml on zz-private-branch" in full_text.out
    assert "late: dispatch: overdue by" in public.out and "-> dispatched gitmem.yml" in public.out
    for said in (public, public_json):
        assert "zz-private-branch" not in said.out + said.err
    assert json.loads(public_json.out)["agents"][0]["done"] == ["dispatched gitmem.yml"]
    agent = json.loads(full.out)["agents"][0]
    assert agent["ref"] == "zz-private-branch" and agent["done"] == ["dispatched gitmem.yml"]


def test_a_public_fleet_repository_keeps_no_copy_of_the_agents_in_the_actions_cache() -> None:
    """The cache holds the read-only copies of the agents' repositories, memory and all. A public repository's
    caches can be restored by a workflow any pull request brings, fork or not, so the copies are cached only
    in a private repository (the same test the read step makes)."""
    workflow = YAML(typ="safe").load(WORKFLOW.read_text(encoding="utf-8"))
    cached = [step for step in workflow["jobs"]["fleet"]["steps"]
              if str(step.get("uses", "")).startswith("actions/cache")]
    assert len(cached) == 2
    for step in cached:
        condition = str(step.get("if", ""))
        assert "github.event.repository.private" in condition, step["name"]
        assert condition.replace("always() && ", "") == "github.event.repository.private", step["name"]
