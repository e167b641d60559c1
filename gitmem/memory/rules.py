"""RULES.md: free text, then `## Proven rules` (one line each) and `## Retired`. Loaded whole every cycle."""
from __future__ import annotations

import re
from dataclasses import dataclass, replace
from datetime import date

from gitmem import codes
from gitmem.memory.decoding import decode_lines
from gitmem.memory.digits import parses_with_ascii_digits
from gitmem.memory.lines import strip_trailing_blank
from gitmem.memory.once import parsed_once
from gitmem.memory.problems import Problem
from gitmem.memory.sections import SEP, split_heading, split_sections

PROVEN, RETIRED = "Proven rules", "Retired"
_ID_RE = re.compile(r"^R-([0-9]{2,18})$")
_FROM_RE = re.compile(r"^from (L-[0-9]{4,18}); cycles? ([0-9]{1,18}(?:, ?[0-9]{1,18})*)$")
_SUPERSEDED_RE = re.compile(r"^superseded by (R-[0-9]{2,}) on ([0-9]{4}-[0-9]{2}-[0-9]{2})$")
_RETIRED_RE = re.compile(r"^retired on ([0-9]{4}-[0-9]{2}-[0-9]{2}): (.+)$")
_TAIL_RE = re.compile(r"^(.*\S) \(([^()]*)\)$")


@dataclass(frozen=True)
class Rule:
    id: str
    text: str
    provenance: str          # "human", "from L-0012; cycles 160, 230", "superseded by …", "retired on …"
    section: str
    line: int = 0

    @property
    def number(self) -> int:
        return int(self.id[2:])

    @property
    def lesson(self) -> str | None:
        match = _FROM_RE.match(self.provenance)
        return match.group(1) if match else None

    @property
    def cycles(self) -> tuple[int, ...]:
        match = _FROM_RE.match(self.provenance)
        return tuple(int(c) for c in re.split(r", ?", match.group(2))) if match else ()

    @property
    def superseded_by(self) -> str | None:
        match = _SUPERSEDED_RE.match(self.provenance)
        return match.group(1) if match else None

    @property
    def retired_on(self) -> date | None:
        """The day a retired rule was retired or superseded (None for a proven rule, or a day that does not exist)."""
        match = _SUPERSEDED_RE.match(self.provenance) or _RETIRED_RE.match(self.provenance)
        if match is None:
            return None
        try:
            return date.fromisoformat(match.group(2 if match.re is _SUPERSEDED_RE else 1))
        except ValueError:
            return None

    def render(self) -> str:
        return f"- {self.id}{SEP}{self.text} ({self.provenance})"

    def content(self) -> str:
        return f"{self.id} {self.text} ({self.provenance})"


@dataclass(frozen=True)
class RulesDoc:
    preamble: tuple[str, ...]
    proven: tuple[Rule, ...]
    retired: tuple[Rule, ...]
    section_lines: dict[str, int]
    line_count: int
    problems: tuple[Problem, ...] = ()
    extra_lines: dict[str, tuple[str, ...]] | None = None

    @property
    def all(self) -> tuple[Rule, ...]:
        return self.proven + self.retired

    def find(self, rule_id: str) -> Rule | None:
        return next((r for r in self.all if r.id == rule_id), None)

    def next_id(self) -> str:
        return format_id(max((r.number for r in self.all), default=0) + 1)


def format_id(number: int) -> str:
    return f"R-{number:02d}"


def _valid_provenance(section: str, provenance: str) -> bool:
    if section == PROVEN:
        return provenance == "human" or bool(_FROM_RE.match(provenance))
    return bool(_SUPERSEDED_RE.match(provenance) or _RETIRED_RE.match(provenance))


def parse_rule_line(line: str, number: int, section: str) -> Rule | Problem:
    if not line.startswith("- "):
        return Problem.of(codes.RULE_NOT_ONE_LINE, number, section=section)
    rule = _rule(line, number, section)
    if rule is None:
        variant = ("digits" if parses_with_ascii_digits(line, lambda folded: _rule(folded, number, section))
                   else "proven" if section == PROVEN else "retired")
        return Problem.of(codes.RULE_LINE_MALFORMED, number, variant, section=section)
    return rule


def _rule(line: str, number: int, section: str) -> Rule | None:
    parts = split_heading(line[2:], 1)
    tail = _TAIL_RE.match(parts[1].strip()) if len(parts) == 2 else None
    if not _ID_RE.match(parts[0]) or tail is None or not _valid_provenance(section, tail.group(2)):
        return None
    return Rule(parts[0], tail.group(1), tail.group(2), section, number)


@parsed_once
def parse(text: str) -> RulesDoc:
    lines = decode_lines(text)
    preamble, sections = split_sections(lines, 2)
    problems: list[Problem] = []
    found: dict[str, list[Rule]] = {PROVEN: [], RETIRED: []}
    section_lines: dict[str, int] = {}
    extra: dict[str, tuple[str, ...]] = {}
    # Free-text sections before `## Proven rules` belong to the preamble (identity, priorities...).
    free: list[str] = list(preamble)
    for section in sections:
        if section.title not in found:
            if section_lines:
                problems.append(Problem.of(codes.RULES_SECTION_ORDER, section.line, title=section.title,
                                           proven=PROVEN))
            free.extend([f"## {section.title}", *section.body])
            continue
        section_lines[section.title] = section.line
        comments: list[str] = []
        in_comment = False
        for offset, line in enumerate(section.body):
            number = section.body_start + offset
            stripped = line.strip()
            if in_comment or stripped.startswith("<!--"):
                in_comment = "-->" not in stripped
                comments.append(line)
                continue
            if not stripped:
                continue
            parsed = parse_rule_line(line, number, section.title)
            if isinstance(parsed, Problem):
                problems.append(parsed)
            else:
                found[section.title].append(parsed)
        extra[section.title] = tuple(comments)
    if PROVEN not in section_lines:
        problems.append(Problem.of(codes.RULES_PROVEN_MISSING, len(lines), proven=PROVEN))
    line_count = len(lines) - (1 if lines and lines[-1] == "" else 0)
    return RulesDoc(tuple(free), tuple(found[PROVEN]), tuple(found[RETIRED]), section_lines, line_count,
                    tuple(problems), extra)


def render(doc: RulesDoc) -> str:
    parts = ["\n".join(strip_trailing_blank(doc.preamble))]
    for name, items in ((PROVEN, doc.proven), (RETIRED, doc.retired)):
        lines = [f"## {name}", *(doc.extra_lines or {}).get(name, ()), *(r.render() for r in items)]
        parts.append("\n".join(lines))
    return "\n\n".join(p for p in parts if p) + "\n"


def add_proven(doc: RulesDoc, rule: Rule) -> RulesDoc:
    return replace(doc, proven=(*doc.proven, replace(rule, section=PROVEN)))


def retire(doc: RulesDoc, rule_id: str, *, superseded_by: str | None = None, reason: str | None = None,
           on: date) -> RulesDoc:
    rule = next((r for r in doc.proven if r.id == rule_id), None)
    if rule is None:
        raise KeyError(f"rule {rule_id} is not a proven rule")
    provenance = (f"superseded by {superseded_by} on {on.isoformat()}" if superseded_by
                  else f"retired on {on.isoformat()}: {reason or 'no reason given'}")
    retired = replace(rule, provenance=provenance, section=RETIRED)
    return replace(doc, proven=tuple(r for r in doc.proven if r.id != rule_id), retired=(*doc.retired, retired))
