"""The commit messages of a cycle's phases (the cycle, its salvage, a proposal branch): their trailers name the
cycle and the phase, which the next cycle looks for (gitmem.checks.check_and_verify.last_checked)."""
from __future__ import annotations

from gitmem.checks import generation
from gitmem.memory.display import printable, unlinked
from gitmem.memory.lines import one_line


def quoted_path(path: str) -> str:
    """A path the agent named, as the runner quotes it in LOG, a decision, a commit message or the output: a byte
    that is not UTF-8 as `\\xNN` (it comes from the file system as a lone surrogate, which no UTF-8 file holds),
    and a character a terminal acts on escaped (`printable`): an escape in a file name must not reach the
    human's terminal through `git log` or the cycle's output, nor fail the LOG entry's own check (GM920)."""
    return printable(path.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace"))


def commit_message(cycle: int, outcome: str, task: str, phase: str = "cycle") -> str:
    """The cycle's commit message. The task is the agent's text: a "Fixes #12" in it must not close the human's
    issue when the commit lands on the default branch."""
    subject = unlinked(one_line(task))
    subject = subject if len(subject) <= 100 else subject[:99] + "…"
    return (f"gitmem: cycle {cycle} · {outcome} · {subject}\n\nGitmem-Cycle: {cycle}\nGitmem-Phase: {phase}\n"
            f"{generation.trailer()}\n")
