"""GM9xx: rules over every memory file: presence, encoding, conflict markers, secrets, control characters, and
code fences left open."""
from __future__ import annotations

import re
from collections.abc import Collection, Iterator
from functools import cache

from gitmem import codes, secrets
from gitmem.checks.inputs import CheckInput
from gitmem.checks.owned_paths import refused_files, wrong_kind
from gitmem.checks.rule_inputs import edited_span, line_number_at, span_against, with_neighbours
from gitmem.checks.violation import Violation
from gitmem.config import REQUIRED_ROLES
from gitmem.gitio import same_blob
from gitmem.memory import fences
from gitmem.memory.decoding import control_characters, decode_file, decoding_problems
from gitmem.memory.once import Recent

# Markers as git writes them; `\r?` because a CRLF file must not hide its conflicts.
_CONFLICT_NEEDLES = (b"<<<<<<<", b">>>>>>>", b"=======")


@cache
def _conflict_re() -> re.Pattern[bytes]:
    """Compiled on first use: only a file that holds one of _CONFLICT_NEEDLES is searched."""
    return re.compile(rb"^(?:<{7}|>{7})(?: |\r?$)|^={7}\r?$", re.M)


def _line_of(data: bytes, offset: int, first_line: int) -> int:
    return first_line + data.count(b"\n", 0, offset)


def _first_marker(data: bytes) -> int | None:
    """Where the first conflict marker line of `data` starts; None when it holds none."""
    match = _conflict_re().search(data) if any(m in data for m in _CONFLICT_NEEDLES) else None
    return match.start() if match else None


def first_marker_line(data: bytes) -> int | None:
    """The line of the first conflict marker in `data`; None when it holds none."""
    marker = _first_marker(data)
    return None if marker is None else _line_of(data, marker, 1)


def scan_markers_and_secrets(path: str, data: bytes, first_line: int = 1) -> Iterator[Violation]:
    # `bytes.find` runs at memory speed, a regex with `\b` at ~30 ms per MB: NOW is rescanned whole on
    # every commit, and at 100x it holds 10 MB. So the marker regex runs only when a marker's text is there.
    marker = _first_marker(data)
    if marker is not None:
        yield Violation.of(codes.CONFLICT_MARKERS, path, _line_of(data, marker, first_line))
    for offset, what in secrets.find_secrets(data):
        yield Violation.of(codes.SECRET_LIKE_TOKEN, path, _line_of(data, offset, first_line), what=what)


def check(inp: CheckInput, earlier: Collection[Violation] = ()) -> list[Violation]:
    # GM908 (gitmem.checks.owned_paths): a trusted file that is no regular file is read as no file at all.
    found: list[Violation] = wrong_kind(inp)
    refused = set(refused_files(inp))
    for role, path in inp.config.memory_paths().items():
        if path in refused:
            continue
        data = inp.new.read(path)
        if data is None:
            if role in REQUIRED_ROLES:
                found.append(Violation.of(codes.MEMORY_FILE_MISSING, path, 1, path=path))
            continue
        if same_blob(inp.old, inp.new, path):
            continue
        found += _judged_once(inp, role, path, data)
    return found


# The verdicts on one file's change, kept for the last few: a step that judges the same change of a file again
# (the close judges its promotions as it writes them, then the whole change before its commit) takes it from
# here instead of decoding and scanning the file again (LESSONS is 1.4 MB at 100x). A verdict is a function of
# the file's role and path and its bytes on both sides. LOG and NOW are left out: their change is judged from
# the span appended or prepended, cheap already, and keeping their bytes (75 and 10 MB at 100x) would not be.
_JUDGED: Recent[tuple[str, str, bytes | None, bytes], list[Violation]] = Recent(6)
_BY_SPAN = ("log", "now")


def _judged_once(inp: CheckInput, role: str, path: str, data: bytes) -> list[Violation]:
    if role in _BY_SPAN:
        return _judged(inp, role, path, data)
    key = (role, path, inp.old.read(path) if inp.old is not None else None, data)
    verdict = _JUDGED.get(key)
    if verdict is None:
        verdict = _judged(inp, role, path, data)
        _JUDGED.put(key, verdict)
    return list(verdict)


