"""GM1xx: NOW blocks are short, well headed, and newest first."""
from __future__ import annotations

from collections.abc import Collection

from gitmem import codes
from gitmem.checks import written_times
from gitmem.checks.inputs import CheckInput, unreadable
from gitmem.checks.rule_inputs import changed_span
from gitmem.checks.violation import Violation, from_problem
from gitmem.memory import fences, now
from gitmem.memory.decoding import decode_text
from gitmem.memory.lines import nonblank_count


def _text_to_check(old: bytes | None, new: bytes) -> bytes:
    """NEW up to the end of OLD's top block when NEW only added blocks on top; else all of NEW.

    The new blocks need every rule, and OLD's top block is kept for the newest-first comparison;
    the rest of OLD was valid when committed and is never decoded.
    """
    _, end = changed_span(old, new)
    if end == len(new):
        return new
    # `end` starts OLD's top block; the text is cut where the next block starts (headings outside fences).
    after = fences.headings(new, b"## ", end, open_=fences.open_after(new, 0, end))
    after_old_top = next((at for at in after if at > end), None)
    return new if after_old_top is None else new[:after_old_top]


def check(inp: CheckInput, earlier: Collection[Violation] = ()) -> list[Violation]:
    skip = unreadable(earlier)
    path = inp.config.path("now")
    if path in skip:
        return []
    new = inp.new.read(path)
    if new is None:
        return []
    old = inp.old.read(path) if inp.old is not None else None
    doc = now.parse(decode_text(_text_to_check(old, new)))
    found = [from_problem(path, p) for p in doc.problems]
    limit = inp.config.limits.now_block_lines
    for block in doc.blocks:
        count = nonblank_count(block.body)
        if count > limit:
            found.append(Violation.of(codes.NOW_BLOCK_TOO_LONG, path, block.line, count=count, limit=limit))
    found += _times(inp, path, old, doc)
    return found


def _what(block: now.NowBlock) -> str:
    return f"the NOW block of cycle {block.cycle}" if block.cycle is not None else \
        f"the NOW plan for {block.plan_for}"


def _times(inp: CheckInput, path: str, old: bytes | None, doc: now.NowDoc) -> list[Violation]:
    """The rules on the blocks' times (gitmem.checks.written_times): a new block ahead of the clock, a block
    earlier than the one below it; under rules before 4, out of time order at all is an error (GM103)."""
    found: list[Violation] = []
    for newer, older in zip(doc.blocks, doc.blocks[1:], strict=False):
        if not written_times.by_position(inp):
            if newer.when.moment < older.when.moment:
                found.append(Violation.of(codes.NOW_NOT_NEWEST_FIRST, path, older.line, older=older.when,
                                          newer=newer.when))
        elif skew := written_times.skewed(path, newer.line, _what(newer), newer.when,
                                          _what(older).removeprefix("the "), older.when):
            found.append(skew)
    ahead = [v for block in doc.blocks
             if (v := written_times.dated_ahead_violation(inp, path, block.line, _what(block), block.when,
                                                          block.heading()))]
    if ahead:     # only blocks new in this change answer for their time: the old ones were judged when written
        known = {b.heading() for b in now.parse(decode_text(old)).blocks} if old is not None else set()
        lines = {b.line for b in doc.blocks if b.heading() in known}
        found += [v for v in ahead if v.line not in lines]
    return found
