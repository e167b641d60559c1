"""LOG.md: append-only, one entry per cycle plus one per daily close. History is searched, not loaded."""
from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import field
from datetime import date, datetime, timedelta
from enum import StrEnum
from functools import cache, cached_property
from typing import Protocol

from gitmem import codes
from gitmem.memory import fences
from gitmem.memory.common_ends import first_difference
from gitmem.memory.decoding import decode_lines, decode_text
from gitmem.memory.fields import Entry, Field, parse_fields, render_field
from gitmem.memory.lines import strip_trailing_blank
from gitmem.memory.problems import Problem
from gitmem.memory.sections import SEP, headed, split_sections, split_timestamped_heading, title_problem
from gitmem.memory.timestamps import Timestamp
from gitmem.records import record

TITLE = "# LOG"


class Outcome(StrEnum):
    """What a cycle came to, the last word of its heading. Members are the words themselves, so they compare
    equal to (and key the same as) the text a parse reads."""

    BUILT = "built"
    PUBLISHED = "published"
    NO_BUILD = "no-build"       # Rule 0: a cycle that built nothing says why in its Result


OUTCOMES = tuple(outcome.value for outcome in Outcome)
FIELD_ORDER = ("Task", "Tried", "Evidence", "Result", "Blocked", "Learned")
# Fields the runner writes and reads back (the agent cannot set them: postflight rewrites them).
STARTED, SALVAGED, KEPT, BLOCKED = "Started", "Salvaged", "Kept", "Blocked"
# An interactive session's entry (written outside a runner cycle) says so: `- Session: interactive`. Runner
# cycles never carry it: postflight strips it from what their agent wrote.
SESSION, INTERACTIVE = "Session", "interactive"
# An entry a merge renumbered, or brought in after entries written later than it (then it is dated again by the
# histories), keeps its own heading under `- Merged:` (gitmem.publish.merge.brought_in, gitmem.checks.merges).
MERGED = "Merged"
# A close entry a rebase replayed after cycles another writer pushed while the close ran (it never read them)
# names them under `- Arrived: cycle 12, cycle 13`: no report holds them yet, so the next close reports them
# (gitmem.publish.merge.merge_log writes it, gitmem.close.day reads it).
ARRIVED = "Arrived"


@cache
def _decision_id() -> re.Pattern[str]:
    """A decision ID (`D-0002`). Compiled on first use, as every pattern the pre-commit path seldom needs
    (tests/checks/test_check_imports.py lists the patterns a `gitmem check` compiles at import)."""
    return re.compile(r"\bD-[0-9]{4,}\b")


_CYCLE_RE = re.compile(r"^cycle ([0-9]{1,18})$")  # numbers fit SQLite and int64: 18 digits
# Rules 4: an amendment (`## <timestamp> · amends line N · cycle M · <outcome>`, or `… · amends line N · close`)
# supersedes the invalid entry whose heading is line N of LOG. LOG stays append-only: the bad entry is never
# edited; readers take the amendment in its place (`live`), and the rules forgive what the amendment replaces.
AMENDS = "amends line"
_AMENDS_RE = re.compile(r"^amends line ([0-9]{1,18})$")
_AMENDS_BYTES = AMENDS.encode()
# The LOG bytes last searched whole and found holding no amendment's marker: a LOG grows at its end, and a cycle's
# steps each ask of the same old lines (75 MB at 100x, ~40 ms a search), so bytes that start with them (a
# memcmp) are searched only past them.
_WITHOUT_AMENDS: list[bytes] = []
_WITHOUT_AMENDS_FROM = 1 << 20        # shorter bytes are searched in well under a millisecond


def amends_in(data: bytes) -> bool:
    """Whether `data` (a LOG, or its end) holds an amendment's marker anywhere."""
    known = next((k for k in _WITHOUT_AMENDS if k is data or data.startswith(k)), None)
    start = max(0, len(known) - len(_AMENDS_BYTES) + 1) if known is not None else 0
    if data.find(_AMENDS_BYTES, start) >= 0:
        return True
    if known is None and len(data) >= _WITHOUT_AMENDS_FROM:     # kept: the first copy, held by its reader anyway
        _WITHOUT_AMENDS[:] = [data]
    return False


