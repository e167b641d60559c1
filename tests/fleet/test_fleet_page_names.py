"""The agents' own pages are files beside the fleet page, named from fleet.yaml's agent names (unique ignoring
case, refused at load time: tests/fleet/test_fleet_file_github.py) and from the workspace names of each agent's
own gitmem.yaml, which the fleet cannot refuse: they are the agent's, in its repository. Workspaces `Docs` and
`docs` are two workspaces on Linux and one file on macOS and Windows, so a page's file name is unique ignoring
case whatever the workspace is called, and every link of the fleet page opens its own workspace's page."""
from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from gitmem.fleet.fleetfile import load_fleet
from gitmem.fleet.page import agent_page_names
from gitmem.fleet.parallel import read_fleet
from gitmem.workspace import Workspace
from tests.support import browser
from tests.support import report_history as planted
from tests.support.helpers import fleet_home, make_repo

# Names one case-insensitive disk would mix up, and names a URL would misread (`#` starts a fragment, `?` a query,
# `%` an escape): each gets a page of its own, and its link opens that page.
WORKSPACES = ("Docs", "docs", "DOCS", "q#1", "50%", "why?")


@pytest.fixture(scope="module")
def fleet(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    with pytest.MonkeyPatch.context() as patch:
        root = fleet_home(patch, tmp_path_factory, "fleet-page-names")
        agent = make_repo(root / "agent")
        spaces = "".join(f"  {name!r}:\n    memory_dir: memory/m{n}\n" for n, name in enumerate(WORKSPACES))
        agent.write("gitmem.yaml", agent.read("gitmem.yaml") + "workspaces:\n" + spaces)
        for n, name in enumerate(WORKSPACES):
            for rel in ("NOW.md", "DECISIONS.md", "LOG.md", "LESSONS.md", "RULES.md"):
                agent.write(f"memory/m{n}/{rel}", agent.read(rel))
            planted.write_cycles(Workspace.at(agent.path, workspace=name), 1 + n)
        (root / "fleet.yaml").write_text("agents:\n  - name: agent\n    repo: agent\n    stall_after: 90d\n",
                                         encoding="utf-8")
        yield root


def test_each_workspace_s_page_is_a_file_of_its_own_on_a_disk_that_ignores_case(fleet: Path) -> None:
    view = read_fleet(load_fleet(fleet / "fleet.yaml"), with_page=True)
    names = agent_page_names(view)
    assert len(names) == len(WORKSPACES)
    assert len({name.casefold() for name in names}) == len(names), names
    # A name that is already plain, lower case, stays as it was: a bookmark of it keeps working.
    assert "agents/agent/docs.html" in names
    assert all(name.startswith("agents/agent") for name in names)


@pytest.fixture(scope="module")
def chrome(tmp_path_factory: pytest.TempPathFactory) -> Iterator[browser.Browser]:
    with browser.headless(tmp_path_factory.mktemp("chromium-profile"), "fleet page names browser test") as opened:
        yield opened


@pytest.mark.slow
def test_every_link_of_the_page_opens_its_own_workspace_s_page(fleet: Path, cli, chrome: browser.Browser,
                                                               tmp_path: Path) -> None:
    out = tmp_path / "site" / "index.html"
    done = cli(["fleet", "report", "--out", str(out)], cwd=fleet)
    assert done.code == 0, done.out + done.err
    assert f"and {len(WORKSPACES)} agent page(s)" in done.out
    # Every page is a file of its own, whatever the case of its name: none stood in for another.
    written = sorted(p.relative_to(out.parent).as_posix() for p in (out.parent / "agents").rglob("*.html"))
    assert len(written) == len(WORKSPACES) and len({w.casefold() for w in written}) == len(written), written
    loaded = chrome.open(out.as_uri())
    assert loaded.errors == [], loaded.errors
    links = chrome.evaluate("Array.from(document.querySelectorAll('table.health tbody tr a'))"
                            ".map(a => [a.textContent, a.href])")
    assert sorted(label for label, _ in links) == sorted(f"agent/{name}" for name in WORKSPACES)
    for label, href in links:
        opened = chrome.open(href)
        assert opened.errors == [], (label, opened.errors)
        # The page the link opened is that workspace's own report (a case-insensitive disk would have shown
        # another's, and `#`, `?` or `%` a missing file): its title names the workspace, in its own case.
        shown = chrome.evaluate("[document.location.protocol, document.title]")
        assert shown[0] == "file:" and shown[1].startswith(f"gitmem report · {label.partition('/')[2]} · "), \
            (label, href, shown)
