"""A memory file's bytes as text: UTF-8 or GM902, a BOM and CRLF accepted with GM905, the control characters
memory may not hold, the bytes that are not UTF-8, and the bytes a text was decoded from, kept to compare."""
from __future__ import annotations

import re
from collections.abc import Iterator
from functools import cache

from gitmem import codes
from gitmem.memory.once import kept_once
from gitmem.memory.problems import Problem
from gitmem.records import record

# Control characters a memory file never holds: C0 controls other than TAB and LF, DEL, and a CR that is not
# part of CRLF (CRLF stays the GM905 warning). A bare CR renders as a line break in some viewers, so it can
# forge a heading; NUL makes git treat the file as binary. `translate` finds out whether any is there at memory
# speed; only then does the regex say where.
_CONTROL_BYTES = bytes(b for b in range(32) if b not in (9, 10, 13)) + b"\x7f"


@cache
def _control_re() -> re.Pattern[bytes]:
    """Compiled on first use: `translate` has found a control character (or a CR) first."""
    return re.compile(rb"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]|\r(?!\n)")


def control_characters(data: bytes, start: int = 0) -> Iterator[tuple[int, str]]:
    """(offset, what) of each control character in data[start:] that memory may not hold."""
    if len(data.translate(None, _CONTROL_BYTES)) == len(data) and data.count(b"\r") == data.count(b"\r\n"):
        return
    for match in _control_re().finditer(data, start):
        found = match.group()
        yield match.start(), ("NUL" if found == b"\0" else "a bare carriage return (CR)" if found == b"\r"
                              else f"the control character U+{found[0]:04X}")


@record(frozen=True)
class Decoded:
    """A memory file's bytes as text, its lines, and what stopped it being plain UTF-8 text."""
    text: str
    lines: tuple[str, ...]
    problems: tuple[Problem, ...]


def decode(data: bytes) -> Decoded:
    """Bytes to lines. Invalid UTF-8 is GM902; CRLF and a BOM are accepted with a GM905 warning."""
    return _decode(data, split=True)


def decode_text(data: bytes) -> str:
    """`decode(data).text` without splitting it into lines: a 75 MB LOG read whole is 1.3 million of them."""
    return _decode(data, split=False).text


# The memory files as a process reads them from disk: a cycle reads every file before its agent, after it, and
# again to settle LOG and NOW, and finds most unchanged; bytes decoded before are answered from then
# (gitmem.memory.once). Only files read whole go through it: a reader of many commits (verify) decodes each
# with `decode_text` and keeps none of them.
@kept_once(8)
def _decoded_once(data: bytes) -> Decoded:
    return _decode(data, split=False)


# The texts decoded from files that held their exact UTF-8 encoding (no BOM, no CRLF), with those bytes: what a
# step compares as bytes (LOG's append, NOW grown on top, a file put back) is not encoded again (gitmem.memory
# .once's bound: as many as the files a process reads in turn).
_ENCODED: list[tuple[str, bytes]] = []


def decode_file_text(data: bytes) -> str:
    """`decode_text(data)`, decoded once per process for the same bytes (see above)."""
    return decode_file(data)[0]


def decode_file(data: bytes) -> tuple[str, tuple[Problem, ...]]:
    """`decode_file_text(data)` and what stopped the bytes being plain UTF-8 text (`decode`'s problems)."""
    decoded = _decoded_once(data)
    if not decoded.problems and not any(known is decoded.text for known, _ in _ENCODED):
        _ENCODED.insert(0, (decoded.text, data))
        del _ENCODED[8:]
    return decoded.text, decoded.problems


# The most lines with bytes that are not UTF-8 a reader names: each more costs a decode of the rest of the bytes.
UNDECODABLE_NAMED = 10


def undecodable(data: bytes, *, limit: int = UNDECODABLE_NAMED) -> list[tuple[int, str]]:
    """(offset, why) of the first byte that is not UTF-8 on each line of `data` that has one, the first `limit`
    such lines: what a forgiving reader (one that replaces such bytes) read without reading it. One decode when
    there is none; the bytes would be decoded anyway."""
    found: list[tuple[int, str]] = []
    at = 0
    while len(found) < limit:
        try:
            data[at:].decode("utf-8")
            break
        except UnicodeDecodeError as err:
            bad = at + err.start
            found.append((bad, err.reason))
            end = data.find(b"\n", bad)
            if end < 0:
                break
            at = end + 1
    return found


def not_utf8_at(data: bytes, at: int) -> tuple[int, str] | None:
    """(the offset in `data` of the first byte that is not UTF-8 on the line starting at `at`, why), or None when
    that line is text."""
    end = data.find(b"\n", at)
    try:
        data[at:end if end >= 0 else len(data)].decode("utf-8")
    except UnicodeDecodeError as err:
        return at + err.start, err.reason
    return None


def decoding_problems(data: bytes) -> tuple[Problem, ...]:
    """`decode(data).problems`, without splitting the text into lines."""
    return _decode(data, split=False).problems


def encoded(text: str) -> bytes:
    """`text.encode("utf-8")`, answered with the bytes it was decoded from when this process read it from a file
    that held exactly them (`decode_file_text`): at 100x a cycle's settling compares a 75 MB LOG and a 10 MB
    NOW as bytes, and encoding them again each time costs more than reading them."""
    for known, data in _ENCODED:
        if known is text:
            return data
    return text.encode("utf-8")


def _decode(data: bytes, *, split: bool) -> Decoded:
    problems: list[Problem] = []
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
        problems.append(Problem.of(codes.NON_CANONICAL_ENCODING, 1, "bom"))
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as err:
        line = data[: err.start].count(b"\n") + 1
        return Decoded("", (), (Problem.of(codes.NOT_UTF8, line, byte=err.start, reason=err.reason),))
    # A lone character is found at memchr speed, a pair is not: a 75 MB LOG with no CR is told in 9 ms, not 90.
    if "\r" in text and "\r\n" in text:
        first = text[: text.index("\r\n")].count("\n") + 1
        problems.append(Problem.of(codes.NON_CANONICAL_ENCODING, first, "crlf"))
        text = lf(text)
    return Decoded(text, tuple(text.split("\n")) if split else (), tuple(problems))


def lf(text: str) -> str:
    """CRLF to LF, idempotent: `\r\r\n` is one line end too, so text read twice (bytes decoded, then parsed)
    reads the same as text read once, and a reader that starts mid-file agrees with one that starts at the top."""
    text = text.replace("\r\n", "\n")
    while "\r\n" in text:
        text = text.replace("\r\n", "\n")
    return text


def decode_lines(text: str) -> tuple[str, ...]:
    """Lines of already-decoded text, tolerant of CRLF and a BOM."""
    if text.startswith("\ufeff"):
        text = text[1:]
    return tuple(lf(text).split("\n"))
