"""Line-level building blocks shared by every memory file: decoding, headings, sections, fields, timestamps."""
from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from datetime import UTC, date, datetime, timedelta, timezone, tzinfo
from functools import cache, lru_cache
from itertools import compress, count, repeat
from typing import Any, TypeVar

from gitmem import codes
from gitmem.codes import Code
from gitmem.memory.fences import FENCE_MARKS
from gitmem.memory.once import kept_once
from gitmem.records import record

T = TypeVar("T")
Chars = TypeVar("Chars", str, bytes)     # text or the bytes it was read from: both compare by slices at C speed

# The canonical heading separator is U+00B7; humans may type " - " or " | " instead.
SEP = " · "
# Linear on any line: a match may start only at the first space of a run, and the run is taken whole
# (possessive), so a long run of spaces is read once, never again from each of its spaces.
_SEP_RE = re.compile(r"(?<! ) ++(?:·|-|\|) +")

_TS_RE = re.compile(r"^([0-9]{4})-([0-9]{2})-([0-9]{2}) ([0-9]{2}):([0-9]{2}) (UTC|[+-][0-9]{2}:[0-9]{2})$")
_TS_PREFIX_RE = re.compile(r"^[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2} (?:UTC|[+-][0-9]{2}:[0-9]{2})")
_FIELD_RE = re.compile(r"^[-*] ([A-Z][A-Za-z ]{0,30}?):(?: (.*)|)$")


@record(frozen=True)
class Problem:
    """A format problem found while parsing; the checks attach the file path."""

    code: str
    line: int
    message: str
    hint: str = ""
    since: int = 1          # the rules generation of the variant that found it (gitmem.codes.Code.generation)

    @classmethod
    def of(cls, code: Code, line: int, variant: str = "", /, **values: object) -> Problem:
        message, hint = code.render(variant, **values)
        return cls(code.code, line, message, hint, code.generation(variant))


@record(frozen=True, order=True)
class Timestamp:
    """A `YYYY-MM-DD HH:MM TZ` moment. `label` keeps the written zone (`UTC` or `+HH:MM`)."""

    moment: datetime
    label: str

    def __str__(self) -> str:
        return f"{self.moment:%Y-%m-%d %H:%M} {self.label}"

    @property
    def day(self) -> date:
        return self.moment.date()

    @classmethod
    def from_datetime(cls, moment: datetime) -> Timestamp:
        """Render an aware datetime in its own zone, truncated to the minute."""
        offset = moment.utcoffset()
        if offset is None:
            raise ValueError("timestamps need a time zone")
        moment = moment.replace(second=0, microsecond=0)
        label = "UTC" if _is_utc(moment.tzinfo, offset) else _offset_label(offset)
        return cls(moment, label)


def _is_utc(tz: tzinfo | None, offset: timedelta) -> bool:
    name = getattr(tz, "key", None) or (tz.tzname(None) if tz is not None else None)
    return offset == timedelta(0) and name in ("UTC", "Etc/UTC", "Z", "UTC+00:00", None) or tz is UTC


def _offset_label(offset: timedelta) -> str:
    minutes = int(offset.total_seconds()) // 60
    sign = "+" if minutes >= 0 else "-"
    minutes = abs(minutes)
    return f"{sign}{minutes // 60:02d}:{minutes % 60:02d}"


def parse_timestamp(text: str) -> Timestamp | None:
    match = _TS_RE.match(text.strip())
    if not match:
        return None
    year, month, day, hour, minute, label = match.groups()
    tz = _zone(label)
    if tz is None:
        return None
    try:
        moment = datetime(int(year), int(month), int(day), int(hour), int(minute), tzinfo=tz)
    except ValueError:
        return None
    # Built whole: every LOG heading, NOW block and Asked or Answered line is one (4,000 answers a close at 100x).
    return built_whole(Timestamp, {"moment": moment, "label": label})


