"""What a cycle spent, as its LOG entry's Evidence records it: pure text in, numbers out.

The runner appends its own lines to the end of the entry's `- Evidence:` field (gitmem.cycle.postflight), after
whatever the agent wrote there: the token usage the backend reported (`tokens: input 1200, output 300,
cache_read_input_tokens 900, total 2400`, with `cost_usd 0.0123` when the backend reported a cost). A cost may
also stand on a line of its own (`cost: $0.42`), where an agent or backend logged one.

The agent writes the same field, so a `tokens:` line of its own (`tokens: total 1`) is text it chose. What counts
is the LAST `tokens:` line of the field, which is the runner's: the runner writes one on every cycle
(`tokens: not reported`, which counts as unknown, when the backend reported nothing). A cost on it wins over any
`cost:` line, and otherwise the last `cost:` line counts. Both the fleet's budget and a cycle's own
daily cap (gitmem.cycle.allowance) and `gitmem report` read spending through `recorded`.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from gitmem.memory.fields import parse_fields

_COST_RE = re.compile(r"^(?:runner: )?(?:total )?cost(?: usd)?:? \$?([0-9]+(?:\.[0-9]+)?)(?: ?USD)?\b", re.I)
_PAIR_RE = re.compile(r"^([A-Za-z_]+) ([0-9]+(?:\.[0-9]+)?)$")
TOKENS_PREFIX = "tokens: "


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
class Recorded:
    """What one entry's Evidence says the cycle spent: the counted `tokens:` line (None when there is none, or
    the last one does not parse) and the counted cost."""

    usage: TokenUsage | None = None
    cost: float | None = None


def evidence_lines(entry_text: str) -> list[str]:
    """The lines of the entry's Evidence field, trimmed: its first one, as the field parser reads it
    (gitmem.memory.fields.parse_fields), which is the field the runner appends its lines to. A line the parser
    leaves outside it (past a blank or whitespace-only line, or in a second Evidence field) is the agent's text,
    so a `tokens:` line there never stands after the runner's."""
    at = entry_text.find("Evidence:")
    while at >= 0:
        # This runs once per cycle of history, so only the lines from the one holding "Evidence:" up to the next
        # list item are parsed: a line starting `- ` or `* ` never continues a field, and each field line is one.
        start = entry_text.rfind("\n", 0, at) + 1
        end = entry_text.find("\n- ", at)
        star = entry_text.find("\n* ", at, end if end >= 0 else len(entry_text))
        if star >= 0 or end < 0:
            end = star if star >= 0 else len(entry_text)
        for field in parse_fields(entry_text[start:end].split("\n"), 0):
            if field.key == "Evidence":
                return [line for line in field.value.split("\n") if line]
        at = entry_text.find("Evidence:", end)
    return []


def parse_usage(line: str) -> TokenUsage | None:
    """`tokens: input 1200, output 300, cache_read_input_tokens 900, total 2400` -> TokenUsage(2400, {...})."""
    if not line.startswith(TOKENS_PREFIX):
        return None
    values: dict[str, float] = {}
    for part in line[len(TOKENS_PREFIX):].split(", "):
        match = _PAIR_RE.match(part.strip())
        if match is None:
            return None
        number = float(match.group(2))
        values[match.group(1)] = int(number) if number.is_integer() and "cost" not in match.group(1) else number
    total = values.pop("total", None)
    if total is None:
        total = sum(v for k, v in values.items() if "cost" not in k)
    return TokenUsage(int(total), values)


def parse_cost(line: str) -> float | None:
    match = _COST_RE.match(line)
    return float(match.group(1)) if match else None


def is_cost_line(line: str) -> bool:
    return line[:4].lower() == "cost" or line.startswith("runner: cost")


def recorded(lines: list[str]) -> Recorded:
    """The spending `lines` (an entry's Evidence, from `evidence_lines`) record: the last `tokens:` line, and
    its cost or else the last `cost:` line's. An earlier `tokens:` line is the agent's text, never counted."""
    last_tokens = next((line for line in reversed(lines) if line.startswith(TOKENS_PREFIX)), None)
    usage = parse_usage(last_tokens) if last_tokens is not None else None
    cost = usage.cost if usage is not None else None
    if cost is None:
        cost = next((found for line in reversed(lines) if is_cost_line(line)
                     and (found := parse_cost(line)) is not None), None)
    return Recorded(usage, cost)
