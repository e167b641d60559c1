"""`gitmem fleet`: one inbox and one health view over real agent repositories: copies of one `gitmem demo`, a bare
remote reached by a file:// URL (fetched into the cache, shallow, then incrementally), a repository with two
workspaces, and one entry that cannot be read."""
from __future__ import annotations

import base64
import json
import os
import shutil
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pygit2
import pytest

from gitmem.cycle import schedule
from gitmem.fleet.fleetfile import AgentEntry, load_fleet
from gitmem.fleet.need import fleet_notes
from gitmem.fleet.parallel import read_fleet
from gitmem.fleet.read import STALLED, UNREADABLE, answer_at, cache_dir
from gitmem.memory_writer import MemoryWriter
from gitmem.report.charts import COLOURS
from gitmem.scaffold.demo import run_demo
from gitmem.workspace import Workspace
from tests.support import browser
from tests.support import report_history as planted
from tests.support.gitcli import git
from tests.support.helpers import fleet_home, make_repo
from tests.support.loopback import QuietHandler, serving

TOKEN = "ghp_" + "Q7x2" * 9
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts" / "fleet"


@dataclass
class World:
    root: Path
    base: datetime                  # the clock of the reads: every age below is counted from it
    remote: Path


def _ask(ws: Workspace, moment: datetime, title: str, recommendation: str) -> None:
    MemoryWriter(ws, clock=lambda: moment).ask_decision(title=title, recommendation=recommendation)


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    with pytest.MonkeyPatch.context() as patch:
        root = fleet_home(patch, tmp_path_factory, "fleet")
        patch.delenv("ANTHROPIC_API_KEY", raising=False)
        demo = run_demo(root / "demo").path
        base = datetime.now(UTC).replace(second=0, microsecond=0) + timedelta(minutes=2)
        alpha = root / "alpha"
        shutil.copytree(demo, alpha, symlinks=True)
        _ask(Workspace.at(alpha), base - timedelta(days=3), "Pick a licence", "MIT: the template ships it")
        _ask(Workspace.at(alpha), base - timedelta(hours=5), "Rename the CLI", "keep the name")
        git(alpha, "commit", "-qam", "decisions")
        beta = root / "beta"
        shutil.copytree(demo, beta, symlinks=True)
        _ask(Workspace.at(beta), base - timedelta(days=2), "Drop Python 3.10", "yes, after the release")
        git(beta, "commit", "-qam", "decision")
        git(beta, "branch", "gitmem/proposal/cycle-7")
        remote = root / "beta.git"
        git(root, "clone", "-q", "--bare", str(beta), str(remote))
        duo = make_repo(root / "duo")
        duo.write("gitmem.yaml", duo.read("gitmem.yaml") + "workspaces:\n  writer:\n    memory_dir: agents/writer\n"
                  "  reviewer:\n    memory_dir: agents/reviewer\n")
        for name, days in (("writer", 3), ("reviewer", 2)):
            for rel in ("NOW.md", "DECISIONS.md", "LOG.md", "LESSONS.md", "RULES.md"):
                duo.write(f"agents/{name}/{rel}", duo.read(rel))
            planted.write_cycles(Workspace.at(duo.path, workspace=name), days)
        _ask(Workspace.at(duo.path, workspace="reviewer"), base - timedelta(days=1), "Merge the style guide",
             "merge it")
        (root / "fleet.yaml").write_text(
            "agents:\n"
            "  - name: alpha\n    repo: alpha\n"
            f"  - name: beta\n    repo: {remote.as_uri()}\n    branch: main\n"
            "  - name: duo\n    repo: duo\n    stall_after: 90d\n"
            f"  - name: gone\n    repo: {(root / 'nowhere.git').as_uri()}\n", encoding="utf-8")
        yield World(root, base, remote)


def test_the_inbox_is_every_pending_decision_oldest_first_with_where_to_answer_it(world: World) -> None:
    view = read_fleet(load_fleet(world.root / "fleet.yaml"), clock=lambda: world.base)
    inbox = [(d.agent, d.workspace, d.id, d.title, d.recommendation, d.age, d.age_days, d.answer_at)
             for d in view.inbox]
    assert inbox == [
        ("alpha", "", "D-0002", "Pick a licence", "MIT: the template ships it", "3d", 3.0, "alpha/DECISIONS.md:15"),
        ("beta", "", "D-0002", "Drop Python 3.10", "yes, after the release", "2d", 2.0, "DECISIONS.md:11"),
        ("duo", "reviewer", "D-0001", "Merge the style guide", "merge it", "1d", 1.0,
         "duo/agents/reviewer/DECISIONS.md:11"),
        ("alpha", "", "D-0003", "Rename the CLI", "keep the name", "5h", round(5 / 24, 2), "alpha/DECISIONS.md:11"),
    ]


