"""Secrets: what they look like, which environment variables hold them, and how they are removed from text.

One module for every place that must not leak one: the GM903 check, messages and error text, files the
runner commits, the agent backends and their tools, the GitHub client. Patterns are compiled on first use,
so importing this costs nothing on the pre-commit path until a file actually holds a needle.
"""
from __future__ import annotations

import functools
import os
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass

# Variables whose values are secrets wherever they appear (the model's key, tokens that can push).
SECRET_ENV = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "GITHUB_TOKEN", "GH_TOKEN", "GITMEM_GIT_TOKEN")
MIN_VALUE = 8            # shorter values are not worth replacing: they would hit ordinary words
REDACTED = "[redacted]"  # in messages
MASK = "***"             # in files and error text the runner keeps


@dataclass(frozen=True)
class Pattern:
    source: str                   # the regular expression, over bytes or text alike
    what: str                     # what it looks like, for the message; the match itself is never shown
    needles: tuple[bytes, ...]    # literal text it cannot match without: `bytes.find` runs at memory speed


PATTERNS: tuple[Pattern, ...] = (
    Pattern(r"sk-ant-[A-Za-z0-9_\-]{16,}", "an Anthropic API key (sk-ant-…)", (b"sk-ant-",)),
    Pattern(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b", "an AWS access key id", (b"AKIA", b"ASIA")),
    Pattern(r"\bgh[pousr]_[A-Za-z0-9]{30,}", "a GitHub token", (b"ghp_", b"gho_", b"ghu_", b"ghs_", b"ghr_")),
    Pattern(r"\bgithub_pat_[A-Za-z0-9_]{22,}", "a GitHub fine-grained token", (b"github_pat_",)),
    Pattern(r"\bsk-(?:proj-)?[A-Za-z0-9]{32,}", "an OpenAI-style API key", (b"sk-",)),
    Pattern(r"-----BEGIN (?:[A-Z]+ )?PRIVATE KEY-----", "a private key", (b"-----BEGIN ",)),
    Pattern(r"\bxox[baprs]-[A-Za-z0-9-]{10,}", "a Slack token", (b"xoxb-", b"xoxa-", b"xoxp-", b"xoxr-", b"xoxs-")),
)
# Redaction is wider than detection: an Anthropic key prefix is removed from messages whatever follows it.
_REDACT_ONLY = (r"sk-ant-[A-Za-z0-9_\-]+",)


@functools.cache
def _compiled_bytes() -> tuple[tuple[re.Pattern[bytes], Pattern], ...]:
    return tuple((re.compile(p.source.encode()), p) for p in PATTERNS)


@functools.cache
def _redactor() -> re.Pattern[str]:
    return re.compile("|".join(f"(?:{source})" for source in (*_REDACT_ONLY, *(p.source for p in PATTERNS))))


def find(data: bytes) -> Iterator[tuple[int, str]]:
    """(offset, what it looks like) of every secret-like token in `data`."""
    for regex, pattern in _compiled_bytes():
        if any(needle in data for needle in pattern.needles):
            for found in regex.finditer(data):
                yield found.start(), pattern.what


def env_values(environ: Mapping[str, str] | None = None) -> list[str]:
    """The values of the secret variables that are set (and long enough to be secrets)."""
    environ = os.environ if environ is None else environ
    return [value for name in SECRET_ENV if len(value := environ.get(name, "")) >= MIN_VALUE]


def redact(text: str, extra_values: Iterable[str | None] = (), *, mark: str = REDACTED) -> str:
    """`text` with every secret-like token and every value in `extra_values` replaced by `mark`."""
    if not text:
        return text
    for value in extra_values:
        if value and len(value) >= MIN_VALUE:
            text = text.replace(value, mark)
    return _redactor().sub(mark, text)


def redact_bytes(data: bytes, extra_values: Iterable[str] = (), *, mark: str = MASK) -> bytes:
    """`data` with the secret values and the secret-like tokens replaced; other bytes kept exactly."""
    for value in extra_values:
        if len(value) >= MIN_VALUE:
            data = data.replace(value.encode(), mark.encode())
    for regex, pattern in _compiled_bytes():
        if any(needle in data for needle in pattern.needles):
            data = regex.sub(mark.encode(), data)
    return data


def scrub(text: str) -> str:
    """Text bound for a message, a log or a file, without the environment's secrets or secret-like tokens."""
    return redact_bytes(text.encode("utf-8", "replace"), env_values()).decode("utf-8", "replace")


def is_secret_name(name: str) -> bool:
    """An environment variable that, by its name, holds a credential."""
    return name in SECRET_ENV or any(word in name for word in ("KEY", "TOKEN", "SECRET"))
