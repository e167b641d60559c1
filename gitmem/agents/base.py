"""The contract between the cycle runner and an agent backend."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from gitmem.config import Config
from gitmem.errors import GitmemError
from gitmem.workspace import Workspace


@dataclass(frozen=True)
class ContextPart:
    """One part of the reading budget, under a heading naming its source file and lines."""

    name: str            # rules | now | decisions | log | roadmap | extra
    source: str          # e.g. "RULES.md:1-42"
    text: str
    tokens: int = 0
    cacheable: bool = False   # the anthropic backend puts cache_control on these (RULES)


@dataclass(frozen=True)
class CycleRequest:
    """Everything a backend needs for one cycle. The prompt is complete: backends add nothing from memory."""

    cycle: int
    timestamp: str                   # the real clock, already rendered in the configured zone
    workspace: Workspace             # the work tree and the config of the memory being run
    parts: tuple[ContextPart, ...]   # the reading budget, in order
    instructions: str                # prompts/cycle.md, filled in
    deadline: float                  # time.monotonic() value after which the backend must stop
    max_turns: int
    max_tokens: int
    env: dict[str, str] = field(default_factory=dict)   # gitmem.cycle.budget.CYCLE_ENV
    warnings: tuple[str, ...] = ()   # budget warnings (soft limit, what was trimmed), for the runner to show
    instruction_tokens: int = 0      # tokens of `instructions`, counted like the parts
    total_tokens: int = 0            # parts + instructions
    clock: Any = None                # callable -> aware datetime for memory writes; None = the real clock

    @property
    def root(self) -> Path:
        return self.workspace.root

    @property
    def config(self) -> Config:
        return self.workspace.config

    def prompt_text(self) -> str:
        """The whole prompt as one text, for backends that take stdin (and for `gitmem context`)."""
        sections = [f"## {part.source}\n\n{part.text.rstrip()}" for part in self.parts]
        return "\n\n".join([*sections, self.instructions.rstrip()]) + "\n"


@dataclass
class AgentResult:
    turns: int = 0
    usage: dict[str, float] = field(default_factory=dict)   # input_tokens, output_tokens, …; cost_usd if reported
    notes: list[str] = field(default_factory=list)        # refused tool calls and the like, for LOG Evidence
    stop_reason: str = ""        # end_turn | max_turns | max_tokens | script_end: why the backend stopped
    diagnosis: str = ""          # why it may have logged nothing, as the backend can tell (a refusal, an error)


class AgentError(GitmemError):
    """The agent crashed, the API failed past its retries, or time ran out. The runner salvages."""


class Backend(Protocol):
    name: str

    def run(self, request: CycleRequest) -> AgentResult: ...