def test_status_has_a_row_per_agent_and_workspace_and_the_unreadable_one_says_why(world: World) -> None:
    view = read_fleet(load_fleet(world.root / "fleet.yaml"), clock=lambda: world.base)
    rows = {row.label: row for row in view.rows}
    assert list(rows) == ["alpha", "beta", "duo/writer", "duo/reviewer", "gone"]
    assert view.failed and rows["gone"].verdict == UNREADABLE
    assert rows["gone"].error is not None and "git fetch" in rows["gone"].error
    for label in ("alpha", "beta"):
        assert rows[label].last_cycle is not None and rows[label].last_cycle["cycle"] == 6
        assert rows[label].last_cycle["outcome"] == "no-build"
        assert rows[label].interval_seconds == 3 * 3600          # the template's "17 */3 * * *"
        assert rows[label].verdict != UNREADABLE
    assert rows["alpha"].pending == 2 and rows["beta"].pending == 1 and rows["duo/reviewer"].pending == 1
    assert rows["beta"].waiting_branches == ["gitmem/proposal/cycle-7"] and rows["beta"].verdict == "waiting on you"
    assert rows["beta"].branch == "main" and rows["alpha"].waiting_branches == []
    # A day later nothing has run: twice the 3-hour schedule is long past, and the row says what that can mean.
    later = read_fleet(load_fleet(world.root / "fleet.yaml"), clock=lambda: world.base + timedelta(days=1))
    stalled = {row.label: row for row in later.rows}
    assert stalled["alpha"].verdict == STALLED and "over 6h" in stalled["alpha"].why
    assert "60 days" not in stalled["alpha"].why and "60 days" in fleet_notes(later.rows)[0]   # said once
    assert stalled["duo/writer"].verdict != STALLED            # its stall_after is 90 days


def test_the_cli_exits_2_when_an_agent_failed_and_still_shows_the_others(world: World, cli) -> None:
    done = cli(["fleet", "status", "--json"], cwd=world.root)
    assert done.code == 2
    data = json.loads(done.out)
    assert data["failed"] is True
    assert [(a["agent"], a["workspace"], a["verdict"] == "unreadable") for a in data["agents"]] == [
        ("alpha", "", False), ("beta", "", False), ("duo", "writer", False), ("duo", "reviewer", False),
        ("gone", "", True)]
    text = cli(["fleet", "pending"], cwd=world.root)
    assert text.code == 2 and "alpha · D-0002 · Pick a licence" in text.out
    assert "    answer at: duo/agents/reviewer/DECISIONS.md:11" in text.out and "gone:" in text.err


def test_pending_json_is_an_object_that_names_the_agents_it_could_not_read(world: World, cli) -> None:
    """`fleet pending --json` was a bare list of decisions: with an agent unread (exit 2) nothing in it said whose
    decisions were missing. Now it is an object as `fleet status --json` is; the list is under `decisions`."""
    done = cli(["fleet", "pending", "--json"], cwd=world.root)
    assert done.code == 2
    data = json.loads(done.out)
    assert set(data) == {"now", "failed", "unreadable", "decisions"} and data["failed"] is True
    assert [u["agent"] for u in data["unreadable"]] == ["gone"] and "git fetch" in data["unreadable"][0]["error"]
    assert [(d["agent"], d["id"]) for d in data["decisions"]] == [
        ("alpha", "D-0002"), ("beta", "D-0002"), ("duo", "D-0001"), ("alpha", "D-0003")]
    public = json.loads(cli(["fleet", "pending", "--json", "--public"], cwd=world.root).out)
    assert public["unreadable"] == [{"agent": "gone", "at": "fleet.yaml:10", "code": "GM931"}]
    assert public["waiting"] == {"alpha": 2, "beta": 1, "duo/reviewer": 1}


