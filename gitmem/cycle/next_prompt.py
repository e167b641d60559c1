"""What `gitmem context` shows: the next cycle's prompt, its tokens counted exactly when an API key allows it.

With ANTHROPIC_API_KEY set (and not asked to stay offline), each part is counted by the Messages API; the first
failure of that count (no SDK, no network, a bad key) falls back to the offline estimate for the rest, and the
reason is kept for a warning. A prompt is never refused for want of an exact count.
"""
from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from gitmem.agents.base import CycleRequest
from gitmem.config import Config
from gitmem.cycle.budget import build_request, estimate_tokens, limits
from gitmem.workspace import Workspace


class ExactOrEstimate:
    """The Messages API counter; after its first failure, the offline estimate (the reason is kept)."""

    def __init__(self, config: Config) -> None:
        self.config = config
        self.exact: Callable[[str], int] | None = None
        self.failed: str | None = None

    def __call__(self, text: str) -> int:
        if self.exact is None and self.failed is None:
            try:
                from gitmem.agents.anthropic import api_token_counter

                self.exact = api_token_counter(self.config)
            except Exception as err:    # no SDK, no network, a bad key: the estimate still works
                self.failed = str(err)
        if self.exact is not None and self.failed is None:
            try:
                return self.exact(text)
            except Exception as err:
                self.failed = str(err)
        return estimate_tokens(text)


@dataclass(frozen=True)
class CountedPrompt:
    """The next cycle's request, how its tokens were counted (`exact` or `estimate`), and why an exact count was
    given up, if it was."""

    request: CycleRequest
    counting: str
    failed: str | None = None

    @property
    def warnings(self) -> tuple[str, ...]:
        """The exact count given up first, then the budget's own warnings (what it trimmed)."""
        given_up = (f"exact token count unavailable ({self.failed}); using the estimate",) if self.failed else ()
        return given_up + tuple(self.request.warnings)

    def to_dict(self) -> dict[str, Any]:
        """`gitmem context --json`: the cycle, the limits, each part with its tokens and text, the instructions."""
        request = self.request
        bounds = limits(request.config)
        return {
            "cycle": request.cycle, "timestamp": request.timestamp, "counting": self.counting,
            "limits": {"max_context_tokens": bounds.total, "soft": bounds.soft, "hard": bounds.hard},
            "total_tokens": request.total_tokens, "warnings": list(request.warnings),
            "parts": [{"name": p.name, "source": p.source, "tokens": p.tokens, "cacheable": p.cacheable,
                       "text": p.text} for p in request.parts],
            "instructions": {"tokens": request.instruction_tokens, "text": request.instructions},
        }


def next_prompt(ws: Workspace, *, cycle: int | None = None, backend: str | None = None,
                offline: bool = False) -> CountedPrompt:
    """The prompt `build_request` makes for `cycle` (default: the next one), counted exactly when ANTHROPIC_API_KEY
    is set (the client takes it from the environment) and not `offline`, else by the offline estimate.
    BudgetError over the hard limit, as a cycle would refuse."""
    exact = ExactOrEstimate(ws.config) if os.environ.get("ANTHROPIC_API_KEY") and not offline else None
    request = build_request(ws, cycle=cycle, count_tokens=exact or estimate_tokens, backend=backend)
    failed = exact.failed if exact is not None else None
    return CountedPrompt(request, "exact" if exact is not None and not failed else "estimate", failed)