# An entry heading, found without parsing any entry: one linear regex pass over the whole text costs 20-40 ms
# per MB, against about 1 s per MB for `parse` (gitmem.close.day.cycle_numbers, gitmem.report.log_scan). `when`
# is the timestamp (read it with `parse_timestamp`); `cycle` and `outcome` are None for a close entry. A match
# inside fenced code is text, not an entry: callers skip those with `fences.Fenced`. It starts with the literal
# `##` and then looks back for the line start, rather than `^`, so that the regex engine can scan for the
# literal: twice as fast. Compiled on first use (`heading_re`): the pre-commit path never scans for headings.
HEADING_PATTERN = (
    r"##(?<![^\n]##) +(?P<when>[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2} (?:UTC|[+-][0-9]{2}:[0-9]{2}))"
    r" +(?:·|-|\|) +"
    r"(?:amends line (?P<amends>[0-9]{1,18}) +(?:·|-|\|) +)?"
    r"(?:cycle (?P<cycle>[0-9]{1,18}) +(?:·|-|\|) +(?P<outcome>" + "|".join(OUTCOMES) + r")|close)[ \t]*$")


@cache
def heading_re() -> re.Pattern[str]:
    """HEADING_PATTERN, multi-line, compiled once (0.5 ms)."""
    return re.compile(HEADING_PATTERN, re.M)


@record(frozen=True)
class LogEntry(Entry):
    when: Timestamp
    cycle: int | None = None          # None for a close entry
    outcome: str | None = None        # an Outcome word; None for a close entry
    body: tuple[str, ...] = ()
    line: int = 0
    end: int = 0
    fields: tuple[Field, ...] = field(default=(), compare=False)
    amends: int | None = None         # an amendment: the line of the entry it supersedes

    @property
    def kind(self) -> str:
        return "close" if self.cycle is None else "cycle"

    @property
    def interactive(self) -> bool:
        """An interactive session's entry (`- Session: interactive`), not a runner cycle's."""
        return (self.get(SESSION) or "").strip().startswith(INTERACTIVE)

    @property
    def blocked_by(self) -> tuple[str, ...]:
        """The decisions this cycle said it was blocked on (`- Blocked: D-0002`)."""
        return tuple(_decision_id().findall(self.get(BLOCKED) or ""))

    def heading(self) -> str:
        amends = f"{AMENDS} {self.amends}{SEP}" if self.amends is not None else ""
        if self.cycle is None:
            return f"## {self.when}{SEP}{amends}close"
        return f"## {self.when}{SEP}{amends}cycle {self.cycle}{SEP}{self.outcome}"


@record(frozen=True)
class LogDoc:
    preamble: tuple[str, ...]
    entries: tuple[LogEntry, ...]
    problems: tuple[Problem, ...] = ()

    @property
    def cycles(self) -> tuple[LogEntry, ...]:
        return tuple(e for e in self.entries if e.cycle is not None)


def make_entry(when: Timestamp, *, cycle: int | None, outcome: str | None, fields: dict[str, str],
               amends: int | None = None) -> LogEntry:
    """Fields are rendered in canonical order; unknown keys follow in the order given. `amends`: the line of
    the entry this one supersedes (an amendment)."""
    ordered = [k for k in FIELD_ORDER if k in fields] + [k for k in fields if k not in FIELD_ORDER]
    body = [line for key in ordered if fields[key] is not None for line in render_field(key, fields[key])]
    # Fields are parsed here too, so `.get()` works before the entry is written (lines count from 1).
    return LogEntry(when=when, cycle=cycle, outcome=outcome, body=tuple(body), fields=parse_fields(body, 1),
                    amends=amends)


def merged_entry(entry: LogEntry, when: Timestamp, cycle: int | None) -> LogEntry:
    """`entry` as a merge brings it in, at `when` as `cycle`: its body as written, then `- Merged: <its own
    heading>`."""
    body = (*strip_trailing_blank(entry.body), f"- {MERGED}: {entry.heading().removeprefix('## ')}")
    return LogEntry(when, cycle, entry.outcome, body, fields=parse_fields(body, 1), amends=entry.amends)