def test_a_remote_is_fetched_shallow_into_the_cache_and_incrementally_after(world: World, tmp_path: Path) -> None:
    fleet_file = tmp_path / "fleet.yaml"
    fleet_file.write_text(f"agents:\n  - name: beta\n    repo: {world.remote.as_uri()}\n", encoding="utf-8")
    first = read_fleet(load_fleet(fleet_file), clock=lambda: world.base)
    mine = cache_dir(load_fleet(fleet_file).agents[0], dict(os.environ))
    assert mine.parent == Path(os.environ["XDG_CACHE_HOME"]) / "gitmem" / "fleet"
    assert (mine / ".git" / "shallow").is_file() and (mine / ".git" / "refs" / "remotes" / "origin" / "HEAD").is_file()
    assert first.rows[0].pending == 1
    work = tmp_path / "work"
    git(tmp_path, "clone", "-q", str(world.remote), str(work))
    _ask(Workspace.at(work), world.base - timedelta(hours=1), "Ship 1.0", "ship it")
    git(work, "commit", "-qam", "another decision")
    git(work, "push", "-q", "origin", "HEAD:main")
    offline = read_fleet(load_fleet(fleet_file), clock=lambda: world.base, offline=True)
    assert [d.title for d in offline.inbox] == ["Drop Python 3.10"]          # the copy as the last fetch left it
    again = read_fleet(load_fleet(fleet_file), clock=lambda: world.base)
    assert [d.title for d in again.inbox] == ["Drop Python 3.10", "Ship 1.0"]
    assert (mine / ".git" / "shallow").exists()
    git(work, "push", "-q", "origin", "HEAD~1:main", "--force")   # put the shared remote back for the others
    (mine / ".git" / "HEAD").unlink()                               # a copy damaged on disk is fetched anew
    mended = read_fleet(load_fleet(fleet_file), clock=lambda: world.base)
    assert [d.title for d in mended.inbox] == ["Drop Python 3.10"] and (mine / ".git" / "HEAD").is_file()
    fleet_file.write_text(f"agents:\n  - name: never\n    repo: {world.remote.as_uri()}\n    branch: other\n",
                          encoding="utf-8")
    unfetched = read_fleet(load_fleet(fleet_file), clock=lambda: world.base, offline=True)
    assert unfetched.rows[0].error == f"{world.remote.as_uri()} has not been fetched yet; run once without --offline"


def test_the_token_is_masked_in_every_output(world: World, cli, monkeypatch: pytest.MonkeyPatch,
                                             tmp_path: Path) -> None:
    monkeypatch.setenv("GITMEM_FLEET_TOKEN", TOKEN)
    agent = tmp_path / "leaky"
    shutil.copytree(world.root / "alpha", agent, symlinks=True)
    # The writer refuses secrets (GM903); an agent that writes the file itself is not stopped before it commits.
    decisions = agent / "DECISIONS.md"
    decisions.write_text(decisions.read_text(encoding="utf-8").replace("Rename the CLI", f"Rotate {TOKEN}")
                         .replace("keep the name", f"revoke {TOKEN} now"), encoding="utf-8")
    (tmp_path / "fleet.yaml").write_text(
        f"agents:\n  - name: leaky\n    repo: leaky\n  - name: gone\n    repo: file:///{TOKEN}/x.git\n",
        encoding="utf-8")
    for argv in (["fleet", "pending"], ["fleet", "status", "--json"], ["fleet", "report", "--out", "site/i.html"]):
        done = cli(argv, cwd=tmp_path)
        assert done.code == 2, done.err
        assert TOKEN not in done.out + done.err, argv
    pages = [p.read_text(encoding="utf-8") for p in (tmp_path / "site").rglob("*.html")]
    assert len(pages) == 2 and all(TOKEN not in page for page in pages)
    assert "Rotate" in pages[0] + pages[1]


def test_answers_on_github_link_to_the_line() -> None:
    entry = AgentEntry("w", "https://github.com/acme/writer.git")
    assert answer_at(entry, "DECISIONS.md", 12, "main") == "https://github.com/acme/writer/blob/main/DECISIONS.md#L12"
    scp = AgentEntry("w", "git@github.com:acme/writer.git")
    assert answer_at(scp, "agents/w/DECISIONS.md", 3, "HEAD") == \
        "https://github.com/acme/writer/blob/HEAD/agents/w/DECISIONS.md#L3"
    assert answer_at(AgentEntry("w", "https://gitlab.com/acme/w.git"), "DECISIONS.md", 4, "main") == "DECISIONS.md:4"


