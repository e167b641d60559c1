"""NOW.md: current state as blocks, newest first. A cycle reads only the top block."""
from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import field
from datetime import date
from functools import cache

from gitmem import codes
from gitmem.memory.decoding import decode_lines, encoded
from gitmem.memory.fences import first_heading, is_fence, open_after
from gitmem.memory.fields import Entry, Field, parse_fields, render_field
from gitmem.memory.lines import strip_trailing_blank
from gitmem.memory.once import parsed_once
from gitmem.memory.problems import Problem
from gitmem.memory.sections import SEP, headed, split_sections, split_timestamped_heading, title_problem
from gitmem.memory.timestamps import Timestamp
from gitmem.records import record

TITLE = "# NOW"
_CYCLE_RE = re.compile(r"^cycle ([0-9]{1,18})$")  # as in LOG: at most 18 digits


@cache
def _plan_re() -> re.Pattern[str]:
    """A close's plan block (`plan for <date>`); compiled on first use: a cycle's block reads as a cycle first."""
    return re.compile(r"^plan for ([0-9]{4}-[0-9]{2}-[0-9]{2})$")


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
    if m := _plan_re().match(parts[0]):
        try:
            return when, None, date.fromisoformat(m.group(1))
        except ValueError:
            return None
    return None


@parsed_once
def parse(text: str, *, max_blocks: int | None = None) -> NowDoc:
    """Parse NOW. `max_blocks` stops early: a cycle needs only the top block."""
    lines = decode_lines(text) if max_blocks is None else _leading_lines(text, max_blocks)
    preamble, sections = split_sections(lines, 2)
    problems: list[Problem] = []
    blocks: list[NowBlock] = []
    problems += title_problem(preamble, TITLE)
    for section, (when, cycle, plan_for) in headed(
            sections, parse_heading, problems, code=codes.NOW_HEADING_MALFORMED, marker="##", what="NOW"):
        blocks.append(NowBlock(when, cycle, plan_for, section.body, section.line, section.end,
                               parse_fields(section.body, section.body_start)))
    return NowDoc(tuple(preamble), tuple(blocks), tuple(problems))


# The first part of NOW split into lines when only its top blocks are read; doubled until they are in it.
TOP_READ = 1 << 16


def _leading_lines(text: str, count: int) -> tuple[str, ...]:
    """The lines above NOW's block number `count + 1`, split from the shortest prefix of whole lines that holds
    that block's heading: the blocks below it (NOW grows ten lines a cycle for ever, 10 MB at 100x) are never
    split into lines. Lines are counted from the top, so a prefix's fences and headings are the whole text's."""
    size = TOP_READ
    while True:
        cut = text.rfind("\n", 0, size) + 1 if size < len(text) else len(text)
        lines = decode_lines(text[:cut])
        whole = len(lines) - 1 if cut < len(text) else len(lines)      # a line the cut ends is not read
        found = _leading_blocks(lines[:whole], count)
        if len(found) < whole or cut == len(text):
            return found
        size *= 2


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
    down is unchanged, or its newest blocks are, as the runner keeps them: `old_blocks_at`): what is new can
    then be parsed alone, and NOW's history is not read. None when `before` has no block or something below the
    top changed."""
    grown = encoded(after)
    at = old_blocks_at(encoded(before), grown)
    return grown[:at].decode("utf-8") if at is not None else None


def old_blocks_at(before: bytes, after: bytes) -> int | None:
    """Where `after` holds `before`'s blocks when NOW only grew on top: every old block unchanged below the new
    text, or (rules 6, the runner keeping NOW's newest blocks: `volumes.keep_newest_blocks`) the newest of them,
    cut where an old block's heading was and ending in one newline. The offset in `after` of `before`'s top
    block; None when `before` has no block or anything else changed."""
    old_top = first_heading(before, b"## ")
    if old_top is None:
        return None
    kept = memoryview(before)[old_top:]
    if after.endswith(kept):
        return len(after) - len(kept)
    heading_end = before.find(b"\n", old_top)
    at = after.find(b"\n" + before[old_top:heading_end + 1]) + 1 if heading_end >= 0 else 0
    tail = memoryview(after)[at:]
    body = bytes(tail).rstrip(b"\n")
    if at <= 0 or len(body) + 1 != len(tail) or not before.startswith(body, old_top):
        return None
    cut = old_top + len(body)
    below = first_heading(before, b"## ", cut, open_=open_after(before, old_top, cut))
    return at if below is not None and not before[cut:below].strip(b"\n") else None


def render(doc: NowDoc) -> str:
    parts = ["\n".join(strip_trailing_blank(doc.preamble)) or TITLE]
    parts.extend(block.render() for block in doc.blocks)
    return "\n\n".join(parts) + "\n"


def prepend_block(text: str, block: NowBlock) -> str:
    """Insert `block` above the current top block, leaving every other byte as it was."""
    rendered = block.render().split("\n")
    if "\r" not in text:        # the lines above the top block split alone: the blocks below are kept as text
        above = _leading_lines(text, 0)
        body = text.removeprefix("\ufeff")
        at = sum(len(line) + 1 for line in above)
        if body.startswith("## ", at):        # the top block's heading: none when `above` is all of NOW
            return "\n".join([*above, *rendered, ""]) + "\n" + body[at:]
    lines = decode_lines(text)
    insert_at = next(_heading_lines(lines), None)
    if insert_at is None:
        head = strip_trailing_blank(lines) or [TITLE]
        # A preamble written before fences were checked may leave one open: close it, or the block is code.
        closing = ["```"] if sum(1 for line in head if is_fence(line)) % 2 else []
        return "\n".join([*head, *closing, "", *rendered]) + "\n"
    return "\n".join([*lines[:insert_at], *rendered, "", *lines[insert_at:]])
