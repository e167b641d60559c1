"""What a cycle's LOG entry records about itself, read back from its Evidence lines.

The runner writes these lines (gitmem.cycle.postflight): the token usage the backend reported
(`tokens: input 1200, output 300, cache_read_input_tokens 900, total 2400`), the size of the context the cycle
read (`runner: context 5222 tokens of 60000 (estimate)`, from this version on: older cycles have none, and
show as unknown), and one note per forbidden edit it reverted (`runner: reverted …`, `restored …`, `moved …`).
A cost appears where an agent or backend logged one (`cost: $0.42`, or a `cost_usd` key on the tokens line).
Salvaged cycles name their branch, `gitmem/salvage/cycle-N`, in the entry.

Pure text in, values out: no file, no git, nothing imported from the cycle runner but its test for a revert note.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from gitmem.cycle.permissions import is_revert_note

_CONTEXT_RE = re.compile(r"^runner: context ([0-9]+) tokens of ([0-9]+)(?: \(([^()]*)\))?$")
_COST_RE = re.compile(r"^(?:runner: )?(?:total )?cost(?: usd)?:? \$?([0-9]+(?:\.[0-9]+)?)(?: ?USD)?\b", re.I)
_PAIR_RE = re.compile(r"^([A-Za-z_]+) ([0-9]+(?:\.[0-9]+)?)$")
SALVAGE_RE = re.compile(r"gitmem/salvage/cycle-[0-9]+(?:-[0-9]+)?")
_EVIDENCE_RE = re.compile(r"^- Evidence:(.*(?:\n  .*)*)", re.M)


@dataclass(frozen=True)
class TokenUsage:
    """Token usage from a `tokens:` line; None where the line does not say."""

    total: int
    values: dict[str, float]

    @property
    def cache_rate(self) -> float | None:
        """Share of the prompt read from the cache: cache reads / (input + cache reads + cache writes)."""
        read = self.values.get("cache_read_input_tokens")
        if read is None:
            return None
        prompt = read + self.values.get("input", 0) + self.values.get("cache_creation_input_tokens", 0)
        return read / prompt if prompt else None

    @property
    def cost(self) -> float | None:
        found = [v for k, v in self.values.items() if "cost" in k]
        return found[0] if found else None


@dataclass(frozen=True)
class Context:
    tokens: int
    limit: int
    how: str


def evidence_lines(entry_text: str) -> list[str]:
    """The lines of the entry's `- Evidence:` field (first line and its indented continuation lines), trimmed."""
    found = _EVIDENCE_RE.search(entry_text)
    if found is None:
        return []
    return [line.strip() for line in found.group(1).split("\n") if line.strip()]


def parse_usage(line: str) -> TokenUsage | None:
    """`tokens: input 1200, output 300, cache_read_input_tokens 900, total 2400` -> TokenUsage(2400, {...})."""
    if not line.startswith("tokens: "):
        return None
    values: dict[str, float] = {}
    for part in line[8:].split(", "):
        match = _PAIR_RE.match(part.strip())
        if match is None:
            return None
        number = float(match.group(2))
        values[match.group(1)] = int(number) if number.is_integer() and "cost" not in match.group(1) else number
    total = values.pop("total", None)
    if total is None:
        total = sum(v for k, v in values.items() if "cost" not in k)
    return TokenUsage(int(total), values)


def parse_context(line: str) -> Context | None:
    """`runner: context 5222 tokens of 60000 (estimate)` -> Context(5222, 60000, "estimate")."""
    match = _CONTEXT_RE.match(line)
    if match is None:
        return None
    return Context(int(match.group(1)), int(match.group(2)), match.group(3) or "")


def parse_cost(line: str) -> float | None:
    match = _COST_RE.match(line)
    return float(match.group(1)) if match else None


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
    return "- Evidence:" in entry_text and (
        "tokens: " in entry_text or "runner: " in entry_text or "ost" in entry_text or "evert" in entry_text)


def read_evidence(entry_text: str) -> Facts:
    """The facts in an entry's Evidence. Lines are told apart by their start, so the common line costs one
    `startswith`: this runs once per cycle over the whole history."""
    usage = context = None
    cost = None
    reverts = 0
    for line in evidence_lines(entry_text):
        if line.startswith("tokens: "):
            usage = usage or parse_usage(line)
        elif line.startswith("runner: context "):
            context = context or parse_context(line)
        elif line[:4].lower() == "cost" or line.startswith("runner: cost"):
            cost = cost if cost is not None else parse_cost(line)
        elif "evert" in line or line.startswith("runner: "):
            reverts += is_revert_note(line)
    if cost is None and usage is not None:
        cost = usage.cost
    return Facts(usage, context, cost, reverts)