@pytest.mark.parametrize(("line", "seconds"), [
    ("17 */3 * * *", 3 * 3600), ("47 23 * * *", 86400), ("0 9 * * 1-5", 3 * 86400), ("*/15 * * * *", 900),
    ("0 0 1 * *", 31 * 86400), ("0 0 29 2 *", None), ("0 12 * * MON", 7 * 86400), ("not a cron", None),
    ("99 * * * *", None)])
def test_a_cron_line_gives_its_longest_gap(line: str, seconds: int | None) -> None:
    assert schedule.cron_interval(line) == seconds


HOSTILE = [
    ("agents: []\n", "fleet.yaml:1: GM927 agents: expected a non-empty list"),
    ("agents:\n  - name: a\n    repo: x\n    brnach: main\n", "fleet.yaml:4: GM929 agents[0]: unknown key 'brnach'"),
    ("agents:\n  - name: a\n    repo: x\n  - name: a\n    repo: y\n",
     "fleet.yaml:4: GM932 agents[1].name: 'a' is also"),
    ("agents:\n  - name: a\n    repo: https://me:hunter2@github.com/a/b\n",
     "fleet.yaml:3: GM928 agents[0].repo: must not "
     "carry credentials"),
    ("agents:\n  - name: a\n    repo: ext::sh -c touch% pwned\n", "fleet.yaml:3: GM928 agents[0].repo: is neither"),
    ("agents:\n  - name: a\n    repo: --upload-pack=touch\n",
     "fleet.yaml:3: GM928 agents[0].repo: must not start with"),
    ("agents:\n  - name: a\n    repo: file:///x\n    branch: ../../HEAD\n", "fleet.yaml:4: GM928 agents[0].branch: "),
    ("agents:\n  - name: ../up\n    repo: x\n", "fleet.yaml:2: GM928 agents[0].name: must be 1-64"),
    # An agent's name is its page's file name: Windows opens the console for `con.html`, and drops a final `.`.
    ("agents:\n  - name: con\n    repo: x\n", "fleet.yaml:2: GM928 agents[0].name: must be 1-64"),
    ("agents:\n  - name: Lpt1.x\n    repo: x\n", "fleet.yaml:2: GM928 agents[0].name: must be 1-64"),
    ("agents:\n  - name: alpha.\n    repo: x\n", "fleet.yaml:2: GM928 agents[0].name: must be 1-64"),
    ("agents:\n  - name: a\n    repo: x\n    stall_after: forever\n",
     "fleet.yaml:4: GM928 agents[0].stall_after: expected"),
    ("agents:\n  - name: a\n    repo: x\n    branch: main\n",
     "fleet.yaml:4: GM928 agents[0].branch: a local repository"),
    ("agents:\n  - name: \"a\\u0007\"\n    repo: x\n", "fleet.yaml:2: GM928 agents[0].name: must not contain control"),
    ("agents: " + "[" * 200 + "]" * 200 + "\n", "fleet.yaml:1: GM930 nested deeper than 100 levels"),
    ("agents:\n  - name: a\n  repo: x\n", "fleet.yaml:3: GM930 invalid YAML"),
    ("agents:\n  - {name: a}\n", "fleet.yaml:2: GM928 agents[0]: `repo` is required"),
]


@pytest.mark.parametrize(("text", "said"), HOSTILE)
def test_a_hostile_fleet_file_is_one_line_naming_the_line(text: str, said: str, cli, tmp_path: Path) -> None:
    (tmp_path / "fleet.yaml").write_text(text, encoding="utf-8")
    done = cli(["fleet", "status"], cwd=tmp_path)
    assert done.code == 2 and done.out == ""
    assert done.err.startswith(f"gitmem: {said}"), done.err
    assert len(done.err.strip().splitlines()) == 1


def test_a_fleet_file_behind_a_link_is_refused(cli, tmp_path: Path) -> None:
    (tmp_path / "elsewhere.yaml").write_text("agents:\n  - name: a\n    repo: x\n", encoding="utf-8")
    (tmp_path / "fleet.yaml").symlink_to(tmp_path / "elsewhere.yaml")
    done = cli(["fleet", "pending"], cwd=tmp_path)
    assert done.code == 2 and "fleet.yaml" in done.err and "link" in done.err
    missing = cli(["fleet", "pending", "--fleet", "none.yaml"], cwd=tmp_path)
    assert missing.code == 2 and "none.yaml:1: GM930 no fleet file here" in missing.err


