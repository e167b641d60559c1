"""`gitmem demo`: the whole memory loop, offline, in a fresh repository, in a few seconds.

A scripted agent (the `scripted` backend replaying tool calls) runs real cycles through the real runner:
it builds, asks its human a decision, records a lesson; the human answers as themselves; the next cycle
sees the answer as newly resolved and acts on it; later cycles confirm the lesson twice; one cycle builds
nothing, so Rule 0 shows; the daily close reports the day and promotes the twice-confirmed lesson.
Every timestamp comes from the real clock. The narrative goes to `emit`; nothing here prints.
"""
from __future__ import annotations

import shlex
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gitmem import gitio
from gitmem.agents.base import AgentResult, CycleRequest
from gitmem.cycle.runner import CycleReport, Settings, run_cycle
from gitmem.errors import GitmemError
from gitmem.memory import log
from gitmem.memory_writer import MemoryWriter
from gitmem.scaffold import directory_named, make_directory
from gitmem.workspace import Workspace

HUMAN = gitio.Identity("Dana Human", "dana@example.com")
SCRIPT_NAME = "demo-script.yaml"      # in .git/gitmem/, so the work tree stays clean


class DemoError(GitmemError):
    """The demo cannot run where it was asked to (a non-empty directory)."""


@dataclass
class DemoResult:
    path: Path
    steps: list[str] = field(default_factory=list)
    reports: list[CycleReport] = field(default_factory=list)
    closed: bool = False


