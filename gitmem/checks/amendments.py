"""Amending LOG (rules 4): an entry that names the heading line of an invalid entry above it supersedes it.

LOG is append-only, so a bad entry that reached the branch (a heading written by hand and committed with
`--no-verify`, a web edit merged without the check) cannot be fixed where it is. An amendment,
`## <timestamp> · amends line N · cycle M · <outcome>` (or `… · amends line N · close`), is appended like any
entry and is judged like one at its own place (time and cycle order, Task and Result); readers take it in the
place of the entry at line N (`gitmem.memory.log.live`), and the rules forgive what it replaces
(`forgive`). It must name an entry above it that has an error (GM313): amending a valid entry would be a
rewrite of history by another name.
"""
from __future__ import annotations

import re
from collections.abc import Iterable
from functools import cached_property

from gitmem import codes
from gitmem.checks.log_entries import rules_below
from gitmem.checks.violation import Violation
from gitmem.memory import fences, log
from gitmem.memory.decoding import decode_text
from gitmem.memory.lines import strip_trailing_blank

# What an amendment forgives at the line it supersedes: the rules about that entry's own heading, place and
# fields. Never GM301: an amendment is appended, it does not excuse a rewrite.
FORGIVEN = frozenset(code.code for code in (
    codes.LOG_TIME_BACKWARDS, codes.LOG_CYCLE_NOT_INCREASING, codes.LOG_NO_BUILD_WITHOUT_REASON,
    codes.LOG_CYCLE_INCOMPLETE, codes.LOG_HEADING_MALFORMED, codes.LOG_ENTRY_TOO_BIG))
_HEADING = b"## "
# The literal first, then a look back for the line start: the regex engine scans for the literal (fast).
_LINE = re.compile(rb"## (?<![^\n]## )")
_WELL_FORMED = re.compile(log.HEADING_PATTERN.encode(), re.M)     # the same grammar, over bytes
# A `## ` line that is no entry's well-formed heading: `_LINE`, then the rest of the grammar refused (a look ahead,
# no groups). One search finds the first; none in a LOG is `plain`'s common case, told in one pass.
_HEADING_START = r"##(?<![^\n]##) +"
assert log.HEADING_PATTERN.startswith(_HEADING_START)
_HEADING_REST = re.sub(r"\(\?P<\w+>", "(?:", log.HEADING_PATTERN[len(_HEADING_START):])
_ODD_LINE = re.compile(("## (?<![^\n]## )(?! *" + _HEADING_REST + ")").encode(), re.M)


def forgive(found: Iterable[Violation], path: str, lines: set[int]) -> list[Violation]:
    """`found` without what the amendments of `lines` forgive."""
    return [v for v in found if not (v.path == path and v.line in lines and v.code in FORGIVEN)]


class Headings:
    """The `## ` lines of a whole LOG, found at regex speed (a 75 MB LOG in well under a second): which are
    well formed and which amend, and the line of each, counted only when asked for."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.fences = fences.FenceState(data)
        self.well_formed: dict[int, int | None] = {     # offset -> the line it amends, None for a plain entry
            match.start(): int(match["amends"]) if match["amends"] else None
            for match in _WELL_FORMED.finditer(data)}
        self.offsets = [match.start() for match in _LINE.finditer(data)]

    def real(self, offset: int) -> bool:
        """Whether the `## ` line at `offset` is a heading, not a line of fenced code."""
        return not self.fences.at(offset)

    def title(self, offset: int) -> str:
        return fences.line_starting_at(self.data, offset)[len(_HEADING):].rstrip(b"\r").decode("utf-8", "replace")

    @cached_property
    def lines(self) -> dict[int, int]:
        """Line -> offset of every `## ` line: counted between one and the next, so one pass."""
        found, line, counted = {}, 1, 0
        for at in self.offsets:
            line += self.data.count(b"\n", counted, at)
            counted = at
            found[line] = at
        return found

    def line_of(self, offset: int) -> int:
        return self.data.count(b"\n", 0, offset) + 1

    @cached_property
    def unmatched(self) -> dict[int, log.Heading | None]:
        """The headings the byte grammar does not read (a malformed one, or a CRLF line, which the parser
        accepts), parsed one by one: offset -> `log.parse_any_heading`'s verdict."""
        return {at: log.parse_any_heading(self.title(at)) for at in self.offsets
                if at not in self.well_formed and self.real(at)}

    def malformed(self) -> list[int]:
        """Offsets of the headings that are neither an entry's nor an amendment's."""
        return [at for at, parsed in self.unmatched.items() if parsed is None]

    def amendments(self) -> list[tuple[int, int]]:
        """(offset, amended line) of every amendment heading, in order."""
        found = {at: amends for at, amends in self.well_formed.items() if amends is not None and self.real(at)}
        found.update({at: amends for at, parsed in self.unmatched.items()
                      if parsed is not None and (amends := parsed[3]) is not None})
        return sorted(found.items())