# The screenshot, drawn into a canvas of the page itself (a data: URL, so the canvas stays readable): how many
# pixels carry each colour the page must show.
SHOT_INK = """(async () => {
  const image = new Image();
  image.src = %s;
  await image.decode();
  const canvas = document.createElement('canvas');
  canvas.width = image.width; canvas.height = image.height;
  const context = canvas.getContext('2d');
  context.drawImage(image, 0, 0);
  const pixels = context.getImageData(0, 0, image.width, image.height).data;
  const ink = {};
  for (const [name, hex] of Object.entries(%s)) {
    const [r, g, b] = [1, 3, 5].map(i => parseInt(hex.slice(i, i + 2), 16));
    let n = 0;
    for (let i = 0; i < pixels.length; i += 4) {
      if (Math.abs(pixels[i] - r) + Math.abs(pixels[i + 1] - g) + Math.abs(pixels[i + 2] - b) < 24) n++;
    }
    ink[name] = n;
  }
  return {width: image.width, height: image.height, ink};
})()"""


@pytest.fixture(scope="module")
def chrome(tmp_path_factory: pytest.TempPathFactory) -> Iterator[browser.Browser]:
    with browser.headless(tmp_path_factory.mktemp("chromium-profile"), "fleet browser test") as opened:
        yield opened


@pytest.mark.slow
def test_the_page_opens_in_chromium_and_shows_the_inbox_the_health_and_the_sparklines(
        world: World, cli, chrome: browser.Browser) -> None:
    out = ARTIFACTS / "index.html"
    done = cli(["fleet", "report", "--out", str(out)], cwd=world.root)
    assert done.code == 2 and "and 4 agent page(s)" in done.out            # gone has no page of its own
    loaded = chrome.open(out.as_uri())
    assert loaded.errors == [], loaded.errors
    assert all(url.startswith(("file:", "data:")) for url in loaded.requests), loaded.requests
    inbox = chrome.evaluate("Array.from(document.querySelectorAll('table.inbox tbody tr'))"
                            ".map(r => [r.cells[0].textContent, r.cells[1].textContent])")
    assert inbox == [["alpha", "D-0002"], ["beta", "D-0002"], ["duo/reviewer", "D-0001"], ["alpha", "D-0003"]]
    health = chrome.evaluate("Array.from(document.querySelectorAll('table.health tbody tr'))"
                             ".map(r => [r.cells[0].textContent, r.cells[1].textContent, "
                             "r.querySelectorAll('svg.cycles rect').length, "
                             "(r.querySelector('a') || {}).href || ''])")
    # Most urgent first: the unreadable agent, then the ones waiting on the human (more decisions first).
    assert [h[0] for h in health] == ["gone", "alpha", "beta", "duo/reviewer", "duo/writer"]
    assert health[0][1] == "unreadable" and health[0][3] == ""
    assert [h[1] for h in health[1:4]] == ["waiting on you"] * 3
    assert chrome.evaluate("document.querySelector('h1').textContent").startswith(
        "gitmem fleet · 5 agents: 1 unreadable, 3 waiting on you, 1 ok")
    assert all(h[2] > 0 for h in health[1:]), health                  # every readable agent has its bars
    for _, _, _, href in health[1:]:
        page = Path(href.removeprefix("file://"))
        assert page.is_file() and out.parent / "agents" in (page.parent, page.parent.parent)
    shot = chrome.screenshot(ARTIFACTS / "fleet.png")
    data = "data:image/png;base64," + base64.b64encode(shot.read_bytes()).decode("ascii")
    drawn = chrome.evaluate(SHOT_INK % (json.dumps(data), json.dumps({"no-build": COLOURS["no-build"],
                                                                       "built": COLOURS["built"],
                                                                       "unreadable": "#b3261e"})),
                            await_promise=True)
    assert drawn["width"] >= 1000 and drawn["height"] > 300
    assert all(count > 20 for count in drawn["ink"].values()), drawn
    own = chrome.open((out.parent / "agents" / "duo" / "reviewer.html").as_uri())
    assert own.errors == [], own.errors


