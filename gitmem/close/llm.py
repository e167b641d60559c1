"""The close's optional model: it words rules, spots contradictions, and writes the prose. It decides nothing.

Eligibility is settled in code before any call; a bad or missing answer falls back to the offline path.
`anthropic` is imported inside the functions (it takes seconds to import and is never needed offline).
"""
from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from typing import Any

from gitmem.close.gates import RULE_MAX_CHARS, Candidate
from gitmem.config.nesting import loads_json
from gitmem.memory.lines import one_line
from gitmem.memory.rules import Rule
from gitmem.secrets import scrub_data

_JSON_RE = re.compile(r"\{.*\}", re.S)
DEFAULT_PROSE = ("You are closing the day {date} for an autonomous agent. Write like a careful human reviewer: "
                 "short, exact, readable in a minute. Use only the facts given below; do not invent numbers.")


def api_key_set() -> bool:
    return bool(os.environ.get("ANTHROPIC_API_KEY"))


@dataclass
class Usage:
    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    errors: list[str] = field(default_factory=list)

    def describe(self, model: str) -> str:
        text = f"{model}: {self.calls} call(s), {self.input_tokens} input / {self.output_tokens} output tokens"
        return text + (f"; fell back offline after {', '.join(self.errors)}" if self.errors else "")


class CloseModel:
    """One client for the whole close. Errors are recorded by class name only, so no key can leak."""

    def __init__(self, model: str, client: Any = None) -> None:
        self.model = model
        self.usage = Usage()
        self._client = client

    def _ask(self, system: str, payload: dict[str, Any], max_tokens: int = 1500) -> dict[str, Any] | None:
        import anthropic

        if self._client is None:
            self._client = anthropic.Anthropic(timeout=120.0, max_retries=3)
        # The payload quotes memory (entries, lessons, rules): a secret that reached it past the hooks is masked
        # before it leaves the machine, as in everything else the close writes or shows.
        sent = json.dumps(scrub_data(payload), ensure_ascii=False, indent=1)
        try:
            reply = self._client.messages.create(
                model=self.model, max_tokens=max_tokens, system=system,
                messages=[{"role": "user", "content": sent}])
        except anthropic.APIError as err:
            status = getattr(err, "status_code", None)
            self.usage.errors.append(type(err).__name__ + (f" {status}" if status else ""))
            return None
        self.usage.calls += 1
        self.usage.input_tokens += getattr(reply.usage, "input_tokens", 0) or 0
        self.usage.output_tokens += getattr(reply.usage, "output_tokens", 0) or 0
        text = "".join(getattr(block, "text", "") for block in reply.content)
        match = _JSON_RE.search(text)
        try:
            data = loads_json(match.group(0)) if match else None
        except ValueError:
            data = None
        if not isinstance(data, dict):
            self.usage.errors.append("an answer that was not JSON")
            return None
        return data

    def rules(self, candidates: list[Candidate], existing: tuple[Rule, ...],
              fallback: dict[str, str]) -> tuple[dict[str, str], dict[str, list[tuple[str, str]]]]:
        """One line per eligible lesson, and which existing rules each would contradict.

        A line that is empty or too long keeps the offline text (the lesson's Rule: line).
        """
        if not candidates:
            return dict(fallback), {}
        system = ("You maintain the proven rules of an autonomous agent. For each lesson, write the rule it "
                  f"teaches as ONE imperative line of at most {RULE_MAX_CHARS} characters, no parentheses. "
                  "Then say which existing rules each new rule contradicts (a real conflict, not overlap). "
                  'Answer JSON only: {"rules": {"L-0001": "rule"}, "conflicts": '
                  '[{"lesson": "L-0001", "rule": "R-01", "why": "one line"}]}')
        payload = {"lessons": [{"id": c.lesson.id, "title": c.lesson.title, "text": c.lesson.render()}
                               for c in candidates],
                   "existing_rules": [{"id": r.id, "text": r.text} for r in existing]}
        data = self._ask(system, payload) or {}
        texts = dict(fallback)
        worded = data.get("rules")
        worded = worded if isinstance(worded, dict) else {}
        for lesson_id, text in worded.items():
            line = one_line(str(text))
            if lesson_id in texts and line and len(line) <= RULE_MAX_CHARS:
                texts[lesson_id] = line
        known = {r.id for r in existing}
        conflicts: dict[str, list[tuple[str, str]]] = {}
        for item in data.get("conflicts") or []:
            if not isinstance(item, dict):
                continue
            lesson_id, rule_id = str(item.get("lesson", "")), str(item.get("rule", ""))
            if lesson_id in texts and rule_id in known:
                conflicts.setdefault(lesson_id, []).append((rule_id, one_line(str(item.get("why", "")))))
        return texts, conflicts

    def prose(self, template: str, day: str, facts: dict[str, Any]) -> tuple[str, str, str] | None:
        """(summary, first task tomorrow, why) written from the facts, or None to keep the offline text."""
        system = (template.replace("{date}", day).rstrip() + "\n\n"
                  'Answer JSON only: {"summary": "2 to 4 sentences", "plan_task": "one task", '
                  '"plan_why": "one sentence"}')
        data = self._ask(system, facts)
        if not data:
            return None
        parts = tuple(one_line(str(data.get(key) or "")) for key in ("summary", "plan_task", "plan_why"))
        return parts if all(parts) else None  # type: ignore[return-value]
