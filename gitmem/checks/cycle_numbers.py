"""GM105: NOW and LOG agree on cycle numbers.

A cycle is opened by its LOG entry or its NOW block, whichever is written first, and the next cycle is LOG's last
plus one. So a new NOW block names a cycle LOG has, or the next one: a block for a cycle that LOG skipped, or one
ahead of LOG (a client adding blocks in a loop), is an error that says which numbers LOG has. Only blocks new in
the change are judged; what was committed before stays as it was.
"""
from __future__ import annotations

from collections.abc import Collection

from gitmem import codes
from gitmem.checks.inputs import CheckInput, unreadable
from gitmem.checks.violation import Violation
from gitmem.memory import log, now
from gitmem.memory.decoding import decode_file_text


def check(inp: CheckInput, earlier: Collection[Violation] = ()) -> list[Violation]:
    skip = unreadable(earlier)
    path, log_path = inp.config.path("now"), inp.config.path("log")
    if path in skip or log_path in skip:
        return []
    new = inp.new.read(path)
    # No LOG to agree with here (a write judged alone, a LOG GM301 reports gone): nothing to say, so NOW (10 MB
    # at 100x) is not decoded either.
    log_data = inp.new.read(log_path)
    if new is None or log_data is None:
        return []
    old = inp.old.read(path) if inp.old is not None else None
    new_text = decode_file_text(new)      # decoded once per process: NOW is 10 MB at 100x
    # NOW grows on top: the blocks above the old top block are parsed alone (NOW's history is never read).
    region = now.grown_on_top(decode_file_text(old), new_text) if old else None
    known = set() if region is not None else {b.heading() for b in now.parse(decode_file_text(old)).blocks} if old \
        else set()
    doc = now.parse(region if region is not None else new_text)
    added = [b for b in doc.blocks if b.cycle is not None and b.heading() not in known]
    if not added or doc.problems:
        return []
    source = log.BytesSource(log_data, numbered=False)
    tail = log.tail_entries(source, log.has_cycle, block=log.LAST_ENTRY_BLOCK)
    last = max((e.cycle for e in tail.entries if e.cycle is not None), default=0)
    past = [block.cycle for block in added if block.cycle is not None and block.cycle <= last]
    logged = _logged(source, min(past), tail) if past else set()
    found: list[Violation] = []
    for block in added:
        assert block.cycle is not None
        if block.cycle > last + 1:
            found.append(Violation.of(codes.NOW_CYCLE_NOT_IN_LOG, path, block.line, "ahead", cycle=block.cycle,
                                      last=last, next=last + 1))
        elif block.cycle <= last and block.cycle not in logged:
            found.append(Violation.of(codes.NOW_CYCLE_NOT_IN_LOG, path, block.line, cycle=block.cycle,
                                      next=last + 1))
    return found


def _logged(source: log.BytesSource, since: int, tail: log.Tail) -> set[int]:
    """The cycles LOG has entries for, reading back from its end only as far as cycle `since`: one read for all
    the blocks judged. (A read per block made a NOW judged whole, as on a first commit or a naive full check,
    read LOG's tail once for each of its blocks: quadratic, a minute at 1x.)

    `tail` is the read that found LOG's last cycle. Reads grow from the same first block, so when it already
    goes back before `since` it is the very read this one would make (the usual commit: a NOW block for the
    cycle just logged), and LOG's tail is not parsed twice."""
    def reaches(entries: tuple[log.LogEntry, ...]) -> bool:
        return any(e.cycle is not None and e.cycle < since for e in entries)

    if not (tail.whole or reaches(tail.entries)):
        tail = log.tail_entries(source, reaches, block=log.LAST_ENTRY_BLOCK)
    return {e.cycle for e in tail.entries if e.cycle is not None}