class StallingGitHost(QuietHandler):
    """A git host that accepts the request and never answers (until the test ends): a slow remote."""

    released = threading.Event()

    def do_GET(self) -> None:
        self.released.wait(60)
        self.send(503, "text/plain", b"gone")


def test_a_slow_remote_costs_its_own_row_not_the_others(world: World, cli, tmp_path: Path) -> None:
    shutil.copytree(world.root / "alpha", tmp_path / "alpha", symlinks=True)
    with serving(StallingGitHost) as url:
        (tmp_path / "fleet.yaml").write_text(
            f"agents:\n  - name: slow\n    repo: {url}/agent.git\n  - name: alpha\n    repo: alpha\n",
            encoding="utf-8")
        started = time.monotonic()
        done = cli(["fleet", "status", "--json", "--timeout", "2"], cwd=tmp_path)
        took = time.monotonic() - started
        StallingGitHost.released.set()
    rows = {row["agent"]: row for row in json.loads(done.out)["agents"]}
    assert done.code == 2 and rows["slow"]["verdict"] == "unreadable"
    assert rows["slow"]["error"] == "`git fetch` did not finish within the 2s timeout"
    assert rows["alpha"]["pending"] == 2 and rows["alpha"]["verdict"] != "unreadable"
    assert took < 30


def test_a_memory_file_planted_as_a_link_in_an_agent_is_refused_not_followed(world: World, tmp_path: Path) -> None:
    agent = tmp_path / "planted"
    shutil.copytree(world.root / "beta", agent, symlinks=True)
    outside = tmp_path / "private.txt"
    outside.write_text("### D-0009 · the human's private note\n", encoding="utf-8")
    (agent / "DECISIONS.md").unlink()
    (agent / "DECISIONS.md").symlink_to(outside)
    git(agent, "add", "-A")
    git(agent, "commit", "-qm", "a link where DECISIONS.md was")
    remote = tmp_path / "planted.git"
    git(tmp_path, "clone", "-q", "--bare", str(agent), str(remote))
    (tmp_path / "fleet.yaml").write_text(f"agents:\n  - name: planted\n    repo: {remote.as_uri()}\n",
                                         encoding="utf-8")
    view = read_fleet(load_fleet(tmp_path / "fleet.yaml"), clock=lambda: world.base)
    assert [row.verdict for row in view.rows] == [UNREADABLE] and view.inbox == []
    assert "DECISIONS.md" in (view.rows[0].error or "") and "link" in (view.rows[0].error or "")


def test_the_report_never_writes_through_a_planted_link(world: World, cli, tmp_path: Path) -> None:
    shutil.copytree(world.root / "alpha", tmp_path / "alpha", symlinks=True)
    (tmp_path / "fleet.yaml").write_text("agents:\n  - name: alpha\n    repo: alpha\n", encoding="utf-8")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (tmp_path / "site").mkdir()
    (tmp_path / "site" / "agents").symlink_to(elsewhere)
    done = cli(["fleet", "report", "--out", "site/index.html"], cwd=tmp_path)
    assert done.code == 2 and "agents" in done.err and "link" in done.err
    assert list(elsewhere.iterdir()) == []
    (tmp_path / "site" / "agents").unlink()
    (tmp_path / "site" / "index.html").unlink()
    (tmp_path / "site" / "index.html").symlink_to(elsewhere / "page.html")
    refused = cli(["fleet", "report", "--out", "site/index.html"], cwd=tmp_path)
    assert refused.code == 2 and "a link is in the way" in refused.err and list(elsewhere.iterdir()) == []



