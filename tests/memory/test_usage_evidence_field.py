"""The spending readers (gitmem.memory.usage.evidence_lines) read the same Evidence field the runner appends its
`tokens:` line to (gitmem.cycle.postflight, through the field parser): the entry's first Evidence field as
gitmem.memory.fields.parse_fields reads it, whatever lines the agent put around it."""
from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from gitmem.memory.fields import parse_fields
from gitmem.memory.usage import evidence_lines

LINES = ("- Evidence: did it", "* Evidence: starred", "- Evidence:", "  tokens: input 1, output 0, total 1",
         "  runner: context 5 tokens of 60000 (estimate)", "  ", "", "\t tabbed", "- Task: Evidence: in a task",
         "* Task: Evidence: in a starred task", "  Evidence: indented", "  - Evidence: indented item",
         "-  Evidence: two spaces", "- evidence: lower case", "Evidence: at the start", "- Result: done")


def _first_evidence_field(text: str) -> list[str]:
    found = next((field for field in parse_fields(text.split("\n"), 0) if field.key == "Evidence"), None)
    return [line for line in found.value.split("\n") if line] if found is not None else []


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(LINES), max_size=10))
def test_the_evidence_read_is_the_field_the_parser_reads(lines: list[str]) -> None:
    text = "\n".join(lines)
    assert evidence_lines(text) == _first_evidence_field(text)
