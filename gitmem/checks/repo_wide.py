"""GM9xx: rules over every memory file: presence, encoding, conflict markers, secrets."""
from __future__ import annotations

import re
from collections.abc import Iterator

from gitmem.checks import CheckInput
from gitmem.checks.common import line_at, span_against
from gitmem.checks.secrets import SECRET_PATTERNS
from gitmem.checks.violation import Violation
from gitmem.config import REQUIRED_ROLES
from gitmem.memory.text import decode
from gitmem.snapshot import same_blob

# Markers as git writes them; `\r?` because a CRLF file must not hide its conflicts.
_CONFLICT_RE = re.compile(rb"^(?:<{7}|>{7})(?: |\r?$)|^={7}\r?$", re.M)


def _line_of(data: bytes, offset: int, first_line: int) -> int:
    return first_line + data.count(b"\n", 0, offset)


# Literal text each pattern cannot match without (keyed by the pattern's source; a changed pattern simply
# loses its shortcut). `bytes.find` runs at memory speed, a regex with `\b` at ~30 ms per MB: NOW is
# rescanned whole on every commit, and at 100x it holds 10 MB.
_NEEDLES: dict[bytes, tuple[bytes, ...]] = {
    _CONFLICT_RE.pattern: (b"<<<<<<<", b">>>>>>>", b"======="),
    rb"sk-ant-[A-Za-z0-9_\-]{16,}": (b"sk-ant-",),
    rb"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b": (b"AKIA", b"ASIA"),
    rb"\bgh[pousr]_[A-Za-z0-9]{30,}": (b"ghp_", b"gho_", b"ghu_", b"ghs_", b"ghr_"),
    rb"\bgithub_pat_[A-Za-z0-9_]{22,}": (b"github_pat_",),
    rb"\bsk-(?:proj-)?[A-Za-z0-9]{32,}": (b"sk-",),
    rb"-----BEGIN (?:[A-Z]+ )?PRIVATE KEY-----": (b"-----BEGIN ",),
    rb"\bxox[baprs]-[A-Za-z0-9-]{10,}": (b"xoxb-", b"xoxa-", b"xoxp-", b"xoxr-", b"xoxs-"),
}


def _may_match(pattern: re.Pattern[bytes], data: bytes) -> bool:
    needles = _NEEDLES.get(pattern.pattern)
    return needles is None or any(needle in data for needle in needles)


def scan(path: str, data: bytes, first_line: int = 1) -> Iterator[Violation]:
    match = _CONFLICT_RE.search(data) if _may_match(_CONFLICT_RE, data) else None
    if match:
        yield Violation(path, _line_of(data, match.start(), first_line), "GM901",
                        "merge conflict marker; resolve the conflict before committing")
    for pattern, what in SECRET_PATTERNS:
        if not _may_match(pattern, data):
            continue
        for found in pattern.finditer(data):
            yield Violation(path, _line_of(data, found.start(), first_line), "GM903",
                            f"this looks like {what}; remove it and rotate it",
                            "secrets belong in the environment, never in memory")


def check(inp: CheckInput) -> list[Violation]:
    found: list[Violation] = []
    for role, path in inp.config.memory_paths().items():
        data = inp.new.read(path)
        if data is None:
            if role in REQUIRED_ROLES:
                found.append(Violation(path, 1, "GM904", f"memory file {path} is missing",
                                       "run `gitmem init` to create the missing files"))
            continue
        if same_blob(inp.old, inp.new, path):
            continue
        start, end = span_against(inp, path, data)
        part = data[start:end]
        problems = decode(part).problems
        if any(p.code == "GM902" for p in problems):
            found.append(_not_utf8(path, data, start))
            continue
        # Line numbers are counted only when something is reported: the happy path reads no history.
        reported = [(p.line, p.code, p.message, p.hint) for p in problems]
        reported += [(v.line, v.code, v.message, v.hint) for v in scan(path, part, 1)]
        if reported:
            first_line = line_at(data, start)
            found += [Violation(path, line + first_line - 1, code, message, hint)
                      for line, code, message, hint in reported]
    return found


def _not_utf8(path: str, data: bytes, start: int) -> Violation:
    """GM902 with the line and byte offset in the whole file (only the tail from `start` was decoded)."""
    try:
        data[start:].decode("utf-8")
        bad, reason = start, "invalid UTF-8"
    except UnicodeDecodeError as err:
        bad, reason = start + err.start, err.reason
    return Violation(path, data.count(b"\n", 0, bad) + 1, "GM902", f"not valid UTF-8 (byte {bad}: {reason})",
                     "save the file as UTF-8")
