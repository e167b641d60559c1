"""`opencode run --format json` read for a cycle's tokens, cost, last words and failure (gitmem.agents.cli_output).
The events are OpenCode 1.18.33's own, printed against the loopback fake (tests/e2e/test_opencode_cli.py runs it in a
cycle), trimmed of ids; the error event has the shape its run command prints for a `session.error`."""
from __future__ import annotations

import json

from gitmem.agents.cli_output import read_output


def event(kind: str, **part: object) -> str:
    return json.dumps({"type": kind, "timestamp": 1796558374117, "sessionID": "ses_x", "part": part})


def step(tokens: dict[str, object], cost: float = 0) -> str:
    return event("step_finish", type="step-finish", reason="tool-calls", tokens=tokens, cost=cost)


TOOL = json.dumps({"type": "tool_use", "part": {"type": "tool", "tool": "gitmem_log_entry", "state": {
    "status": "completed", "output": "LOG.md: appended ## 2026-12-06 11:59 UTC · cycle 1 · no-build"}}})


def test_each_steps_tokens_and_cost_are_summed_in_anthropics_sense() -> None:
    out = "\n".join([event("step_start", type="step-start"), TOOL,
                     step({"total": 1240, "input": 1200, "output": 40, "reasoning": 0,
                           "cache": {"write": 0, "read": 0}}, 0.0125),
                     event("text", type="text", text="done"),
                     step({"total": 2340, "input": 300, "output": 40, "reasoning": 12,
                           "cache": {"write": 500, "read": 1500}}, 0.0075)])
    reading = read_output(out)
    assert reading.structured and reading.turns == 2 and reading.error == ""
    assert reading.usage == {"input_tokens": 1500, "output_tokens": 80, "cache_read_input_tokens": 1500,
                             "cache_creation_input_tokens": 500, "cost_usd": 0.02}
    assert reading.last_words == "done"


def test_a_session_error_is_the_reason_the_run_failed() -> None:
    error = json.dumps({"type": "error", "timestamp": 1, "sessionID": "ses_x", "error": {
        "name": "APIError", "data": {"message": "Incorrect API key provided", "statusCode": 401}}})
    reading = read_output("\n".join([event("step_start", type="step-start"), error]))
    assert reading.error == "Incorrect API key provided" and reading.usage == {} and reading.turns == 0
    named = json.dumps({"type": "error", "sessionID": "ses_x", "error": {"name": "ProviderModelNotFoundError"}})
    assert read_output(step({"input": 1, "output": 1}) + "\n" + named).error == "ProviderModelNotFoundError"


def test_odd_token_values_count_as_nothing() -> None:
    reading = read_output(step({"input": "1200", "output": True, "cache": [1]}, cost=-1))
    assert reading.usage == {} and reading.turns == 1
