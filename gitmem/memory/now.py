"""NOW.md: current state as blocks, newest first. A cycle reads only the top block."""
from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import field
from datetime import date

from gitmem import codes
from gitmem.memory.fences import first_heading, is_fence
from gitmem.memory.once import parsed_once
from gitmem.memory.text import (
    SEP,
    Entry,
    Field,
    Problem,
    Timestamp,
    decode_lines,
    headed,
    parse_fields,
    render_field,
    split_sections,
    split_timestamped_heading,
    strip_trailing_blank,
    title_problem,
)
from gitmem.records import record

TITLE = "# NOW"
_CYCLE_RE = re.compile(r"^cycle ([0-9]{1,18})$")  # as in LOG: at most 18 digits
_PLAN_RE = re.compile(r"^plan for ([0-9]{4}-[0-9]{2}-[0-9]{2})$")


@record(frozen=True)
class NowBlock(Entry):
    when: Timestamp
    cycle: int | None = None
    plan_for: date | None = None
    body: tuple[str, ...] = ()
    line: int = 0
    end: int = 0
    fields: tuple[Field, ...] = field(default=(), compare=False)

    @property
    def kind(self) -> str:
        return "plan" if self.plan_for is not None else "cycle"

    def heading(self) -> str:
        what = f"plan for {self.plan_for.isoformat()}" if self.plan_for else f"cycle {self.cycle}"
        return f"## {self.when}{SEP}{what}"


@record(frozen=True)
class NowDoc:
    preamble: tuple[str, ...]
    blocks: tuple[NowBlock, ...]
    problems: tuple[Problem, ...] = ()

    @property
    def top(self) -> NowBlock | None:
        return self.blocks[0] if self.blocks else None


def make_block(when: Timestamp, *, did: str, human: str, next: str, cycle: int | None = None,
               plan_for: date | None = None) -> NowBlock:
    body = [*render_field("Did", did), *render_field("Human", human), *render_field("Next", next)]
    # Fields are parsed here too, so they can be read before the block is written (lines count from 1).
    return NowBlock(when=when, cycle=cycle, plan_for=plan_for, body=tuple(body), fields=parse_fields(body, 1))


def parse_heading(title: str) -> tuple[Timestamp, int | None, date | None] | None:
    when, parts = split_timestamped_heading(title)
    if when is None or len(parts) != 1:
        return None
    if m := _CYCLE_RE.match(parts[0]):
        return when, int(m.group(1)), None
    if m := _PLAN_RE.match(parts[0]):
        try:
            return when, None, date.fromisoformat(m.group(1))
        except ValueError:
            return None
    return None


@parsed_once
def parse(text: str, *, max_blocks: int | None = None) -> NowDoc:
    """Parse NOW. `max_blocks` stops early: a cycle needs only the top block."""
    lines = decode_lines(text)
    if max_blocks is not None:
        lines = _leading_blocks(lines, max_blocks)
    preamble, sections = split_sections(lines, 2)
    problems: list[Problem] = []
    blocks: list[NowBlock] = []
    problems += title_problem(preamble, TITLE)
    for section, (when, cycle, plan_for) in headed(
            sections, parse_heading, problems, code=codes.NOW_HEADING_MALFORMED, marker="##", what="NOW"):
        blocks.append(NowBlock(when, cycle, plan_for, section.body, section.line, section.end,
                               parse_fields(section.body, section.body_start)))
    return NowDoc(tuple(preamble), tuple(blocks), tuple(problems))


def _leading_blocks(lines: tuple[str, ...], count: int) -> tuple[str, ...]:
    seen = 0
    for index in _heading_lines(lines):
        seen += 1
        if seen > count:
            return lines[:index]
    return lines


def _heading_lines(lines: tuple[str, ...]) -> Iterator[int]:
    """Indexes of the `## ` lines outside fenced code (`gitmem.memory.fences`)."""
    fenced = False
    for index, line in enumerate(lines):
        if is_fence(line):
            fenced = not fenced
        elif not fenced and line.startswith("## "):
            yield index


def grown_on_top(before: str, after: str) -> str | None:
    """The text `after` holds above `before`'s first block, when NOW only grew on top (the text from that block
    down is unchanged): what is new can then be parsed alone, and NOW's history (10 MB at 100x) is not read.
    None when `before` has no block or something below the top changed."""
    old = before.encode("utf-8")
    old_top = first_heading(old, b"## ")
    if old_top is None:
        return None
    kept, grown = old[old_top:], after.encode("utf-8")
    return grown[:len(grown) - len(kept)].decode("utf-8") if grown.endswith(kept) else None


def render(doc: NowDoc) -> str:
    parts = ["\n".join(strip_trailing_blank(doc.preamble)) or TITLE]
    parts.extend(block.render() for block in doc.blocks)
    return "\n\n".join(parts) + "\n"


def prepend_block(text: str, block: NowBlock) -> str:
    """Insert `block` above the current top block, leaving every other byte as it was."""
    lines = decode_lines(text)
    insert_at = next(_heading_lines(lines), None)
    rendered = block.render().split("\n")
    if insert_at is None:
        head = strip_trailing_blank(lines) or [TITLE]
        # A preamble written before fences were checked may leave one open: close it, or the block is code.
        closing = ["```"] if sum(1 for line in head if is_fence(line)) % 2 else []
        return "\n".join([*head, *closing, "", *rendered]) + "\n"
    return "\n".join([*lines[:insert_at], *rendered, "", *lines[insert_at:]])