def with_arrived(entry: LogEntry, cycles: tuple[int, ...]) -> LogEntry:
    """Close entry `entry` saying that `cycles` arrived above it while it ran (`- Arrived: cycle 12, cycle 13`,
    after any an earlier replay named)."""
    named = sorted({*arrived_cycles(entry), *cycles})
    body = [line for line in strip_trailing_blank(entry.body) if not line.startswith(f"- {ARRIVED}: ")]
    body.append(f"- {ARRIVED}: " + ", ".join(f"cycle {n}" for n in named))
    return LogEntry(entry.when, entry.cycle, entry.outcome, tuple(body), fields=parse_fields(body, 1),
                    amends=entry.amends)


# Written by the close itself, so that the close of a day can be found again (idempotence).
DAY_FIELD = "Day"


def closed_day(entry: LogEntry) -> date | None:
    """The day a close entry closed: its Day field, else the day it was written on. A Day later than the day after
    the entry's own date (the zone's day may be a day ahead of its stamp's) names no day, as no close closes a day
    that has not happened: a hand-written `Day: 2099-01-01` would pass for the close of every day until then."""
    try:
        day = date.fromisoformat((entry.get(DAY_FIELD) or "").strip())
    except ValueError:
        return entry.when.day if entry.cycle is None else None
    return day if day <= entry.when.day + timedelta(days=1) else None


def closes_left_out_from(closes: Sequence[set[date]], closed: set[date]) -> int:
    """Where a side's closes stop standing, given the days each of its closes closed (oldest first) and the days the
    other side closed since they parted: at its first close of a day the other side closed too, which a merge or a
    replay leaves out with every close after it (each one read LOG with it, and counts what it reported as reported),
    so that a day is in one report (gitmem.publish.closed_first). len(closes) when none is left out."""
    return next((index for index, days in enumerate(closes) if days & closed), len(closes))


def arrived_cycles(entry: LogEntry) -> frozenset[int]:
    """The cycles a close entry names as arrived above it while it ran (`with_arrived`); none for a cycle."""
    if entry.cycle is not None:
        return frozenset()
    return frozenset(int(n) for n in re.findall(r"\bcycle ([0-9]{1,18})\b", entry.get(ARRIVED) or ""))


def merged_from(entry: LogEntry) -> tuple[str, tuple[str, ...]] | None:
    """(the heading it was written under, its body as written) of an entry a merge brought in; else None."""
    body = strip_trailing_blank(entry.body)
    if not body or not body[-1].startswith(f"- {MERGED}: "):
        return None
    return body[-1].removeprefix(f"- {MERGED}: "), tuple(body[:-1])


def as_written(entry: LogEntry) -> tuple[str, tuple[str, ...]]:
    """(heading without `## `, body) of `entry` as its writer wrote it, wherever merges and replays moved it: the
    heading kept under `- Merged:` (merged_entry, once per move), the body without the `- Arrived:` line a merge
    or a replay gives a close (with_arrived)."""
    heading, body = entry.heading().removeprefix("## "), strip_trailing_blank(entry.body)
    while body and body[-1].startswith(f"- {MERGED}: "):
        heading, body = body[-1].removeprefix(f"- {MERGED}: "), strip_trailing_blank(body[:-1])
    return heading, tuple(line for line in body if not line.startswith(f"- {ARRIVED}: "))


def parse_heading(title: str) -> tuple[Timestamp, int | None, str | None] | None:
    parsed = parse_any_heading(title)
    return parsed[:3] if parsed is not None else None


Heading = tuple[Timestamp, int | None, str | None, int | None]      # when, cycle, outcome, the line it amends


def parse_any_heading(title: str) -> Heading | None:
    """(when, cycle, outcome, amended line) of an entry heading or an amendment's; None when malformed."""
    when, parts = split_timestamped_heading(title)
    if when is None:
        return None
    amends = None
    if parts and (found := _AMENDS_RE.match(parts[0])):
        amends, parts = int(found.group(1)), parts[1:]
    if parts == ["close"]:
        return when, None, None, amends
    if len(parts) == 2 and (m := _CYCLE_RE.match(parts[0])) and parts[1] in OUTCOMES:
        return when, int(m.group(1)), parts[1], amends
    return None


def superseded(entries: Sequence[LogEntry]) -> set[int]:
    """The lines of the entries that an amendment among `entries` supersedes. An amendment always follows what
    it amends, so any run of entries that reaches the end of LOG knows every amendment of its own entries."""
    return {entry.amends for entry in entries if entry.amends is not None}


