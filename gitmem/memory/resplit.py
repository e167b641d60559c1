"""A sectioned file split again after an edit: only the lines that differ are read; the sections around them are
the earlier split's.

A close that marks three of 3,000 lessons promoted (100x) has LESSONS parsed as HEAD holds it, and again as
the close writes it, for the checks; the second parse would split 30,000 lines to find three changed sections.
Lines that two texts share at their start and at their end split the same way in both, as long as the fence
state where the shared end starts is the same: `split_sections` carries no other state from one heading of
its level to the next. So the earlier split's sections before the edit stand as they were, those after it
stand a number of lines lower or higher, and only the sections the edit touched are split again.

Whatever this cannot show to be that simple (the edit reaches the lines before the first section, a heading of
a higher level stands between sections, the edit leaves a fence open, the text has CR or a BOM) is answered
None, and the caller splits the whole text: `tests/memory/test_resplit.py` holds the two equal on edits of
every kind.
"""
from __future__ import annotations

from bisect import bisect_left
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import repeat

from gitmem.memory.common_ends import common_prefix, common_suffix
from gitmem.memory.fences import FENCE_MARKS
from gitmem.memory.sections import Section, split_sections


@dataclass(frozen=True)
class Resplit:
    """The new text's sections, as the earlier split's `kept` first ones, then `sections`, then the earlier
    split's sections from `moved` on, each `shift` lines lower (higher when negative)."""

    kept: int
    sections: list[Section]
    moved: int
    shift: int


def resplit(old: str, new: str, starts: Sequence[int], level: int) -> Resplit | None:
    """How `new` splits at headings of `level`, from how `old` did: `starts` are the 1-based lines of `old`'s
    sections' headings, in order, and the lines before the first of them were all `old`'s preamble. None when
    the edit is not one this can answer (see the module's docstring); then `split_sections(new)` must be asked."""
    if not starts or old == new or "\r" in old or "\r" in new or old.startswith("\ufeff") \
            or new.startswith("\ufeff"):
        return None
    same_start = common_prefix(old, new)
    first_changed = old.count("\n", 0, same_start)                   # 0-based: the first line that differs
    same_end = common_suffix(old, new, min(len(old), len(new)) - same_start)
    # The lines after the one holding the shared end's start are the same lines in both texts.
    last_changed_old = old.count("\n", 0, len(old) - same_end)
    last_changed_new = new.count("\n", 0, len(new) - same_end)
    shift = last_changed_new - last_changed_old
    # The first section split again: the last whose heading line is shared. Its heading stays a heading (the
    # lines before it and the fence state there are the same), so every section before it stands.
    kept = bisect_left(starts, first_changed + 1) - 1
    if kept < 0:
        return None
    # The first section that stands after the edit: the first whose heading lies in the shared end.
    moved = next((index for index in range(kept + 1, len(starts)) if starts[index] - 1 > last_changed_old),
                 len(starts))
    begin = _line_start(new, starts[kept] - 1, first_changed, same_start)
    if moved < len(starts):
        stop_line = starts[moved] - 1 + shift                       # 0-based, in `new`
        if stop_line <= starts[kept] - 1:
            return None
        stop = _line_start(new, stop_line, last_changed_new, len(new) - same_end)
        lines = new[begin:stop].split("\n")[:-1]        # the text ends with the line break before the heading
    else:
        lines = new[begin:].split("\n")
    preamble, sections = split_sections(lines, level, starts[kept])
    if preamble or not sections or sections[0].line != starts[kept]:
        return None
    if moved < len(starts) and sum(map(str.startswith, lines, repeat(FENCE_MARKS))) % 2:
        return None                                     # the edit leaves a fence open: what follows reads as code
    return Resplit(kept, sections, moved, shift)


def _line_start(text: str, line: int, known_line: int, known_at: int) -> int:
    """Where 0-based `line` of `text` starts, counted from `known_line`, the line that holds offset `known_at`:
    the lines between them are a section's at most, so the rest of the text is never walked."""
    at = text.rfind("\n", 0, known_at) + 1
    while known_line > line:
        at = text.rfind("\n", 0, at - 1) + 1
        known_line -= 1
    while known_line < line:
        at = text.index("\n", at) + 1
        known_line += 1
    return at
