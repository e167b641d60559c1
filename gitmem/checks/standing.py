"""Memory as it stands: the errors in whole memory files that every reader of them trips on, found cheaply.

`check` and `verify` judge changes, so a bad heading that reached the branch without them (`--no-verify`, a
web edit merged without the required check) is judged by nothing after it: readers skip the entry, and the
next writer builds on it. What a cycle would build on, what `status` shows and what a LOG write appends
after is judged here: LOG's headings in one pass at `find` speed (an entry's heading is what every reader
finds it by), the amendments in it (GM313), NOW's top blocks (every reader reads NOW from the top, a block
that reached the branch unchecked is a new one, on top, and the file grows ten lines a cycle for ever), and
the format problems of the other memory files, which stay small. A LOG entry that an amendment supersedes is
no longer an error.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from gitmem import codes
from gitmem.checks import amendments
from gitmem.checks.violation import Violation, from_problem
from gitmem.config import Config
from gitmem.memory import decisions, lessons, log, now, rules
from gitmem.memory.decoding import decode_file, not_utf8_at
from gitmem.memory.digits import parses_with_ascii_digits

NOW_BLOCKS_JUDGED = 3
# The roles whose file is parsed: NOW's top blocks, the others whole; LOG is scanned by its headings instead.
_PARSED: tuple[tuple[str, Callable[[str], Any]], ...] = (
    ("now", lambda text: now.parse(text, max_blocks=NOW_BLOCKS_JUDGED)), ("decisions", decisions.parse),
    ("lessons", lessons.parse), ("rules", rules.parse))


def standing(config: Config, read: Callable[[str], bytes | None]) -> list[Violation]:
    """The errors of the memory files that `read(path)` returns as they stand, with the fix for each."""
    return sorted(log_standing(config.path("log"), read(config.path("log")) or b"") + parsed_standing(config, read))


def parsed_standing(config: Config, read: Callable[[str], bytes | None]) -> list[Violation]:
    """`standing` without LOG: the errors of the memory files that are parsed (NOW's top blocks, the others
    whole), for the close: it judges LOG as it appends to it (`MemoryWriter`), and must not scan 75 MB twice."""
    found: list[Violation] = []
    for role, parse in _PARSED:
        path = config.path(role)
        data = read(path)
        if data is None:
            continue
        # Decoded once per process, never split into lines here: NOW is 10 MB at 100x, and its top is all that
        # is parsed; the cycle's other steps read the same bytes.
        text, decoding = decode_file(data)
        unreadable = [p for p in decoding if p.code == codes.NOT_UTF8.code]
        if unreadable:      # no text to parse: GM902 at the line of its first bad byte, and nothing made of ""
            found += [from_problem(path, p) for p in unreadable]
            continue
        problems = [*decoding, *parse(text).problems]
        found += [v for v in (from_problem(path, p, text) for p in problems) if v.is_error]
    return sorted(found)


def log_standing(path: str, data: bytes) -> list[Violation]:
    """LOG's malformed headings that no amendment supersedes (GM306, with the repair), and its invalid
    amendments (GM313): the headings are found at regex speed, and only the odd ones are looked at."""
    if amendments.plain(data):
        return []
    scan = amendments.Headings(data)
    amending = [log.LogEntry(parsed[0], parsed[1], parsed[2], line=scan.line_of(at), amends=amends)
                for at, amends in scan.amendments() if (parsed := log.parse_any_heading(scan.title(at)))]
    gone = {entry.amends for entry in amending}
    found = []
    for at in scan.malformed():
        line, title = scan.line_of(at), scan.title(at)
        if line in gone:
            continue
        bad = not_utf8_at(data, at)
        if bad is not None:     # bytes that are no text: what is wrong is the encoding, not the heading's words
            found.append(Violation.of(codes.NOT_UTF8, path, line, byte=bad[0], reason=bad[1]))
            continue
        digits = parses_with_ascii_digits(title, log.parse_any_heading)
        found.append(Violation.of(codes.LOG_HEADING_MALFORMED, path, line, "standing", line=line, title=title,
                                  kind="written with digits other than 0-9" if digits else "malformed"))
    found += [v for entry in amending for v in amendments.judge(path, data, entry, scan)]
    return found