class Recording:
    """Wraps a backend to keep each cycle's prompt, so the narrative can show what the agent read."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.name = inner.name
        self.prompts: dict[int, str] = {}

    def run(self, request: CycleRequest) -> AgentResult:
        self.prompts[request.cycle] = request.prompt_text()
        result: AgentResult = self.inner.run(request)
        return result


# What a new user writes first in RULES.md's `Who I am`.
WHO_I_AM = {"<agent name>": "Demo agent",
            "<one sentence: what this agent exists to do>": "show the memory loop, offline",
            "<who answers DECISIONS.md, and how to reach them>": f"{HUMAN.name} <{HUMAN.email}>, in DECISIONS.md"}


def _fill_in_rules(path: Path) -> None:
    from gitmem.confined import files

    text = files.read_text(path, "RULES.md")
    for placeholder, value in WHO_I_AM.items():
        text = text.replace(placeholder, value)
    files.write_bytes(path, "RULES.md", text.encode("utf-8"))


def run_demo(target: Path | None = None, *, emit: Callable[[str], None] = lambda line: None) -> DemoResult:
    from gitmem.agents.scripted import ScriptedBackend
    from gitmem.scaffold.init import init

    path = _target(target)
    result = DemoResult(path)

    def say(line: str) -> None:
        result.steps.append(line)
        emit(line)

    say(f"gitmem demo in {path}")
    init(path)
    _fill_in_rules(path)
    repo = gitio.open_repo(path)
    start = [p for p, _ in gitio.dirty_files(repo)]
    gitio.commit_worktree(repo, start, "start from the gitmem template", author=HUMAN)
    say(f"1. Created a repository from the template ({len(start)} files), filled in who the agent and its human "
        f"are in RULES.md (a cycle refuses to start on the template's placeholders), committed by {HUMAN}.")
    ws = Workspace.for_repo(repo)
    config = ws.config
    from gitmem.workspace.statedir import state_directory

    script = state_directory(gitio.state_dir(repo)) / SCRIPT_NAME
    script.write_text(DEMO_SCRIPT, encoding="utf-8")
    backend = Recording(ScriptedBackend(config, script=script))

    def cycle(what: str) -> CycleReport:
        report = run_cycle(Workspace.for_repo(repo), backend, settings=Settings())
        result.reports.append(report)
        say(f"   cycle {report.cycle} · {report.outcome} · {report.task}  [{(report.commit or '')[:7]}] {what}")
        return report

    say("2. Cycles run by a scripted agent (no model, no network); each commits once as the agent:")
    cycle("- builds the first thing")
    cycle("- asks its human D-0001 and records lesson L-0001")
    memory = MemoryWriter(ws, author_email=HUMAN.email)
    memory.answer_decision("D-0001", answer="MIT. Keep it simple.", name=HUMAN.name, email=HUMAN.email)
    gitio.commit_worktree(repo, [config.path("decisions")], "decision: answer D-0001", author=HUMAN)
    say(f"3. {HUMAN.name} answers D-0001 in DECISIONS.md and commits it as herself (only humans resolve).")
    third = cycle("- acts on the answer")
    prompt = backend.prompts.get(third.cycle, "")
    if "newly resolved" in prompt and "D-0001" in prompt.split("newly resolved", 1)[1]:
        say("   its context listed D-0001 under 'newly resolved — act on these, do not redo them'.")
    cycle("- confirms lesson L-0001 (1st time)")
    cycle("- confirms lesson L-0001 (2nd time)")
    idle = cycle("- builds nothing")
    entry = log.parse(ws.read("log")).entries[-1]
    say(f"4. Rule 0: cycle {idle.cycle} wrote no LOG entry, so the runner logged no-build: "
        f"\"{(entry.get('Result') or '').split(';')[0]}\".")
    result.closed = _close(Workspace.for_repo(repo), say)
    say("Final history (git log --oneline):")
    for line in reversed([f"   {c.id[:7]} {c.subject}" for c in gitio.walk_range(repo, None, "HEAD")]):
        say(line)
    say(f"Explore it: cd {shlex.quote(str(path))} && git log --stat && cat NOW.md LOG.md DECISIONS.md LESSONS.md "
        "RULES.md")
    return result


def _target(target: Path | None) -> Path:
    if target is None:
        return Path(tempfile.mkdtemp(prefix="gitmem-demo-"))
    with directory_named(target, DemoError):
        if target.exists() and (not target.is_dir() or any(target.iterdir())):
            raise DemoError(f"{target} is not empty; give a new or empty directory (or none, for a temp dir)")
    make_directory(target, DemoError)
    return target


def _close(ws: Workspace, say: Callable[[str], None]) -> bool:
    """The daily close, offline (no model), when this installation has it."""
    try:
        from gitmem.close import run_close
    except ImportError:
        say("5. (the daily close is not part of this installation)")
        return False
    # The demo's cycles ran moments ago: it closes today. Left to the default, a demo run in the morning would be
    # a late close of yesterday (close.late_hours), which ran no cycles.
    today = ws.clock()().date()                  # the clock is in the configured zone
    closed = run_close(ws, day=today, use_llm=False)
    promoted = ", ".join(f"{p.get('lesson')} -> {p.get('rule')}" for p in closed.promoted) or "nothing"
    say(f"5. Daily close ({closed.status}): {closed.message}; promoted: {promoted}.")
    return closed.status == "closed"


DEMO_SCRIPT = """\
cycles:
  1:
    - tool: write_file
      input: {path: hello.py, content: "print('hello from gitmem')\\n"}
    - tool: log_entry
      input: {task: Ship hello.py, outcome: built, result: hello.py prints a greeting, evidence: python hello.py}
    - tool: now_block
      input: {did: shipped hello.py, human: nothing, next: write the README}
  2:
    - tool: write_file
      input: {path: README.md, content: "# Demo\\n\\nRun `python hello.py`.\\n"}
    - tool: ask_decision
      input: {title: Which license should the project use?, recommendation: "MIT: short and permissive",
              options: "MIT, Apache-2.0"}
    - tool: add_lesson
      input: {title: Ship tests with code, happened: hello.py shipped in cycle 1 without a test,
              why: no test step in the cycle, change: write a test in the same cycle as the code,
              rule: Every shipped file gets a test in the same cycle}
    - tool: log_entry
      input: {task: Write the README, outcome: built, result: README.md explains how to run hello.py,
              learned: code shipped without a test (L-0001)}
    - tool: now_block
      input: {did: wrote README.md; asked D-0001 (license), human: answer D-0001 in DECISIONS.md,
              next: add the license once D-0001 is answered}
  3:
    - tool: write_file
      input: {path: LICENSE, content: "MIT License\\n\\nCopyright (c) the demo authors\\n"}
    - tool: log_entry
      input: {task: Add the MIT license (D-0001 answered by Dana), outcome: built, result: LICENSE added,
              evidence: "D-0001 was newly resolved: MIT"}
    - tool: now_block
      input: {did: added LICENSE as Dana decided, human: nothing, next: test hello.py}
  4:
    - tool: write_file
      input: {path: test_hello.py, content: "def test_hello():\\n    assert open('hello.py').read()\\n"}
    - tool: confirm_lesson
      input: {id: L-0001, evidence: "test_hello.py shipped with its change; the gap did not recur"}
    - tool: log_entry
      input: {task: Test hello.py, outcome: built, result: test_hello.py passes, evidence: pytest -q}
    - tool: now_block
      input: {did: tested hello.py, human: nothing, next: publish a release}
  5:
    - tool: write_file
      input: {path: CHANGELOG.md, content: "# Changelog\\n\\n## 0.1.0\\n- hello.py, with a test\\n"}
    - tool: confirm_lesson
      input: {id: L-0001, evidence: "CHANGELOG entry and its check shipped together in one cycle"}
    - tool: log_entry
      input: {task: Publish release 0.1.0, outcome: published, result: CHANGELOG.md lists 0.1.0}
    - tool: now_block
      input: {did: published 0.1.0, human: nothing, next: measure who runs hello.py}
  6: []
"""
