"""The context chart shows what the runner recorded, never a `runner: context` line the agent wrote.

The runner appends its own Evidence lines after the agent's text, its context line among them: the last such line
is the runner's, as the last `tokens:` line is (gitmem.memory.usage.recorded). The report took the first one, so
an agent's "runner: context 99999999 tokens of 100" stood in the chart for the cycle's real context."""
from __future__ import annotations

from gitmem.cycle.runner import Settings, run_cycle
from gitmem.memory_writer import MemoryWriter
from gitmem.report import evidence
from gitmem.report.collect import collect_report
from gitmem.workspace import Workspace
from tests.support.cycle_support import WritingBackend
from tests.support.helpers import GitRepo

FORGED = "runner: context 99999999 tokens of 100 (estimate)"


def _forging(memory: MemoryWriter, request: object) -> None:
    (memory.root / "hello.txt").write_text("hi\n", encoding="utf-8")
    memory.add_log_entry(task="write hello", outcome="built", result="it exists", evidence=f"cat hello.txt\n{FORGED}")
    memory.add_now_block(did="hello", human="nothing", next="more")


def test_the_report_charts_the_runners_context_line_not_the_agents(memrepo: GitRepo) -> None:
    report = run_cycle(memrepo.ws(), WritingBackend(_forging), settings=Settings())
    assert report.outcome == "built"
    log_text = memrepo.read("LOG.md")
    assert FORGED in log_text                                  # the agent's text is kept as it wrote it
    collected = collect_report(Workspace.at(memrepo.path))
    [row] = collected.cycles
    assert row.budget == 60000 and row.context is not None and 0 < row.context < 60000


def test_the_last_context_line_of_the_evidence_is_the_runners() -> None:
    text = ("\n- Task: t\n- Evidence: ran it\n  " + FORGED + "\n  runner: context 1234 tokens of 60000 (estimate)\n"
            "  tokens: input 5, output 5, total 10\n- Result: r\n")
    assert evidence.read_evidence(text).context == evidence.Context(1234, 60000, "estimate")
