"""The commit messages of a cycle's phases (the cycle, its salvage, a proposal branch): their trailers name the
cycle and the phase, which the next cycle looks for (gitmem.checks.check_and_verify.last_checked)."""
from __future__ import annotations

from gitmem.checks import generation
from gitmem.memory.text import one_line, unlinked


def commit_message(cycle: int, outcome: str, task: str, phase: str = "cycle") -> str:
    """The cycle's commit message. The task is the agent's text: a "Fixes #12" in it must not close the human's
    issue when the commit lands on the default branch."""
    subject = unlinked(one_line(task))
    subject = subject if len(subject) <= 100 else subject[:99] + "…"
    return (f"gitmem: cycle {cycle} · {outcome} · {subject}\n\nGitmem-Cycle: {cycle}\nGitmem-Phase: {phase}\n"
            f"{generation.trailer()}\n")