def live(entries: Sequence[LogEntry]) -> tuple[LogEntry, ...]:
    """`entries` as readers take them: an amended entry gives way to its amendment (which stands where it was
    written, in time and cycle order)."""
    gone = superseded(entries)
    return tuple(entry for entry in entries if entry.line not in gone) if gone else tuple(entries)


def heading_cycles(data: bytes, *, open_: bool = False) -> Iterator[tuple[int, int | None]]:
    """(offset, cycle) of each well-formed LOG heading in `data` outside fenced code, given the fence state
    `open_` where `data` starts; the cycle is None for a close entry."""
    for at in fences.headings(data, HEADING.encode(), open_=open_):
        parsed = parse_any_heading(fences.line_starting_at(data, at)[3:].decode("utf-8", "replace"))
        if parsed is not None:
            yield at, parsed[1]


def parse(text: str, *, first_line: int = 1, expect_title: bool = True, in_fence: bool = False) -> LogDoc:
    """Parse LOG text. To parse only an appended tail, pass it with its `first_line` and `expect_title=False`,
    and `in_fence` when the text before it leaves a code fence open (`gitmem.memory.fences`)."""
    lines = decode_lines(text)
    preamble, sections = split_sections(lines, 2, first_line, in_fence=in_fence)
    problems: list[Problem] = []
    if expect_title:
        problems += title_problem(preamble, TITLE, first_line)
    entries: list[LogEntry] = []
    for section, (when, cycle, outcome, amends) in headed(
            sections, parse_any_heading, problems, code=codes.LOG_HEADING_MALFORMED, marker="##", what="LOG"):
        entries.append(LogEntry(when, cycle, outcome, section.body, section.line, section.end,
                                parse_fields(section.body, section.body_start), amends))
    return LogDoc(tuple(preamble), tuple(entries), tuple(problems))


def render(doc: LogDoc) -> str:
    parts = ["\n".join(strip_trailing_blank(doc.preamble)) or TITLE]
    parts.extend(entry.render() for entry in doc.entries)
    return "\n\n".join(parts) + "\n"


def append_entry(text: str, entry: LogEntry) -> str:
    """Append bytes only: the result starts with `text` exactly (GM301), plus a separating blank line."""
    if not text:
        text = TITLE + "\n"
    if not text.endswith("\n"):
        text += "\n"
    return text + "\n" + entry.render() + "\n"


def fence_closer(text: str) -> str:
    """What closes the code fence a LOG written before fences were checked ends inside (`text` is that LOG, or
    its end), so that an entry appended after it is an entry and not more of that code (gitmem.memory.fences)."""
    return ("" if not text or text.endswith("\n") else "\n") + "```\n"


# -- append-only (GM301) ---------------------------------------------------------------------------------
# LOG changes only by text added at its end, each addition starting with its own heading. `check`
# (gitmem.checks.log_checks), the cycle's permissions (gitmem.cycle.permissions) and both merges
# (gitmem.checks.merges, gitmem.publish.merge) all judge a change of LOG by `judge_append`.

# How a change is not an append: the GM301 variants (gitmem.codes.LOG_NOT_APPEND_ONLY).
DELETED, REWRITTEN, APPENDED_TO_ENTRY, IN_OPEN_FENCE = "deleted", "rewritten", "appended_to_entry", "in_open_fence"


@record(frozen=True)
class Append:
    """What a new LOG is to the old one.

    An append (`ok`): the added text starts at byte `start` of the new LOG, a line start (an old last line
    without its line end is ended first), and `open_` is the code-fence state there; `open_` is None when
    nothing but line ends was added to such a line (nothing to parse). Not an append: `variant` says how and
    `line` (1-based, in the new LOG) where; `start` and `open_` are set when the added text was located,
    i.e. when the fault lies in what was added rather than in the old lines.
    """

    start: int = 0
    open_: bool | None = None
    variant: str = ""
    line: int = 0

    @property
    def ok(self) -> bool:
        return not self.variant