# The last LOG this process found plain. LOG grows at its end, and `plain` is a verdict about each line alone,
# so a LOG that starts with it (a memcmp) is plain when the lines from its last one on are: the cycle's
# preflight, the runner's entry and each of a close's entries judge what was appended, not the history again.
_PLAIN_BEFORE: list[bytes] = []


def plain(data: bytes) -> bool:
    """Whether every `## ` line of a whole LOG is an entry's well-formed heading and none amends: the common
    case, told by one regex pass that finds no other `## ` line."""
    known = _PLAIN_BEFORE[0] if _PLAIN_BEFORE else None
    cut = data.rfind(b"\n", 0, len(known)) + 1 if known is not None and data.startswith(known) else 0
    found = _plain_lines(data[cut:] if cut else data)
    if found:
        _PLAIN_BEFORE[:] = [data]
    return found


def _plain_lines(data: bytes) -> bool:
    return not log.amends_in(data) and _ODD_LINE.search(data) is None


def moved_lines(tip: bytes, lines: set[int], data: bytes, candidates: Iterable[int]) -> set[int]:
    """The `candidates` (heading lines of LOG `data`) whose entries are, as written, the ones at `lines` of LOG `tip`,
    which amendments there supersede. A merge that moved an amended entry (the other parent's LOG did not hold it
    where the tip does) moved its amendment with it, so the other parent's commits are forgiven the same entry at the
    line it held in them (`log.as_written`: renumbered or dated by the merge, it is still that entry)."""
    wanted = set(candidates)
    if not wanted:
        return set()
    tip_scan, scan = Headings(tip), Headings(data)
    amended = {written for line in lines if (written := _entry_written(tip_scan, line)) is not None}
    return {line for line in wanted if _entry_written(scan, line) in amended}


def _entry_written(scan: Headings, line: int) -> tuple[str, tuple[str, ...]] | None:
    """The entry whose heading is `line` of the scanned LOG, as its writer wrote it; its raw heading and lines when
    the heading is malformed. None when no heading is there."""
    at = scan.lines.get(line)
    if at is None or not scan.real(at):
        return None
    data = scan.data
    line_end = data.find(b"\n", at)
    end = None if line_end < 0 else fences.first_heading(data, _HEADING, line_end + 1)
    text = decode_text(data[at:end])
    doc = log.parse(text, first_line=line, expect_title=False)
    if doc.entries and doc.entries[0].line == line:
        return log.as_written(doc.entries[0])
    heading, *body = text.splitlines()
    return heading.removeprefix("## "), tuple(strip_trailing_blank(body))


def superseded_lines(data: bytes) -> set[int]:
    """The lines the amendments in a whole LOG name (`verify` forgives their entries in every commit)."""
    if not log.amends_in(data):        # the common case costs one search
        return set()
    return {amends for _, amends in Headings(data).amendments()}


def judge(path: str, data: bytes, amendment: log.LogEntry, scan: Headings | None = None) -> list[Violation]:
    """GM313 when `amendment` (its `line` counted in `data`, the whole new LOG) names no entry heading above it,
    an entry with no error, or one an earlier amendment already supersedes."""
    target = amendment.amends
    assert target is not None
    scan = scan or Headings(data)
    at = scan.lines.get(target)
    if target >= amendment.line or at is None or not scan.real(at):
        return [Violation.of(codes.LOG_AMENDMENT_INVALID, path, amendment.line, "nothing", target=target)]
    until = scan.lines.get(amendment.line, len(data))
    for other, amends in scan.amendments():
        if amends == target and at < other < until:
            return [Violation.of(codes.LOG_AMENDMENT_INVALID, path, amendment.line, "twice", target=target,
                                 by=scan.line_of(other))]
    if _has_error(path, data, target, at):
        return []
    return [Violation.of(codes.LOG_AMENDMENT_INVALID, path, amendment.line, "valid", target=target)]


def _has_error(path: str, data: bytes, line: int, at: int) -> bool:
    """Whether the entry whose heading is `line` (at byte `at`) breaks a rule about itself: a malformed heading,
    time or cycle order against the live entries above it, a missing Task or Result, a no-build without why."""
    line_end = data.find(b"\n", at)
    end = None if line_end < 0 else fences.first_heading(data, _HEADING, line_end + 1)
    doc = log.parse(decode_text(data[at:end]), first_line=line, expect_title=False)
    if doc.problems or not doc.entries:
        return True
    # LOG's entry rules live in one place, the LOG check: the same rules that judged it when it was appended.
    return bool(rules_below(None, path, doc.entries[:1], log.BytesSource(data, at)))
