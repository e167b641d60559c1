"""A cycle counts as salvaged in the report when the runner salvaged it (its `Salvaged` field, which the close
reads too), not when an entry's text mentions a salvage branch: a built cycle whose Result said "rebased on
gitmem/salvage/cycle-77" was charted as a salvaged cycle, while the close of the same day saw no problem."""
from __future__ import annotations

from gitmem.agents.base import AgentError
from gitmem.cycle.runner import Settings, run_cycle
from gitmem.memory_writer import MemoryWriter
from gitmem.report import evidence
from gitmem.report.collect import collect_report
from gitmem.workspace import Workspace
from tests.support.cycle_support import WritingBackend
from tests.support.helpers import GitRepo


def _mentions(memory: MemoryWriter, request: object) -> None:
    (memory.root / "hello.txt").write_text("hi\n", encoding="utf-8")
    memory.add_log_entry(task="rebase", outcome="built", evidence="git log",
                         result="rebased on top of gitmem/salvage/cycle-77 and kept it")
    memory.add_now_block(did="rebase", human="nothing", next="more")


def _crashes(memory: MemoryWriter, request: object) -> None:
    (memory.root / "draft.py").write_text("half\n", encoding="utf-8")
    raise AgentError("the API failed: 500")


def test_a_branch_named_in_a_result_is_not_a_salvaged_cycle_and_a_salvaged_one_is(memrepo: GitRepo) -> None:
    assert run_cycle(memrepo.ws(), WritingBackend(_mentions), settings=Settings()).outcome == "built"
    failed = run_cycle(memrepo.ws(), WritingBackend(_crashes), settings=Settings())
    assert failed.salvage_branch == "gitmem/salvage/cycle-2"
    report = collect_report(Workspace.at(memrepo.path))
    assert [(row.number, row.salvage) for row in report.cycles] == [(1, ()), (2, ("gitmem/salvage/cycle-2",))]


def test_an_entry_older_than_the_runner_fields_is_read_by_its_text() -> None:
    """0.1.0's salvage wrote no `Salvaged` field (nor `Started`): its Result named the branch."""
    old = ("\n- Task: cycle run failed\n- Evidence: tokens: not reported\n- Result: no build: the agent failed; its "
           "changes (1 file(s)) are saved on branch gitmem/salvage/cycle-4\n")
    assert evidence.salvage_branches(old) == ("gitmem/salvage/cycle-4",)
    runner = "\n- Task: t\n- Result: rebased on gitmem/salvage/cycle-4\n- Started: 0123456789ab\n"
    assert evidence.salvage_branches(runner) == ()