@lru_cache(maxsize=64)
def _zone(label: str) -> tzinfo | None:
    """`UTC` or `+HH:MM` as a zone, None for an offset out of range. Cached: a history repeats a few labels,
    and the report reads one per LOG entry (gitmem.report.log_scan)."""
    if label == "UTC":
        return UTC
    sign = 1 if label[0] == "+" else -1
    hours, mins = int(label[1:3]), int(label[4:6])
    if hours > 23 or mins > 59:
        return None
    return timezone(sign * timedelta(hours=hours, minutes=mins))


def split_heading(title: str, maxsplit: int = -1) -> list[str]:
    """Split a heading on any accepted separator; `maxsplit` as in str.split."""
    return _SEP_RE.split(title.strip(), maxsplit=maxsplit if maxsplit >= 0 else 0)


def split_timestamped_heading(title: str) -> tuple[Timestamp | None, list[str]]:
    """`<timestamp> · a · b` -> (timestamp, ["a", "b"]); the timestamp's own dashes are not separators."""
    match = _TS_PREFIX_RE.match(title.strip())
    if not match:
        return None, []
    rest = title.strip()[match.end():]
    parts = _SEP_RE.split(rest)
    if not parts or parts[0] != "":
        return None, []
    return parse_timestamp(match.group(0)), [p.strip() for p in parts[1:]]


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


# What a terminal acts on rather than shows: C0 controls but TAB and LF (ESC starts ANSI sequences that clear the
# screen, set the title or write the clipboard; a bare CR or BS overprints what came before), DEL, the C1 controls
# (U+009B is a one-character CSI), and the Unicode line separators and bidirectional overrides that reorder or
# break what the reader sees. And what a reader cannot see at all: zero-width spaces and joiners, the word joiner,
# the invisible operators, a BOM inside text and the tag characters (text hidden from the human, read by a model),
# which make `D-0001` and `D-0001` plus one of them look alike. A zero-width joiner or non-joiner between two
# characters that are not ASCII is how emoji sequences and Persian or Indic words are written: shown as it is.
@cache     # compiled on first use: the pre-commit path imports this module and, passing, prints nothing
def _unprintable_re() -> re.Pattern[str]:
    return re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u180e\u200b\u200e\u200f\u2028\u2029\u202a-\u202e"
                      "\u2060-\u2064\u2066-\u2069\ufeff\U000e0000-\U000e007f]"
                      "|(?<![^\x00-\x7f\\s])[\u200c\u200d]|[\u200c\u200d](?![^\x00-\x7f\\s])")


def printable(text: str) -> str:
    """`text` (written by an agent, read from a repository) with each character a terminal would act on, or a
    reader could not see, shown as its `\\uXXXX` escape: the human sees that it is there, and the terminal
    executes nothing."""
    return _unprintable_re().sub(lambda found: _escaped(ord(found.group())), text)


def _escaped(point: int) -> str:
    return f"\\u{point:04x}" if point <= 0xFFFF else f"\\U{point:08x}"


def masked_printable(text: str) -> str:
    """Text from outside (an agent's, a repository's, a remote's) as gitmem shows it: the environment's secret
    values and secret-shaped strings masked (`gitmem.secrets.scrub`), then `printable`."""
    from gitmem.secrets import scrub  # the secret patterns load where outside text is shown, not on the check path

    return printable(scrub(text))


