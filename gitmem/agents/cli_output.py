"""What an agent CLI's output says about its run: token usage and cost, permission refusals, its last words.

Read from `claude -p --output-format json` (one result object: `usage`, `total_cost_usd`, `num_turns`,
`permission_denials`, `is_error`, `result`), from JSON lines (`claude -p --output-format stream-json`, whose last
object is that result; `codex exec --json`, whose `turn.completed` events carry usage), and from plain text,
where only refusals and the last line can be found. Pure text in, values out.
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
CLAUDE_USAGE = ("input_tokens", "output_tokens", "cache_read_input_tokens", "cache_creation_input_tokens")


@dataclass
class Reading:
    usage: dict[str, float] = field(default_factory=dict)    # token counts, and cost_usd when reported
    turns: int | None = None
    refusals: list[str] = field(default_factory=list)        # what was refused, e.g. "Bash: gitmem log add …"
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
    names = {"input_tokens": "input_tokens", "cached_input_tokens": "cache_read_input_tokens",
             "output_tokens": "output_tokens"}
    turns = 0
    for item in objects:
        usage = item.get("usage")
        if item.get("type") != "turn.completed" or not isinstance(usage, dict):
            continue
        turns += 1
        for key, name in names.items():
            if isinstance(usage.get(key), int):
                reading.usage[name] = int(reading.usage.get(name, 0)) + usage[key]
    if turns:
        reading.turns = turns
    for item in objects:
        inner = _mapping(item.get("item"))
        if inner.get("type") == "agent_message" and inner.get("text"):
            reading.last_words = _short(str(inner["text"]))


def _mapping(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _short(text: str, width: int = 200) -> str:
    line = " ".join(text.split())
    return line if len(line) <= width else line[:width - 1] + "…"
