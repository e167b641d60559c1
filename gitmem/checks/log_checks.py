"""GM3xx: LOG is append-only, in time order, with strictly increasing cycles, and every cycle says what it did."""
from __future__ import annotations

from collections.abc import Collection
from dataclasses import replace

from gitmem import codes
from gitmem.checks import volume_checks
from gitmem.checks.inputs import CheckInput, unreadable
from gitmem.checks.log_entries import entry_rules, rules_below
from gitmem.checks.violation import Violation, from_problem
from gitmem.gitio import Snapshot
from gitmem.memory import fences, log
from gitmem.memory.decoding import decode_text

# The fence state at the end of a LOG, remembered on the snapshot that holds it (`Snapshot.facts`).
FENCE_OPEN_AT_END = "fence-open-at-end"
AMENDS = log.AMENDS.encode()
# The append judged against the old LOG (`judged_append`), remembered on the old side by the new bytes judged (a
# key of the old side, not the new: in `verify` each new side is the next one's old, and would hold them all).
APPEND_JUDGED = "append-judged"


def open_at(snapshot: Snapshot | None, path: str, data: bytes, end: int) -> bool:
    """Whether data[:end] (the old LOG) leaves a code fence open: remembered on `snapshot` when a check of it
    already knows, else one scan (`find` speed) of the old LOG."""
    known = snapshot.facts.get((FENCE_OPEN_AT_END, path)) if snapshot is not None else None
    if isinstance(known, bool):
        return known
    return fences.open_after(data, 0, end)


def judged_append(old: Snapshot, path: str, new: bytes) -> tuple[int | None, log.Append]:
    """(the old LOG's length when it is, byte for byte, the start of `new`, else None; whether `new` is the old LOG
    with entries appended), judged once for this old side and these new bytes: the LOG rules judge it, and so do
    GM407 (gitmem.checks.lesson_cycles, for the entries appended) and the close's commit guard after them."""
    judged = old.facts.setdefault((APPEND_JUDGED, path), {})
    assert isinstance(judged, dict)
    known = judged.get(id(new))
    if known is not None and known[0] is new:       # the bytes themselves are kept: their id is not reused
        return known[1], known[2]
    prefix = old.prefix_length(path, new)
    verdict = log.judge_append(new, prefix, old=lambda: old.read(path) or b"",
                               open_at=lambda at: open_at(old, path, new, at))
    judged[id(new)] = (new, prefix, verdict)
    return prefix, verdict


def check(inp: CheckInput, earlier: Collection[Violation] = ()) -> list[Violation]:
    return _judged(inp, earlier, seal_tried=False)


