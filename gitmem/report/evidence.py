"""What a cycle's LOG entry records about itself, read back from its Evidence lines.

The runner writes these lines (gitmem.cycle.postflight): the token usage the backend reported
(`tokens: input 1200, output 300, cache_read_input_tokens 900, total 2400`), the size of the context the cycle
read (`runner: context 5222 tokens of 60000 (estimate)`, from this version on: older cycles have none, and
show as unknown), and one note per forbidden edit it reverted (`runner: reverted …`, `restored …`, `moved …`).
A cost appears where an agent or backend logged one (`cost: $0.42`, or a `cost_usd` key on the tokens line).
Salvaged cycles name their branch, `gitmem/salvage/cycle-N`, in the runner's `Salvaged` field.

Pure text in, values out: no file, no git, nothing imported from the cycle runner but its test for a revert note.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from gitmem.cycle.permissions import is_revert_note
from gitmem.memory.fields import field_value, parse_fields
from gitmem.memory.log import SALVAGED, STARTED
from gitmem.memory.usage import TokenUsage, evidence_lines, is_cost_line, parse_cost, parse_usage, recorded

__all__ = ["TokenUsage", "evidence_lines", "parse_cost", "parse_usage"]   # the spending parser's, read here too

_CONTEXT_RE = re.compile(r"^runner: context ([0-9]+) tokens of ([0-9]+)(?: \(([^()]*)\))?$")
SALVAGE_RE = re.compile(r"gitmem/salvage/cycle-[0-9]+(?:-[0-9]+)?")


def salvage_branches(entry_text: str) -> tuple[str, ...]:
    """The salvage branches an entry (the text below its heading) names: the runner's `Salvaged` field, the one
    place the close reads too (postflight drops such a field from what an agent writes, and a branch named in a
    Result is just words). An entry with neither that field nor the runner's `Started` was written before both
    existed (0.1.0's runner named the branch only in its Result), and its text is read."""
    if "gitmem/salvage/" not in entry_text:
        return ()
    fields = parse_fields(entry_text.split("\n"), 0)
    said = field_value(fields, SALVAGED)
    if said is None and field_value(fields, STARTED) is None:
        said = entry_text
    return tuple(dict.fromkeys(SALVAGE_RE.findall(said or "")))


@dataclass(frozen=True)
class Context:
    tokens: int
    limit: int
    how: str


def parse_context(line: str) -> Context | None:
    """`runner: context 5222 tokens of 60000 (estimate)` -> Context(5222, 60000, "estimate")."""
    match = _CONTEXT_RE.match(line)
    if match is None:
        return None
    return Context(int(match.group(1)), int(match.group(2)), match.group(3) or "")


@dataclass(frozen=True)
class Facts:
    """Everything the Evidence of one entry says, as values."""

    usage: TokenUsage | None = None
    context: Context | None = None
    cost: float | None = None
    reverts: int = 0


NOTHING = Facts()


def may_say_something(entry_text: str) -> bool:
    """A cheap test that skips entries whose Evidence cannot hold a fact: substring searches run at memory speed,
    and most hand-written entries have none of these words."""
    return "Evidence:" in entry_text and (
        "tokens: " in entry_text or "runner: " in entry_text or "ost" in entry_text or "evert" in entry_text)


def read_evidence(entry_text: str) -> Facts:
    """The facts in an entry's Evidence. Lines are told apart by their start, so the common line costs one
    `startswith`: this runs once per cycle over the whole history. Tokens, cost and context are what the runner
    recorded (gitmem.memory.usage.recorded: the last `tokens:` line; the last `runner: context` line), never an
    earlier line the agent wrote."""
    context = None
    reverts = 0
    lines = evidence_lines(entry_text)
    for line in lines:
        if line.startswith("runner: context "):
            # The runner's line comes after the agent's text: an earlier one is the agent's, as with `tokens:`.
            context = parse_context(line) or context
        elif line.startswith("tokens: ") or is_cost_line(line):
            continue
        elif "evert" in line or line.startswith("runner: "):
            reverts += is_revert_note(line)
    spent = recorded(lines)
    return Facts(spent.usage, context, spent.cost, reverts)
