"""GM9xx: rules over every memory file: presence, encoding, conflict markers, secrets."""
from __future__ import annotations

import re
from collections.abc import Iterator

from gitmem.checks import CheckInput
from gitmem.checks.violation import Violation
from gitmem.config import REQUIRED_ROLES
from gitmem.memory.text import decode
from gitmem.snapshot import same_blob

_CONFLICT_RE = re.compile(rb"^(?:<{7}|>{7})(?: |$)|^={7}$", re.M)
# (pattern, what it looks like). The message never repeats the matched text.
SECRET_PATTERNS: tuple[tuple[re.Pattern[bytes], str], ...] = (
    (re.compile(rb"sk-ant-[A-Za-z0-9_\-]{16,}"), "an Anthropic API key (sk-ant-…)"),
    (re.compile(rb"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"), "an AWS access key id"),
    (re.compile(rb"\bgh[pousr]_[A-Za-z0-9]{30,}"), "a GitHub token"),
    (re.compile(rb"\bgithub_pat_[A-Za-z0-9_]{22,}"), "a GitHub fine-grained token"),
    (re.compile(rb"\bsk-(?:proj-)?[A-Za-z0-9]{32,}"), "an OpenAI-style API key"),
    (re.compile(rb"-----BEGIN (?:[A-Z]+ )?PRIVATE KEY-----"), "a private key"),
    (re.compile(rb"\bxox[baprs]-[A-Za-z0-9-]{10,}"), "a Slack token"),
)


def new_part(old: bytes | None, new: bytes) -> tuple[bytes, int]:
    """The bytes that still need scanning and their first line: only the appended tail of an append."""
    if old is not None and len(new) >= len(old) and new.startswith(old):
        cut = old.rfind(b"\n", 0, len(old)) + 1 if old else 0
        return new[cut:], old.count(b"\n", 0, cut) + 1
    return new, 1


def _line_of(data: bytes, offset: int, first_line: int) -> int:
    return first_line + data.count(b"\n", 0, offset)


def scan(path: str, data: bytes, first_line: int = 1) -> Iterator[Violation]:
    match = _CONFLICT_RE.search(data)
    if match:
        yield Violation(path, _line_of(data, match.start(), first_line), "GM901",
                        "merge conflict marker; resolve the conflict before committing")
    for pattern, what in SECRET_PATTERNS:
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
        old = inp.old.read(path) if inp.old is not None else None
        part, first_line = new_part(old, data)
        problems = decode(part).problems
        found += [Violation(path, p.line + first_line - 1, p.code, p.message, p.hint) for p in problems]
        if not any(p.code == "GM902" for p in problems):
            found += scan(path, part, first_line)
    return found