def _judged(inp: CheckInput, earlier: Collection[Violation], *, seal_tried: bool) -> list[Violation]:
    """`check`; `seal_tried` when one side is already the other seen through the change's seal (rules 6): a change
    is one seal, never a seal of a seal, so its LOG is judged against that side once, as an append."""
    skip = unreadable(earlier)
    path = inp.config.path("log")
    if path in skip:
        return []
    had_log = inp.old is not None and (inp.old.oid(path) is not None or inp.old.exists(path))
    new = inp.new.read(path)
    if not had_log:
        if new is None:
            return []
        text = decode_text(new)
        doc = log.parse(text)
        inp.new.facts[(FENCE_OPEN_AT_END, path)] = fences.open_after(new)
        return _amended(path, new, doc.entries, [from_problem(path, p) for p in doc.problems]
                        + entry_rules(inp, path, log.live(doc.entries), None, None) + _unclosed(path, text, False, 1))
    old = inp.old
    assert old is not None
    if new is None:
        return [_not_append_only(path, log.judge_append(None, None, old=lambda: b""))]
    prefix, verdict = judged_append(old, path, new)
    if prefix is None:
        repaired = _undecodable_repaired(old.read(path), new)
        if repaired is not None:      # the old LOG's bytes that were no text, each now U+FFFD: judged as its append
            return _judged(replace(inp, old=old.with_file(path, repaired)), earlier, seal_tried=False)
    if not verdict.ok and inp.generation >= volume_checks.SEALS_FROM and not seal_tried:
        base = volume_checks.proven_base(inp)
        if base is not None:      # a seal (rules 6): the new LOG.md appends to what the old one keeps
            return _judged(replace(inp, old=old.with_file(path, base, seen_as="sealed")), earlier, seal_tried=True)
        whole = volume_checks.unsealed_new(inp)
        if whole is not None:     # a seal that took entries it appends too (a squash): its whole history appends
            return _judged(replace(inp, new=inp.new.with_file(path, whole, seen_as="unsealed")), earlier,
                           seal_tried=True)
    if verdict.open_ is not None and verdict.start == prefix:     # the old LOG's end: a later judge reuses it
        old.facts[(FENCE_OPEN_AT_END, path)] = verdict.open_
    if verdict.open_ is None:     # judged on the old lines alone: there is no appended text to read
        return [] if verdict.ok else [_not_append_only(path, verdict)]
    start, old_open = verdict.start, verdict.open_
    inp.new.facts[(FENCE_OPEN_AT_END, path)] = fences.open_after(new, start, open_=old_open)
    appended = new[start:]
    if not appended.strip():
        return []
    # Parse the appended text on its own, numbered from 1, starting in the fence state the old LOG left; shift
    # to real line numbers only when reporting. An amendment names a line of the whole LOG (rules 4): with one,
    # lines are counted from the start.
    text = decode_text(appended)
    amending = AMENDS in appended
    first = new.count(b"\n", 0, start) + 1 if amending else 1
    doc = log.parse(text, first_line=first, expect_title=False, in_fence=old_open)
    found = [from_problem(path, p) for p in doc.problems]
    # The entries above, as readers take them: an amended entry gives way to its amendment.
    numbered = amending or log.amends_in(new)
    found += rules_below(inp, path, log.live(doc.entries),
                         log.BytesSource(new, start, open_at_end=old_open, numbered=numbered))
    found += _unclosed(path, text, old_open, first)
    if amending:
        found = _amended(path, new, doc.entries, found)
    elif found or not verdict.ok:
        shift = new.count(b"\n", 0, start)
        found = [replace(v, line=v.line + shift) for v in found]
    if not verdict.ok:      # text before the first new heading: it would change the entry above it
        found.append(_not_append_only(path, verdict))
    return found


def _undecodable_repaired(old: bytes | None, new: bytes) -> bytes | None:
    """The old LOG with every sequence that is not UTF-8 replaced by U+FFFD, when the old LOG is not UTF-8 (committed
    with --no-verify) and `new` starts with that repair: the one change of its lines that LOG allows, since no byte
    of its text changes and nothing can be appended to what no reader can decode (GM902)."""
    if old is None:
        return None
    try:
        old.decode("utf-8")
        return None
    except UnicodeDecodeError:
        repaired = old.decode("utf-8", "replace").encode("utf-8")
    return repaired if new.startswith(repaired) else None


def _amended(path: str, new: bytes, entries: tuple[log.LogEntry, ...], found: list[Violation]) -> list[Violation]:
    """`found` (lines counted in `new`) with what the amendments among the new `entries` forgive, and whether
    each names an invalid entry above it (GM313, `gitmem.checks.amendments`)."""
    amending = [entry for entry in entries if entry.amends is not None]
    if not amending:
        return found
    from gitmem.checks import amendments

    judged = [v for entry in amending for v in amendments.judge(path, new, entry)]
    return amendments.forgive(found, path, log.superseded(entries)) + judged


def _not_append_only(path: str, verdict: log.Append) -> Violation:
    return Violation.of(codes.LOG_NOT_APPEND_ONLY, path, verdict.line, verdict.variant, line=verdict.line, path=path)


def _unclosed(path: str, text: str, old_open: bool, first_line: int) -> list[Violation]:
    """GM921 when the new text opens a code fence it never closes: every later heading would be code."""
    at = fences.unclosed(text, open_=old_open)
    if at is None:
        return []
    line = first_line + text.count("\n", 0, at)
    return [Violation.of(codes.UNCLOSED_FENCE, path, line)]