def printable_data(value: Any) -> Any:
    """A view's data (dicts, lists, strings, numbers) with every string `printable`: what the views show was
    read from memory an agent wrote, and the JSON and the text output alike must not carry an escape."""
    if isinstance(value, str):
        return printable(value)
    if isinstance(value, dict):
        return {printable_data(key): printable_data(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [printable_data(item) for item in value]
    return value


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


def common_prefix(a: Chars, b: Chars) -> int:
    """The length of the longest common prefix of `a` and `b` (binary search over memcmp: C speed on 75 MB)."""
    low, high = 0, min(len(a), len(b))
    while low < high:
        mid = (low + high + 1) // 2
        if a[:mid] == b[:mid]:
            low = mid
        else:
            high = mid - 1
    return low


def common_suffix(a: Chars, b: Chars, most: int) -> int:
    """How many last bytes or characters, `most` at most, `a` and `b` share (as `common_prefix`, from the end)."""
    low, high = 0, most
    while low < high:
        middle = (low + high + 1) // 2
        if a[len(a) - middle:len(a) - low] == b[len(b) - middle:len(b) - low]:
            low = middle
        else:
            high = middle - 1
    return low


def first_difference(old: bytes, new: bytes) -> int:
    """1-based line of the first byte where `new` stops being `old`."""
    return old.count(b"\n", 0, common_prefix(old, new)) + 1


def lf(text: str) -> str:
    """CRLF to LF, idempotent: `\r\r\n` is one line end too, so text read twice (bytes decoded, then parsed)
    reads the same as text read once, and a reader that starts mid-file agrees with one that starts at the top."""
    text = text.replace("\r\n", "\n")
    while "\r\n" in text:
        text = text.replace("\r\n", "\n")
    return text


# Section and Field: a parse builds one per heading and per field line, so each has an __init__ of its own that
# stores its fields straight into the instance's dict. That is faster than the standard decorator's compiled one
# (a whole LOG parses ~5% slower with a record's generic one), and nothing is compiled when the class is built
# (the standard decorator's exec() cost the pre-commit path 1.4 ms). tests/memory/test_text_records.py holds each
# __init__'s parameters to the class's fields.
@record(frozen=True)
class Section:
    """A heading and its body. `line` is the heading's line; `end` its last non-blank line (1-based, inclusive)."""

    title: str
    line: int
    end: int          # the last non-blank line of the section (the heading's line when the body is empty)
    body: tuple[str, ...]

    def __init__(self, title: str, line: int, end: int, body: tuple[str, ...]) -> None:
        stored = self.__dict__          # frozen: the fields are set once, here
        stored["title"], stored["line"], stored["end"], stored["body"] = title, line, end, body

    @property
    def body_start(self) -> int:
        return self.line + 1


def decode_lines(text: str) -> tuple[str, ...]:
    """Lines of already-decoded text, tolerant of CRLF and a BOM."""
    if text.startswith("\ufeff"):
        text = text[1:]
    return tuple(lf(text).split("\n"))


def title_problem(preamble: list[str] | tuple[str, ...], title: str, line: int = 1) -> list[Problem]:
    """GM907 when the lines before the first entry hold no `# ` title."""
    if has_title(preamble):
        return []
    role = title.lstrip("# ")
    return [Problem.of(codes.TITLE_MISSING, line, role=role, title=title)]


def split_id_heading(title: str, id_re: re.Pattern[str]) -> tuple[str, str] | None:
    """`D-0042 · title` -> ("D-0042", "title") when the ID matches `id_re` and a title follows."""
    parts = split_heading(title, 1)
    if len(parts) != 2 or not id_re.match(parts[0]) or not parts[1].strip():
        return None
    return parts[0], parts[1].strip()


def headed(sections: list[Section], parse_heading: Callable[[str], T | None], problems: list[Problem], *,
           code: Code, marker: str, what: str) -> Iterator[tuple[Section, T]]:
    """The sections whose heading parses; a `code` problem is recorded for each one that does not."""
    for section in sections:
        parsed = parse_heading(section.title)
        if parsed is None:
            variant = "digits" if parses_with_ascii_digits(section.title, parse_heading) else ""
            problems.append(Problem.of(code, section.line, variant, what=what, marker=marker, title=section.title))
            continue
        yield section, parsed


@cache
def _other_digit() -> re.Pattern[str]:
    """Unicode decimal digits other than 0-9, the ones rules 2 folded (compiled on first use: the pre-commit
    path seldom meets one)."""
    return re.compile(r"[^\D0-9]")


def fold_digits(text: str) -> str:
    """`text` with every decimal digit written as 0-9 (`cycle ٣` -> `cycle 3`): how rules 2 read numbers, when
    `\\d` and int() took any decimal digit for one. Each distinct digit is converted once and the text is
    translated at C speed: converting digit by digit cost 0.7 s on a megabyte heading that held a `·`."""
    if text.isascii():
        return text
    other = set(_other_digit().findall(text))
    return text.translate({ord(digit): str(int(digit)) for digit in other}) if other else text


def parses_with_ascii_digits(text: str, parse: Callable[[str], object | None]) -> bool:
    """Text that fails to parse only because it writes digits other than 0-9 (`cycle ٣`): a rules-3 problem (the
    code's `digits` variant), so that history written before it, when such text parsed, still verifies."""
    folded = fold_digits(text)
    return folded != text and parse(folded) is not None


def has_title(preamble: list[str] | tuple[str, ...]) -> bool:
    """A `# ` title before the first entry. Any title will do: `# NOW` in NOW.md, `# ESTADO` in ESTADO.md."""
    return any(heading_level(line) == 1 for line in preamble)


def heading_level(line: str) -> int:
    """2 for `## x`; 0 when the line is not an ATX heading."""
    if not line.startswith("#"):
        return 0
    level = len(line) - len(line.lstrip("#"))
    if level > 6 or (len(line) > level and line[level] != " "):
        return 0
    return level


def split_sections(lines: tuple[str, ...] | list[str], level: int, first_line: int = 1, *,
                   in_fence: bool = False) -> tuple[list[str], list[Section]]:
    """Split at headings of exactly `level`; headings of a higher level also end a section.

    Returns the lines before the first heading and the sections. Fenced code is skipped so a `## `
    inside a code block is not taken for a heading (`gitmem.memory.fences`); `in_fence` is the fence
    state where `lines` start, for a reader that parses the tail of a file.

    Only the lines that start with `#` or a fence mark can end a section or change the fence state: they are
    picked out at C speed (`_marked`), and the lines between them are taken as slices (DECISIONS is 32,000
    lines at 100x, and every cycle parses it whole).
    """
    preamble: list[str] = []
    sections: list[Section] = []
    title: str | None = None
    start = body_start = run_start = 0     # the heading's line; where its body starts; where the preamble's run does
    deeper = "#" * (level + 1)             # a deeper heading, or no heading at all: never a section's end
    for index in _marked(lines):
        line = lines[index]
        if line[0] != "#":                 # a fence line
            in_fence = not in_fence
            continue
        if in_fence or line.startswith(deeper):
            continue
        found = heading_level(line)
        if not found:
            continue
        if title is not None:
            sections.append(_section(title, start, lines[body_start:index]))
            title, run_start = None, index
        if found == level:
            # A heading above `level` that ended a section stays in the preamble's run, with the lines after it.
            preamble += lines[run_start:index]
            title, start, body_start = line[level + 1:].strip(), first_line + index, index + 1
    if title is not None:
        sections.append(_section(title, start, lines[body_start:]))
    else:
        preamble += lines[run_start:]
    return preamble, sections


_MARKS = ("#", *FENCE_MARKS)


def _marked(lines: tuple[str, ...] | list[str]) -> Iterator[int]:
    """The indexes of the lines starting with `#` or a fence mark, found without a Python step per line."""
    return compress(count(), map(str.startswith, lines, repeat(_MARKS)))


def _section(title: str, start: int, body: tuple[str, ...] | list[str]) -> Section:
    # `end` is the last non-blank line, so a section never claims the blank lines that separate it
    # from the next one (or the phantom line after the file's final newline).
    kept = len(body)
    while kept and not body[kept - 1].strip():
        kept -= 1
    return built_whole(Section, {"title": title, "line": start, "end": start + kept, "body": tuple(body)})


_new = object.__new__
_set = object.__setattr__


def built_whole(cls: type[T], values: dict[str, Any]) -> T:
    """`cls(**values)` for a frozen dataclass of `values`' fields, in their order, with no default to fill
    and no `__post_init__`: its `__dict__` is set whole, where the frozen `__init__` calls `object.__setattr__`
    once per field (three times slower; a whole DECISIONS holds 24,000 fields at 100x, LESSONS 10,000 events).
    What it builds equals, hashes and prints as the dataclass's own (tests/memory/test_parse_equivalence.py)."""
    made = _new(cls)
    _set(made, "__dict__", values)
    return made


@record(frozen=True)
class Field:
    """A `- Key: value` line; continuation lines (indented) are joined to `value` with newlines."""

    key: str
    value: str
    line: int
    end: int

    def __init__(self, key: str, value: str, line: int, end: int) -> None:
        stored = self.__dict__          # frozen: the fields are set once, here (Section says why)
        stored["key"], stored["value"], stored["line"], stored["end"] = key, value, line, end


def parse_fields(body: tuple[str, ...] | list[str], first_line: int) -> tuple[Field, ...]:
    """The `- Key: value` fields of `body`, whose first line is `first_line`. Each line is matched at C speed;
    only the fields' own lines take a Python step (a whole DECISIONS holds 24,000 fields at 100x)."""
    fields: list[Field] = []
    matches = list(map(_FIELD_RE.match, body))
    for index in compress(count(), matches):
        key, value, after = _field_at(body, index, matches[index])  # type: ignore[arg-type]
        fields.append(built_whole(Field, {"key": key, "value": value, "line": first_line + index,
                                          "end": first_line + after - 1}))
    return tuple(fields)


def first_field_value(body: tuple[str, ...] | list[str], key: str) -> str | None:
    """`field_value(parse_fields(body, n), key)` without building the other fields: a close asks each of 4,000
    decisions (100x) for its Answered line alone. Only a line that starts as that field's line can be it, and the
    fields before it do not move it (a continuation line is indented, and no indented line is a field line)."""
    for index, match in _key_lines(body, key):
        return _field_at(body, index, match)[1]
    return None


def fields_keyed(body: tuple[str, ...] | list[str], first_line: int, key: str) -> tuple[Field, ...]:
    """`fields_named(parse_fields(body, first_line), key)` without building the other fields (as
    `first_field_value`): the close's gates ask 1,300 lessons (100x) for their Happened, Confirmed and Status
    lines alone."""
    found: list[Field] = []
    for index, match in _key_lines(body, key):
        _, value, after = _field_at(body, index, match)
        found.append(built_whole(Field, {"key": key, "value": value, "line": first_line + index,
                                         "end": first_line + after - 1}))
    return tuple(found)


def field_line_starts(key: str) -> tuple[str, str]:
    """How a line of the `key` field starts (`- Key:` or `* Key:`, `_FIELD_RE`): a line that does not start so is
    no line of that field, which a reader can tell at C speed before it matches anything."""
    return f"- {key}:", f"* {key}:"


def _key_lines(body: tuple[str, ...] | list[str], key: str) -> Iterator[tuple[int, re.Match[str]]]:
    """The field lines of `key` in `body`, in order, with their match; the lines that may be one are picked out
    at C speed."""
    for index in compress(count(), map(str.startswith, body, repeat(field_line_starts(key)))):
        match = _FIELD_RE.match(body[index])
        if match is not None and match.group(1) == key:
            yield index, match


def _field_at(body: tuple[str, ...] | list[str], index: int, match: re.Match[str]) -> tuple[str, str, int]:
    """The key and value of the field line `body[index]` (`match`), and the index after its last line."""
    key, value = match.group(1, 2)
    value = value.strip() if value else ""
    after = index + 1
    total = len(body)
    # Indented, non-blank lines continue the value; any other line ends it (a field line, too, starts a new
    # one: it is never indented).
    if after < total and body[after].startswith("  ") and body[after].strip():
        parts = [value]
        while after < total and body[after].startswith("  ") and body[after].strip():
            parts.append(body[after].strip())
            after += 1
        value = "\n".join(parts)
    return key, value, after


def render_field(key: str, value: str) -> list[str]:
    """`- Key: value` plus indented continuation lines, in the form `parse_fields` reads back unchanged.

    Lines are trimmed and blank continuation lines dropped: a blank line would end the field, and
    the rest of the value would silently fall out of it.
    """
    first, *rest = [line.strip() for line in value.split("\n")] if value else [""]
    head = f"- {key}: {first}" if first else f"- {key}:"
    return [head, *(f"  {line}" for line in rest if line)]


class Entry:
    """What every heading-plus-body entry shares: field lookup and canonical rendering.

    Subclasses are frozen dataclasses with `body` and `fields`, and say how their heading reads.
    """

    def heading(self) -> str:
        raise NotImplementedError

    def get(self, key: str) -> str | None:
        return field_value(self.fields, key)  # type: ignore[attr-defined]

    def line_of(self, key: str) -> int:
        """The line of the `- Key:` field, where a diagnostic about it points; the heading's when there is none."""
        found = fields_named(self.fields, key)  # type: ignore[attr-defined]
        return found[0].line if found else int(self.line)  # type: ignore[attr-defined]

    def render(self) -> str:
        return "\n".join([self.heading(), *strip_trailing_blank(self.body)])  # type: ignore[attr-defined]


class IdEntry(Entry):
    """An entry named by an ID and a title (decisions, lessons)."""

    def content(self) -> str:
        """The entry as written, independent of where it sits in the file: what rewrite checks compare."""
        return "\n".join([self.id, self.title, *strip_trailing_blank(self.body)])  # type: ignore[attr-defined]


def field_value(fields: tuple[Field, ...], key: str) -> str | None:
    for field in fields:
        if field.key == key:
            return field.value
    return None


def fields_named(fields: tuple[Field, ...], key: str) -> list[Field]:
    return [field for field in fields if field.key == key]


def nonblank_count(lines: tuple[str, ...] | list[str]) -> int:
    return sum(1 for line in lines if line.strip())


def without_fields(lines: list[str], keys: tuple[str, ...]) -> list[str]:
    """`lines` without the `- Key:` lines of `keys` and their indented continuation lines, which would otherwise
    join the field above."""
    kept: list[str] = []
    dropping = False
    for line in lines:
        if any(line.startswith(f"- {key}:") for key in keys):
            dropping = True
            continue
        if dropping and line.startswith("  ") and line.strip():
            continue
        dropping = False
        kept.append(line)
    return kept


def strip_trailing_blank(lines: list[str] | tuple[str, ...]) -> list[str]:
    out = list(lines)
    while out and not out[-1].strip():
        out.pop()
    return out


def one_line(value: str) -> str:
    """Collapse whitespace so a value fits a single canonical line."""
    return " ".join(value.split())


def shortened(text: str, limit: int = 100) -> str:
    """`text` on one line of at most `limit` characters; a cut is marked with `…`, so nothing is shortened
    silently (the close's report, the status dashboard)."""
    text = one_line(text)
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


# What GitHub acts on in a commit message or a PR's text: `@name` notifies a user or a team, `#12`, `GH-12` and
# `owner/repo#12` link, and after a closing keyword ("Fixes #12") the issue closes when the text lands on the
# default branch.
@cache     # compiled on first use: only what gitmem publishes to GitHub needs it
def _reference() -> re.Pattern[str]:
    return re.compile(r"[@#]|\b(?i:gh)-(?=\d)")


_ZERO_WIDTH = "\u200b"


# What a CI runner acts on in a job's log rather than shows: a line that starts with `::` (after blanks) is a GitHub
# Actions workflow command (`::add-mask::`, `::stop-commands::`, `::error::`), and `##[command]` anywhere in a
# line is its older form, as `##vso[...]` is Azure Pipelines' (`task.setvariable` sets a later step's PATH) and
# `##teamcity[...]` TeamCity's. Text gitmem prints from memory or from the agent would run them in the human's CI.
@cache     # compiled on first use: the pre-commit path imports this module and, passing, prints nothing
def _log_command_re() -> re.Pattern[str]:
    return re.compile(r"(?m)^[^\S\n]*:(?=:)|#(?=#[A-Za-z]*\[)")


def without_log_commands(text: str) -> str:
    """`text` as gitmem prints it: a zero-width space inside each `::` that starts a line and after the first `#`
    of each `##…[`, so no CI runner reads a command in it, and a reader sees the text as written. gitmem's own
    workflow commands (gitmem.views.actions, the `github` format) are written without it."""
    if "::" not in text and "##" not in text:
        return text
    return _log_command_re().sub(lambda found: found.group() + _ZERO_WIDTH, text)


def unlinked(text: str) -> str:
    """The agent's `text` with a zero-width space after each `@`, `#` and `GH-`: GitHub shows it as written, and
    it notifies no one, links no issue and closes none."""
    return _reference().sub(lambda found: found.group() + _ZERO_WIDTH, text)
