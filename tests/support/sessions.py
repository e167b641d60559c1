"""Interactive sessions for the tests: Claude Code's hook JSON fed to `gitmem hook …` processes, and memory at
its caps (RULES full, many decisions, long lines) to hold the session context to its size."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

GITMEM = Path(sys.executable).parent / "gitmem"


@dataclass
class HookRun:
    code: int
    out: str
    err: str

    @property
    def output(self) -> dict[str, Any] | None:
        return json.loads(self.out) if self.out.strip() else None

    @property
    def context(self) -> str:
        assert self.output is not None, self.err
        return str(self.output["hookSpecificOutput"]["additionalContext"])


def hook(event: str, cwd: Path, *, session: str = "s-1", env: dict[str, str] | None = None, raw: str | None = None,
         timeout: float = 120, **fields: Any) -> HookRun:
    """`gitmem hook EVENT` with the JSON Claude Code sends (session_id, cwd, hook_event_name, and `fields`)."""
    names = {"session-start": "SessionStart", "stop": "Stop"}
    payload = {"session_id": session, "transcript_path": str(cwd / ".transcript.jsonl"), "cwd": str(cwd),
               "hook_event_name": names[event], **fields}
    environment = {k: v for k, v in os.environ.items() if k not in ("GITMEM_CYCLE", "CLAUDE_PROJECT_DIR")}
    done = subprocess.run([str(GITMEM), "hook", event], input=raw if raw is not None else json.dumps(payload),
                          cwd=cwd, env={**environment, **(env or {})}, capture_output=True, text=True, timeout=timeout)
    return HookRun(done.returncode, done.stdout, done.stderr)


def capped_rules(limit_lines: int = 200, proven: int = 30, width: int = 400) -> str:
    """A valid RULES file at its caps: `proven` one-line rules of about `width` characters, padded with free text
    to `limit_lines` lines."""
    rules = [f"- R-{n:02d} · rule {n}: " + ("always measure before and after a change, and say so in Evidence; "
                                             * 10)[:width] + f" (from L-{n:04d}; cycles {n}, {n + 1})"
             for n in range(1, proven + 1)]
    head = ["# RULES", "", "## Who I am", "- Name: Wren", "", "## How I work"]
    tail = ["", "## Proven rules", *rules, "", "## Retired", ""]
    filler = [f"- note {n}: keep the product small and the memory honest." for n in
              range(limit_lines - len(head) - len(tail))]
    return "\n".join([*head, *filler, *tail])


def lessons_for(proven: int = 30) -> str:
    """LESSONS holding the lessons `capped_rules` names in its provenance."""
    items = [f"## L-{n:04d} · lesson {n}\n- Happened: 2026-11-01 (cycle {n}) — it went wrong\n- Why: a reason\n"
             f"- Change: a change\n- Rule: rule {n}\n" for n in range(1, proven + 1)]
    return "# LESSONS\n\n" + "\n".join(items)


def crowded_memory(pending: int = 18, resolved: int = 40, width: int = 600) -> dict[str, str]:
    """DECISIONS, NOW and LOG far past what a session can be shown: many decisions, long lines, long entries.
    Pending stays within what `gitmem check` allows (limits.pending_max, and its share of the context)."""
    long = ("the export must stream rows instead of building the whole file in memory, " * 20)[:width]
    asked = [f"### D-{n:04d} · Should the agent {long[:150]}? ({n})\n- Asked: 2026-11-{1 + n % 28:02d} 09:00 UTC "
             f"(cycle {n})\n- Context: {long}\n- Recommendation: yes: {long}" for n in range(1, pending + 1)]
    # Titles as long as a decision's may be (GM214: 200 characters), no longer: valid memory, at its caps.
    answered = [f"### D-{n:04d} · {f'Old question {n}: {long}'[:200]}\n- Asked: 2026-10-01 09:00 UTC (cycle {n})\n"
                f"- Recommendation: {long[:100]}\n- Answer: yes, {long}\n- Answered: 2026-10-02 09:00 UTC by Ada "
                "Human <ada@example.com>" for n in range(pending + 1, pending + resolved + 1)]
    decisions_md = "\n\n".join(["# DECISIONS", "## Pending", *asked, "## Resolved", *answered]) + "\n"
    now_md = ("# NOW\n\n## 2026-11-29 10:00 UTC · cycle 120\n" + "".join(
        f"- {key}: {long}\n" for key in ("Did", "Human", "Next")) + "".join(f"  {long}\n" for _ in range(6)))
    entries = [f"## 2026-11-29 {8 + n:02d}:00 UTC · cycle {115 + n} · built\n- Task: {long}\n- Result: {long}\n"
               for n in range(1, 6)]
    log_md = "# LOG\n\n" + "\n".join(entries)
    return {"DECISIONS.md": decisions_md, "NOW.md": now_md, "LOG.md": log_md}