def judge_append(new: bytes | None, prefix: int | None, *, old: Callable[[], bytes],
                 open_at: Callable[[int], bool] | None = None) -> Append:
    """Whether `new` is the old LOG with entries appended (GM301), and if not where and why.

    `new` is None when the LOG is gone. `prefix` is the old LOG's length when it is, byte for byte, the start
    of `new`, else None: a snapshot can prove that without copying a 75 MB LOG (gitmem.gitio.blobproof).
    `old()` reads the old bytes, only to say where a rewrite starts. `open_at(offset)` is the fence state of
    new[:offset] (inside the old LOG) when the caller knows it cheaper than one scan of it.
    """
    if new is None:
        return Append(variant=DELETED, line=1)
    if prefix is None:
        return Append(variant=REWRITTEN, line=first_difference(old(), new))
    start = prefix
    if prefix and new[prefix - 1:prefix] != b"\n":    # the old LOG ends mid-line: the append must end it first
        if not new[prefix:].strip(b"\n"):
            return Append(len(new))
        if new[prefix:prefix + 1] != b"\n":
            return Append(variant=APPENDED_TO_ENTRY, line=new.count(b"\n", 0, prefix) + 1)
        start = prefix + 1
    open_ = open_at(start) if open_at is not None else fences.open_after(new, 0, start)
    appended = new[start:]
    if not appended.strip():
        return Append(start, open_)
    stray = _stray_line(decode_text(appended), open_)
    if stray is None:
        return Append(start, open_)
    offset, variant = stray
    return Append(start, open_, variant, new.count(b"\n", 0, start) + offset)


def append_verdict(old: bytes, new: bytes | None) -> Append:
    """`judge_append` for an old and a new LOG both in memory."""
    prefix = len(old) if new is not None and new.startswith(old) else None
    return judge_append(new, prefix, old=lambda: old)


def appended_entries(new: bytes, verdict: Append) -> tuple[LogEntry, ...]:
    """The entries an append added (numbered from the line where the added text starts, as 1)."""
    if not verdict.ok:
        raise ValueError(f"not an append to LOG: {verdict.variant} at line {verdict.line}")
    if verdict.open_ is None:
        return ()
    return parse(decode_text(new[verdict.start:]), expect_title=False, in_fence=verdict.open_).entries


def _stray_line(appended: str, old_open: bool) -> tuple[int, str] | None:
    """(1-based line, variant) of the first added line before the first new heading: it would change the entry
    above it, which is an edit.

    The one exception: when the old LOG ends inside a code fence (written before fences were checked), a
    line that closes it may come first, so that the new entry is a heading and not more of that code.
    """
    open_ = old_open
    for offset, line in enumerate(appended.split("\n")):
        if not open_ and line.startswith(HEADING):
            return None
        if open_ and fences.is_fence(line):     # open here only before any other line: it closes the old fence
            open_ = False
            continue
        if line.strip():
            return 1 + offset, IN_OPEN_FENCE if open_ else APPENDED_TO_ENTRY
    return None


def ordered(before: Sequence[LogEntry], after: Sequence[LogEntry], *, by_time: bool = False) -> bool:
    """Whether the entries `after` may follow the entries `before` in LOG: cycle numbers keep increasing
    (GM303); `by_time` (the rules before 4, GM302) also asks that time never goes back. A merge of two sides'
    appends puts one side's after the other's."""
    if not before or not after:
        return True
    if by_time and min(e.when.moment for e in after) < max(e.when.moment for e in before):
        return False
    cycles_before = [e.cycle for e in before if e.cycle is not None]
    cycles_after = [e.cycle for e in after if e.cycle is not None]
    return not (cycles_before and cycles_after and min(cycles_after) <= max(cycles_before))


def tail(text: str, count: int) -> LogDoc:
    """Parse only the last `count` entries, scanning backwards: cost follows the tail, not the history."""
    if count <= 0:
        return LogDoc((), ())
    found = tail_entries(TextSource(text), lambda entries: len(entries) >= count).entries
    return LogDoc((), found[-count:])


def tail_text(text: str, count: int) -> tuple[str, int]:
    """The text of the last `count` `## ` entries and the 1-based line where it starts. Headings inside fenced
    code are no headings, so the text always starts at a real heading (or at the line after the title)."""
    if count <= 0:
        # Nothing asked for: an empty chunk that starts after the last line (not the whole history).
        return "", text.count("\n") + 1
    starts = list(fences.headings(text, HEADING))
    if len(starts) >= count:
        start = starts[-count]
    else:
        start = starts[0] if starts and starts[0] == 0 else _after_title(text)
    return text[start:], text.count("\n", 0, start) + 1