def test_a_page_written_for_an_agent_taken_out_of_the_fleet_is_removed_with_the_next_report(
        world: World, cli, tmp_path: Path) -> None:
    """The agents' pages quote their memory: an agent taken out of the fleet file (a private one, moved to a
    fleet of its own) must not stay published beside the new report. Only a report's own pages go; the human's
    files in the folder stay."""
    for name in ("alpha", "duo"):
        shutil.copytree(world.root / name, tmp_path / name, symlinks=True)
    fleet = tmp_path / "fleet.yaml"
    fleet.write_text("agents:\n  - name: alpha\n    repo: alpha\n  - name: duo\n    repo: duo\n"
                     "    stall_after: 90d\n", encoding="utf-8")
    assert cli(["fleet", "report", "--out", "site/index.html"], cwd=tmp_path).code == 0
    agents = tmp_path / "site" / "agents"
    assert sorted(p.relative_to(agents).as_posix() for p in agents.rglob("*.html")) == [
        "alpha.html", "duo/reviewer.html", "duo/writer.html"]
    (agents / "about.html").write_text("<p>the human's own page</p>", encoding="utf-8")
    fleet.write_text("agents:\n  - name: alpha\n    repo: alpha\n", encoding="utf-8")
    done = cli(["fleet", "report", "--out", "site/index.html"], cwd=tmp_path)
    assert done.code == 0, done.err
    assert sorted(p.relative_to(agents).as_posix() for p in agents.rglob("*.html")) == ["about.html", "alpha.html"]
    assert "removed 2 page(s)" in done.out + done.err and "agents/duo/writer.html" in done.out + done.err
    # An agent still in the fleet that cannot be read this time keeps its workspaces' pages.
    fleet.write_text("agents:\n  - name: alpha\n    repo: alpha\n  - name: duo\n    repo: duo\n"
                     "    stall_after: 90d\n", encoding="utf-8")
    assert cli(["fleet", "report", "--out", "site/index.html"], cwd=tmp_path).code == 0
    shutil.move(tmp_path / "duo", tmp_path / "duo-away")
    unread = cli(["fleet", "report", "--out", "site/index.html"], cwd=tmp_path)
    assert unread.code == 2 and "removed" not in unread.out + unread.err
    assert sorted(p.relative_to(agents).as_posix() for p in agents.rglob("*.html")) == [
        "about.html", "alpha.html", "duo/reviewer.html", "duo/writer.html"]

ROW_LINES = """Array.from(document.querySelectorAll('table.health tbody tr')).map(row => {
  let most = 0;                      // the most lines any visible cell's text takes
  for (const cell of row.cells) {
    if (getComputedStyle(cell).display === 'none') continue;
    const tops = new Set();
    const walker = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      if (node.parentElement.closest('svg')) continue;
      const range = document.createRange();
      range.selectNodeContents(node);
      for (const rect of range.getClientRects()) if (rect.height > 0) tops.add(Math.round(rect.top));
    }
    most = Math.max(most, tops.size);
  }
  return [row.cells[0].textContent, most, Math.round(row.getBoundingClientRect().height)];
})"""


@pytest.mark.slow
def test_22_agents_are_one_line_each_on_a_laptop_and_the_page_fits_a_phone(
        world: World, cli, chrome: browser.Browser, tmp_path: Path) -> None:
    lines = ["agents:"]
    for n in range(21):           # each its own copy: one repository twice is refused (GM932)
        shutil.copytree(world.root / "alpha", tmp_path / f"agent-{n:02d}", symlinks=True)
        lines.append(f"  - name: agent-{n:02d}\n    repo: {tmp_path / f'agent-{n:02d}'}")
    lines.append(f"  - name: lost\n    repo: {(world.root / 'nowhere.git').as_uri()}")
    (tmp_path / "fleet.yaml").write_text("\n".join(lines) + "\n", encoding="utf-8")
    out = tmp_path / "site" / "index.html"
    assert cli(["fleet", "report", "--out", str(out), "--timeout", "60"], cwd=tmp_path).code == 2
    try:
        chrome.resize(1400, 900)
        chrome.open(out.as_uri())
        rows = chrome.evaluate(ROW_LINES)
        assert len(rows) == 22 and rows[0][0] == "lost"               # the unreadable one is never below the fold
        assert all(count == 1 for _, count, _ in rows), rows          # every cell of every row on one line
        assert max(height for _, _, height in rows) < 48, rows
        fold = chrome.evaluate("document.querySelector('table.health tbody tr:last-child').getBoundingClientRect()"
                               ".bottom")
        assert fold < 900, fold                                       # all 22 rows above a laptop's fold
        chrome.screenshot(ARTIFACTS / "fleet-22-laptop.png")
        chrome.resize(390, 844)
        chrome.open(out.as_uri())
        fits = chrome.evaluate("[document.documentElement.scrollWidth, window.innerWidth, "
                               "document.querySelector('table.health tbody tr').cells[0].textContent]")
        assert fits[0] <= fits[1] and fits[2] == "lost", fits         # the table scrolls inside its section
        chrome.screenshot(ARTIFACTS / "fleet-22-phone.png")
    finally:
        chrome.resize(1400, 1000)


