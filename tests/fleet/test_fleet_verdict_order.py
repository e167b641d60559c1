"""An agent's verdict is the most urgent thing it needs from the human, in the order the rows and the header
count them (`gitmem.fleet.need.NEED_ORDER`): an agent that has run no cycle yet but already asks a decision (a
session asked it before the first scheduled cycle) or has a branch to review waits on the human, and counts
so in the header; "no cycles yet" is what an agent with nothing else to show is."""
from __future__ import annotations

from pathlib import Path

from gitmem.fleet.fleetfile import load_fleet
from gitmem.fleet.need import headline
from gitmem.fleet.parallel import read_fleet
from gitmem.fleet.read import NEW, STREAK, WAITING, AgentRow, verdict
from tests.support.helpers import make_repo


def test_an_agent_without_cycles_that_asks_a_decision_or_has_a_branch_waits_on_the_human() -> None:
    asked = AgentRow("new", "", "new", "main", pending=1)
    assert verdict(asked) == (WAITING, "1 decision(s) waiting")
    branch = AgentRow("new", "", "new", "main", waiting_branches=["gitmem/proposal/cycle-1"])
    assert verdict(branch) == (WAITING, "1 gitmem/* branch(es) to review")
    streak = AgentRow("new", "", "new", "main", streak={"length": 3, "problem": True}, pending=1)
    assert verdict(streak)[0] == STREAK
    assert verdict(AgentRow("new", "", "new", "main")) == (NEW, "no cycle in LOG yet")


def test_the_header_counts_a_new_agents_waiting_decision(tmp_path: Path, git_env: None) -> None:
    from gitmem.memory_writer import MemoryWriter
    from gitmem.workspace import Workspace

    fresh = make_repo(tmp_path / "fresh")
    MemoryWriter(Workspace.at(fresh.path)).ask_decision(title="Which cloud?", recommendation="The one we have.")
    (tmp_path / "fleet.yaml").write_text("agents:\n  - name: fresh\n    repo: fresh\n", encoding="utf-8")
    view = read_fleet(load_fleet(tmp_path / "fleet.yaml"))
    assert [row.verdict for row in view.rows] == [WAITING]
    assert headline(view.rows) == "1 agent: 1 waiting on you"


def test_the_docs_and_the_status_help_give_every_verdict_in_the_order_of_need() -> None:
    import re

    from click.testing import CliRunner

    from gitmem.cli.fleet import fleet
    from gitmem.fleet.need import NEED_ORDER

    docs = (Path(__file__).resolve().parents[2] / "docs" / "fleet.md").read_text(encoding="utf-8")
    table = docs[docs.index("| verdict | when |"):].split("\n\n", 1)[0]
    assert tuple(re.findall(r"^\| `([^`]+)` \|", table, re.M)) == NEED_ORDER
    said = " ".join(CliRunner().invoke(fleet, ["status", "--help"]).output.split())
    order = said[said.index("Rows come most urgent first (") + 29:].split(")", 1)[0]
    assert tuple(order.split(", ")) == NEED_ORDER


def test_the_docs_quote_the_fleet_files_error_as_it_reads() -> None:
    import re

    import pytest

    from gitmem.config import ConfigError
    from gitmem.fleet.fleetfile import parse_fleet

    docs = " ".join((Path(__file__).resolve().parents[2] / "docs" / "fleet.md").read_text(encoding="utf-8").split())
    quoted = re.search(r"`(fleet\.yaml:4: GM929 agents\[0\]: unknown key 'brnach'[^`]*)`", docs)
    assert quoted is not None
    with pytest.raises(ConfigError) as said:
        parse_fleet(b"agents:\n  - name: writer\n    repo: https://github.com/acme/writer\n    brnach: main\n",
                    path=Path("fleet.yaml"))
    assert str(said.value) == quoted.group(1)


def test_the_top_level_help_names_every_fleet_command() -> None:
    from click.testing import CliRunner

    from gitmem.cli import cli
    from gitmem.cli.fleet import fleet

    line = next(line for line in CliRunner().invoke(cli, ["--help"]).output.splitlines() if "Fleet:" in line)
    named = {word.strip() for word in line.split("(")[0].removeprefix("  Fleet:").replace("gitmem fleet", "")
             .split("|")}
    assert named == set(fleet.commands), line