def _after_title(text: str) -> int:
    index = text.find("\n")
    return len(text) if index < 0 else index + 1


def last_cycle_number(text: str) -> int:
    """The highest cycle number among the last entries (a close entry may be last)."""
    cycles = [e.cycle for e in tail_entries(TextSource(text), has_cycle).entries if e.cycle is not None]
    return max(cycles, default=0)


# -- reading from the end ---------------------------------------------------------------------------------
# LOG only grows at its end, so whatever needs "the last entries" reads growing tails backwards and stops
# as soon as it has enough: the cost follows the tail it reads, not the length of the history.
# `tail_entries` is the one loop that does it; a source says where the text comes from: a string in
# memory (`TextSource`), a blob's bytes (`BytesSource`), or a file on disk with a cached line count
# (`gitmem.workspace.head_and_tail.FileSource`).

FIRST_BLOCK = 16 * 1024
# The first block for a reader that needs only LOG's last entry or two (its last cycle, the entry above an
# appended one): entries run about 1.5 KB, so 4 KB usually holds two, and the pre-commit path parses 4 KB of
# LOG where 16 KB took it 1.6 ms more. A reader that needs more reads on in doubling blocks.
LAST_ENTRY_BLOCK = 4 * 1024
HEADING = "## "


class TailSource(Protocol):
    def size(self) -> int:
        """The length of the whole LOG, in the unit `text_from` takes."""

    def text_from(self, start: int) -> tuple[str, int]:
        """The text from the first line start at or after `start` to the end, and the offset it begins at."""

    def line_at(self, offset: int) -> int:
        """The 1-based line number of the line starting at `offset`."""

    def fence_open_at(self, offset: int) -> bool:
        """Whether the line starting at `offset` is inside fenced code (the text before it leaves one open)."""


@record(frozen=True)
class Tail:
    entries: tuple[LogEntry, ...]   # complete entries with absolute line numbers, oldest first
    first_line: int                 # the line where the text read starts
    whole: bool                     # the read reached the start of LOG


def tail_entries(source: TailSource, enough: Callable[[tuple[LogEntry, ...]], bool], *,
                 block: int = FIRST_BLOCK) -> Tail:
    """The entries at the end of LOG, read in doubling blocks until `enough(entries)` or the whole LOG is read.

    Every `## ` heading outside fenced code starts a complete entry; the lines above the first one are
    skipped. The fence state where a block starts comes from the source, so a code fence left open higher
    up hides the headings below it here exactly as it does in a parse of the whole file.
    """
    read: list[Tail] = []          # the last block's entries: parsed once, for `enough` and for the answer

    def judged(text: str, start: int, begin: int) -> bool:
        first_line = source.line_at(start) + text.count("\n", 0, begin)
        read[:] = [Tail(parse(text[begin:], first_line=first_line, expect_title=False).entries, first_line,
                        start == 0)]
        return start == 0 or enough(read[0].entries)

    _last_blocks(source, block, judged)
    return read[0]


def tail_since(source: TailSource, start: datetime, *, block: int = FIRST_BLOCK) -> tuple[str, int]:
    """The text of LOG's entries from the last one before `start` to the end, and the line it begins at: the
    blocks `tail_entries` would read for "an entry before `start`", each judged by its first heading alone.
    LOG is in time order (GM302), so the oldest entry of a block is the earliest. Nothing is parsed but
    those headings: a reader looking for a few lines in a month of LOG (`- Blocked:`) finds them in the text
    first and parses only when they are there."""
    text, at, begin = _last_blocks(source, block, lambda text, _, begin: _earlier(text, begin, start))
    return text[begin:], source.line_at(at) + text.count("\n", 0, begin)


def _last_blocks(source: TailSource, block: int,
                 enough: Callable[[str, int, int], bool]) -> tuple[str, int, int]:
    """(text, where it starts in LOG, where its first whole entry starts in it): the end of LOG read in doubling
    blocks from `block` until `enough(text, start, begin)` or the whole LOG is read. A block's first entry is
    found by its heading outside fenced code, with the fence state at the block's start taken from the source.
    `enough` is asked about every block read, the whole LOG's too (where its answer no longer matters)."""
    size = source.size()
    while True:
        text, start = source.text_from(max(0, size - block))
        begin = 0
        if start > 0:
            found = fences.first_heading(text, HEADING, open_=source.fence_open_at(start))
            begin = found if found is not None else len(text)
        if enough(text, start, begin) or start == 0:
            return text, start, begin
        block *= 2