def test_a_workflow_of_5500_cron_lines_costs_its_agent_a_bounded_read_and_the_command_exits(
        world: World, tmp_path: Path) -> None:
    import subprocess
    import sys

    agent = tmp_path / "cronbomb"
    shutil.copytree(world.root / "alpha", agent, symlinks=True)
    lines = "".join(f"    - cron: \"{n % 60} {n // 60 % 24} {n % 28 + 1} * *\"\n" for n in range(5500))
    (agent / ".github" / "workflows" / "bomb.yml").write_text(f"on:\n  schedule:\n{lines}", encoding="utf-8")
    (tmp_path / "fleet.yaml").write_text("agents:\n  - name: cronbomb\n    repo: cronbomb\n", encoding="utf-8")
    started = time.monotonic()
    done = subprocess.run([str(Path(sys.executable).parent / "gitmem"), "fleet", "status", "--json", "--timeout", "5"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=120, check=False)
    took = time.monotonic() - started
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["agents"][0]["interval_seconds"] == 3 * 3600
    assert took < 30, took


def test_an_unreadable_agent_s_error_is_said_once(world: World, cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """`--json` gives an unreadable agent's error in `error` alone (`why` is a verdict's reason, and the error is
    this one's); the table's line under the rows says it once too."""
    bare = tmp_path / "bare"
    pygit2.init_repository(str(bare))
    (tmp_path / "fleet.yaml").write_text("agents:\n  - name: ghost\n    repo: bare\n", encoding="utf-8")
    done = cli(["fleet", "status", "--json"], cwd=tmp_path)
    row = json.loads(done.out)["agents"][0]
    assert done.code == 2 and row["verdict"] == "unreadable" and "no gitmem memory here" in row["error"], row
    assert row["why"] == "", row
    shown = cli(["fleet", "status"], cwd=tmp_path).out
    assert shown.count("no gitmem memory here") == 1 and "ghost: no gitmem memory here" in shown, shown


def test_reading_the_fleet_leaves_no_pool_thread_to_race_the_exit(world: World) -> None:
    """The pool's manager thread is gone when the reading returns: left running, it closed its wake-up pipe
    while the interpreter's exit still wrote to it, and `fleet status --json | head` printed a traceback."""
    read_fleet(load_fleet(world.root / "fleet.yaml"), clock=lambda: world.base)
    left = [t.name for t in threading.enumerate() if "ExecutorManager" in type(t).__name__]
    assert left == [], left


def test_an_inbox_that_could_not_read_every_agent_never_says_nothing_waits(world: World, cli,  # type: ignore[no-untyped-def]
                                                                           tmp_path: Path) -> None:
    """The fleet workflow's job summary gets stdout alone: with one agent unread, "No decisions are waiting"
    there was a claim about that agent too. Text, --public text and both pages say what they could not see."""
    quiet = tmp_path / "quiet"
    shutil.copytree(world.root / "demo", quiet, symlinks=True)            # the demo's one decision is answered
    (tmp_path / "fleet.yaml").write_text(
        f"agents:\n  - name: quiet\n    repo: quiet\n  - name: gone\n    repo: {(tmp_path / 'nowhere.git').as_uri()}\n",
        encoding="utf-8")
    said = "1 agent could not be read: any decision waiting on it is not listed here."
    for public in ([], ["--public"]):
        done = cli(["fleet", "pending", *public], cwd=tmp_path)
        assert done.code == 2 and "No decisions are waiting." not in done.out, done.out
        assert done.out.splitlines() == ["No decisions are waiting from the agents that could be read.", said]
        page = tmp_path / f"page{len(public)}" / "index.html"
        assert cli(["fleet", "report", *public, "--out", str(page)], cwd=tmp_path).code == 2
        inbox = page.read_text(encoding="utf-8").split('<section class="fleet inbox">')[1]
        assert "Nothing waits on you" not in inbox and said in inbox, inbox
    (tmp_path / "fleet.yaml").write_text("agents:\n  - name: quiet\n    repo: quiet\n", encoding="utf-8")
    assert cli(["fleet", "pending"], cwd=tmp_path).out == "No decisions are waiting.\n"
