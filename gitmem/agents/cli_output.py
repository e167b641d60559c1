"""What an agent CLI's output says about its run: token usage and cost, permission refusals, its last words.

Read from `claude -p --output-format json` (one result object: `usage`, `total_cost_usd`, `num_turns`,
`permission_denials`, `is_error`, `result`), from JSON lines (`claude -p --output-format stream-json`, whose last
object is that result; `codex exec --json`, whose `turn.completed` events carry usage, `turn.failed` the reason
a run failed, and `command_execution` items the shell commands and their exit codes; `opencode run --format json`,
whose `step_finish` events carry each model step's tokens and cost), and from plain text,
where only refusals and the last line can be found. Usage is kept in Anthropic's sense (input without the cache
reads), whichever provider reported it. Pure text in, values out.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from gitmem.config.nesting import loads_json

# Claude Code: "This command requires approval", "Claude requested permissions to use Bash, but you haven't
# granted it yet"; other CLIs word it alike.
REFUSAL_RE = re.compile(r"requires approval|haven't granted|have not granted|permission to use|approval required|"
                        r"not allowed by (?:your )?(?:permission|settings)|was denied permission", re.I)
# bash: "gitmem: command not found"; sh/dash: "gitmem: not found"
NOT_FOUND_RE = re.compile(r"command not found|: not found$", re.M)
CLAUDE_USAGE = ("input_tokens", "output_tokens", "cache_read_input_tokens", "cache_creation_input_tokens")
OPENCODE_STEP = "step_finish"      # `opencode run --format json`: one per model step, with its tokens and cost
OPENCODE_SESSION = "sessionID"     # a key of its every event (Claude Code and Qwen Code write `session_id`)


@dataclass
class Reading:
    usage: dict[str, float] = field(default_factory=dict)    # token counts, and cost_usd when reported
    turns: int | None = None
    refusals: list[str] = field(default_factory=list)        # what was refused, e.g. "Bash: gitmem log add …"
    not_started: list[str] = field(default_factory=list)     # shell commands whose program was not found (127)
    error: str = ""                                          # the CLI said its run failed
    last_words: str = ""                                     # its final message, or the last line of its output
    structured: bool = False                                 # read from JSON (last_words is its final message)


def read_output(out: str, err: str = "") -> Reading:
    reading = Reading()
    objects = _json_objects(out)
    reading.structured = bool(objects)
    result = next((o for o in reversed(objects) if o.get("type") == "result"), None)
    if result is not None:
        _claude_result(result, reading)
    elif any(OPENCODE_SESSION in o for o in objects):
        _opencode_events(objects, reading)
    else:
        _codex_events(objects, reading)
    if not reading.refusals:
        reading.refusals = [_short(line) for line in (out + "\n" + err).splitlines() if REFUSAL_RE.search(line)][:5]
    if not reading.last_words:
        reading.last_words = next((_short(line) for line in reversed(out.splitlines()) if line.strip()), "")
    return reading


def _json_objects(out: str) -> list[dict[str, Any]]:
    text = out.strip()
    if text.startswith(("{", "[")):
        try:
            whole = loads_json(text)
            return [o for o in (whole if isinstance(whole, list) else [whole]) if isinstance(o, dict)]
        except ValueError:
            pass
    found = []
    for line in text.splitlines():
        if not line.startswith("{"):
            continue
        try:
            item = loads_json(line)
        except ValueError:
            continue
        if isinstance(item, dict):
            found.append(item)
    return found


def _claude_result(result: dict[str, Any], reading: Reading) -> None:
    usage = _mapping(result.get("usage"))
    reading.usage = {key: int(usage[key]) for key in CLAUDE_USAGE if isinstance(usage.get(key), int)}
    cost = result.get("total_cost_usd")
    if isinstance(cost, (int, float)) and not isinstance(cost, bool):
        reading.usage["cost_usd"] = float(cost)
    turns = result.get("num_turns")
    reading.turns = turns if isinstance(turns, int) else None
    for denial in result.get("permission_denials") or []:
        if isinstance(denial, dict):
            tool = str(denial.get("tool_name") or "a tool")
            given = _mapping(denial.get("tool_input"))
            detail = given.get("command") or given.get("file_path") or ""
            reading.refusals.append(_short(f"{tool}: {detail}" if detail else tool))
    if result.get("is_error"):
        reading.error = _short(str(result.get("result") or result.get("subtype") or "error"))
    reading.last_words = _short(str(result.get("result") or ""))


def _codex_events(objects: list[dict[str, Any]], reading: Reading) -> None:
    """`codex exec --json`: usage per `turn.completed`, the reason in `turn.failed` (or, when no turn ended, the
    last `error` event: earlier ones are retries Codex recovers from), shell commands that could not start, and
    the last agent message."""
    turns, failed, errors = 0, "", []
    for item in objects:
        kind = item.get("type")
        if kind == "turn.completed" and isinstance(item.get("usage"), dict):
            turns += 1
            _openai_usage(item["usage"], reading.usage)
        elif kind == "turn.failed":
            failed = str(_mapping(item.get("error")).get("message") or "the turn failed")
        elif kind == "error" and item.get("message"):
            errors.append(str(item["message"]))
        inner = _mapping(item.get("item"))
        if kind == "item.completed" and inner.get("type") == "command_execution" and _not_found(inner):
            said = _first_line(inner.get("aggregated_output"))
            reading.not_started.append(_short(f"{inner.get('command')}: {said}"))
        if inner.get("type") == "agent_message" and inner.get("text"):
            reading.last_words = _short(str(inner["text"]))
    if turns:
        reading.turns = turns
    if failed or (errors and not turns):
        reading.error = _short(failed or errors[-1])


def _opencode_events(objects: list[dict[str, Any]], reading: Reading) -> None:
    """`opencode run --format json` (OpenCode 1.18: packages/opencode/src/cli/cmd/run.ts): per model step a
    `step_finish` event whose part holds `tokens` and `cost`. OpenCode has already counted them in Anthropic's
    sense (packages/opencode/src/session/index.ts, getUsage: `input` without the cache reads and writes, which
    are `cache.read` and `cache.write`; `reasoning` is a part of `output`). `text` events carry the assistant's
    words, an `error` event why the run failed."""
    steps, cost = 0, 0.0
    for item in objects:
        kind, part = item.get("type"), _mapping(item.get("part"))
        if kind == OPENCODE_STEP:
            steps += 1
            tokens = _mapping(part.get("tokens"))
            cache = _mapping(tokens.get("cache"))
            for name, value in (("input_tokens", tokens.get("input")), ("output_tokens", tokens.get("output")),
                                ("cache_read_input_tokens", cache.get("read")),
                                ("cache_creation_input_tokens", cache.get("write"))):
                if isinstance(value, int) and not isinstance(value, bool) and value > 0:
                    reading.usage[name] = int(reading.usage.get(name, 0)) + value
            spent = part.get("cost")
            if isinstance(spent, (int, float)) and not isinstance(spent, bool) and spent > 0:
                cost += float(spent)
        elif kind == "text" and part.get("text"):
            reading.last_words = _short(str(part["text"]))
        elif kind == "error":
            error = _mapping(item.get("error"))
            said = _mapping(error.get("data")).get("message") or error.get("name") or "the run failed"
            reading.error = _short(str(said))
    if cost:
        reading.usage["cost_usd"] = cost
    reading.turns = steps


def _openai_usage(usage: dict[str, Any], into: dict[str, float]) -> None:
    """Add an OpenAI usage object to `into`, in the names and sense gitmem counts in (Anthropic's): there the
    cache reads and writes are apart from `input_tokens`, while OpenAI's `input_tokens` already include them,
    so the uncached part is what remains (adding both would count the cache twice). `output_tokens` already
    include the reasoning tokens."""
    def count(key: str) -> int:
        value = usage.get(key)
        return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0

    cached, written = count("cached_input_tokens"), count("cache_write_input_tokens")
    parts = {"input_tokens": max(0, count("input_tokens") - cached - written), "output_tokens": count("output_tokens"),
             "cache_read_input_tokens": cached}
    if written:
        parts["cache_creation_input_tokens"] = written
    for name, value in parts.items():
        into[name] = int(into.get(name, 0)) + value


def _not_found(execution: dict[str, Any]) -> bool:
    """A shell command that could not start its program: exit 127, or the shell's "command not found"."""
    output = str(execution.get("aggregated_output") or "")
    return execution.get("exit_code") == 127 or NOT_FOUND_RE.search(output) is not None


def _first_line(text: Any) -> str:
    return next((line.strip() for line in str(text or "").splitlines() if line.strip()), "no output")


def _mapping(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _short(text: str, width: int = 200) -> str:
    line = " ".join(text.split())
    return line if len(line) <= width else line[:width - 1] + "…"