def _earlier(text: str, at: int, start: datetime) -> bool:
    """Whether the entry heading at `at` is dated before `start` (a malformed one reads as later)."""
    end = text.find("\n", at)
    parsed = parse_any_heading(text[at + len(HEADING): end if end >= 0 else len(text)])
    return parsed is not None and parsed[0].moment < start


def has_cycle(entries: tuple[LogEntry, ...]) -> bool:
    return any(entry.cycle is not None for entry in entries)


def by_runner(entry: LogEntry) -> bool:
    """A cycle entry the runner wrote: not a close's, not an interactive session's (postflight drops the session
    marker from what a runner cycle's agent writes, so a runner cycle never carries it)."""
    return entry.cycle is not None and not entry.interactive


def last_runner_cycle(source: TailSource) -> LogEntry | None:
    """The newest cycle the runner wrote, read back from LOG's end past closes and sessions' entries: what a
    schedule is judged by (a session is dated by the human's clock, whenever the human works)."""
    found = [e for e in tail_entries(source, lambda entries: any(map(by_runner, entries))).entries if by_runner(e)]
    return found[-1] if found else None


def live_tail(source: TailSource, enough: Callable[[tuple[LogEntry, ...]], bool] = has_cycle, *,
              block: int = FIRST_BLOCK) -> tuple[LogEntry, ...]:
    """LOG's last entries as readers take them (`live`), read back until `enough` of the live ones (or the whole
    LOG): an amendment follows what it amends, so a tail that holds the amendment holds its target too."""
    return live(tail_entries(source, lambda entries: enough(live(entries)), block=block).entries)


class TextSource:
    """LOG text already in memory; offsets are character offsets."""

    def __init__(self, text: str) -> None:
        self.text = text

    def size(self) -> int:
        return len(self.text)

    def text_from(self, start: int) -> tuple[str, int]:
        if start > 0:
            start = self.text.find("\n", start - 1) + 1 or len(self.text)
        return self.text[start:], start

    def line_at(self, offset: int) -> int:
        return self.text.count("\n", 0, offset) + 1

    def fence_open_at(self, offset: int) -> bool:
        return self.fences.at(offset)

    @cached_property
    def fences(self) -> fences.FenceState:
        return fences.FenceState(self.text)


class BytesSource:
    """LOG bytes in memory (a blob), up to `end`; decoding is forgiving, so it never fails mid-history."""

    def __init__(self, data: bytes, end: int | None = None, *, open_at_end: bool | None = None,
                 numbered: bool = True) -> None:
        """`open_at_end`: the fence state at `end` (a line start), when the caller knows it already.
        `numbered=False`: the caller needs no line numbers (entries then count from line 1)."""
        self.data = data
        self.numbered = numbered
        self.end = len(data) if end is None else end
        if open_at_end is not None:
            self.fences = fences.FenceState(data, known=self.end, state=open_at_end)

    def size(self) -> int:
        return self.end

    def text_from(self, start: int) -> tuple[str, int]:
        if start > 0:
            start = self.data.find(b"\n", start - 1, self.end) + 1 or self.end
        return self.data[start:self.end].decode("utf-8", "replace"), start

    def line_at(self, offset: int) -> int:
        return self.data.count(b"\n", 0, offset) + 1 if self.numbered else 1

    def fence_open_at(self, offset: int) -> bool:
        return self.fences.at(offset)

    @cached_property
    def fences(self) -> fences.FenceState:
        return fences.FenceState(self.data)


def blocked_value(value: str | None) -> str | None:
    """A `Blocked` value in canonical form (`D-0002, D-0005`); ValueError when it names no decision."""
    if value is None or not value.strip():
        return None
    found = _decision_id().findall(value)
    if not found or _decision_id().sub("", value).strip(" ,;") != "":
        raise ValueError(f"--blocked takes decision IDs such as D-0002, not {value.strip()!r}")
    return ", ".join(dict.fromkeys(found))


def outcome_reason(entry: LogEntry) -> str | None:
    value = entry.get("Result")
    return value.strip() if value and value.strip() else None