def _judged(inp: CheckInput, role: str, path: str, data: bytes) -> list[Violation]:
    """The errors of one changed memory file: encoding, conflict markers, secrets, control characters, and a
    fence left open."""
    start, end = span_against(inp, path, data)
    if inp.old is not None and inp.old.prefix_length(path, data) == len(data):
        # Unchanged, so judged whole as committed (`check --worktree`): the rest passed when it was committed, but
        # bytes that are no text (committed with --no-verify) leave every rule after this one nothing to read.
        if any(p.code == codes.NOT_UTF8.code for p in decode_file(data)[1]):
            return [_not_utf8(path, data, 0)]
    if role not in _BY_SPAN and (start, end) == (0, len(data)) and inp.old is not None:
        # Edited in place (LESSONS, DECISIONS, RULES): the lines that differ. LOG and NOW are left whole here:
        # their old side (75 and 10 MB at 100x) is read only for what `span_against` proves.
        start, end = edited_span(inp.old.read(path), data)
    part = data[start:end]
    problems = decoding_problems(part)
    if any(p.code == codes.NOT_UTF8.code for p in problems):
        return [_not_utf8(path, data, start)]
    found: list[Violation] = []
    # Line numbers are counted only when something is reported: the happy path reads no history.
    reported = [(p.line, p.code, p.message, p.hint) for p in problems]
    if reported:
        first_line = line_number_at(data, start)
        found += [Violation(path, line + first_line - 1, code, message, hint)
                  for line, code, message, hint in reported]
    found += _scanned(path, data, start, end)
    found += _control(inp, path, data, part, start)
    if role != "log":          # LOG's fences are judged with its appended entries (gitmem.checks.log_checks)
        found += _fence_left_open(inp, path, data, start, end)
    return found


def _scanned(path: str, data: bytes, start: int, end: int) -> list[Violation]:
    """Conflict markers and secrets in the changed lines [start, end) of `data`. A secret's name and its value may
    stand on lines of their own with blank ones between (`aws_secret_access_key`, `=`, then the key), so the
    nearest lines of text a secret may reach on each side are read with them; what those lines hold alone was
    there before the change."""
    seen_from, seen_to = with_neighbours(data, start, end, reach=secrets.LINES_A_SECRET_SPANS - 1)

    def scan(low: int, high: int) -> set[Violation]:
        if low >= high:
            return set()
        found = list(scan_markers_and_secrets(path, data[low:high], 1))
        first_line = line_number_at(data, low) if found else 0
        return {Violation(path, v.line + first_line - 1, v.code, v.message, v.hint) for v in found}

    found = scan(seen_from, seen_to)
    found = found - scan(seen_from, start) - scan(end, seen_to) if found else set()
    # A marker stands on one line, and a scan reports the first only: one the lines before held (past the hooks)
    # would hide the change's, so the changed lines are asked alone.
    if seen_from < start and not any(v.code == codes.CONFLICT_MARKERS.code for v in found):
        marker = _first_marker(data[start:end])
        if marker is not None:
            found.add(Violation.of(codes.CONFLICT_MARKERS, path, line_number_at(data, start + marker)))
    return sorted(found)


def _control(inp: CheckInput, path: str, data: bytes, part: bytes, start: int) -> list[Violation]:
    """GM920 for the first control character on a line that is new: a line the old file already held was
    accepted before this rule existed (a rewritten file's span is the whole file)."""
    old_lines: set[bytes] | None = None
    for offset, what in ((start + at, what) for at, what in control_characters(part)):
        line_start = data.rfind(b"\n", 0, offset) + 1
        line_end = data.find(b"\n", offset)
        line = data[line_start:line_end if line_end >= 0 else len(data)]
        if old_lines is None:
            old = inp.old.read(path) if inp.old is not None else None
            old_lines = set(old.split(b"\n")) if old is not None else set()
        if line not in old_lines:
            return [Violation.of(codes.CONTROL_CHARACTER, path, line_number_at(data, offset), what=what, byte=offset)]
    return []


def _fence_left_open(inp: CheckInput, path: str, data: bytes, start: int, end: int) -> list[Violation]:
    """GM921 when the new file ends inside a code fence and the old one did not.

    The bytes outside [start, end) are the old file's, so the state at the end changes only when the fence
    lines in the changed span differ in parity from those in the old bytes it replaced: then, and only then,
    both files are scanned."""
    old = inp.old.read(path) if inp.old is not None else None
    if old is not None:
        replaced = old[start:len(old) - (len(data) - end)]
        if fences.open_after(data, start, end) == fences.open_after(replaced):
            return []
    at = fences.unclosed(data)
    if at is None or (old is not None and fences.open_after(old)):
        return []
    line = line_number_at(data, at)
    return [Violation.of(codes.UNCLOSED_FENCE, path, line)]


def _not_utf8(path: str, data: bytes, start: int) -> Violation:
    """GM902 with the line and byte offset in the whole file (only the tail from `start` was decoded)."""
    try:
        data[start:].decode("utf-8")
        bad, reason = start, "invalid UTF-8"
    except UnicodeDecodeError as err:
        bad, reason = start + err.start, err.reason
    return Violation.of(codes.NOT_UTF8, path, data.count(b"\n", 0, bad) + 1, byte=bad, reason=reason)
