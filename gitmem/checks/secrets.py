"""Secret-like tokens: found in memory bytes (GM903) and scrubbed from any text gitmem prints."""
from __future__ import annotations

import re

# (pattern, what it looks like). Messages name the kind, never the matched text.
_SOURCES: tuple[tuple[str, str], ...] = (
    (r"sk-ant-[A-Za-z0-9_\-]{16,}", "an Anthropic API key (sk-ant-…)"),
    (r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b", "an AWS access key id"),
    (r"\bgh[pousr]_[A-Za-z0-9]{30,}", "a GitHub token"),
    (r"\bgithub_pat_[A-Za-z0-9_]{22,}", "a GitHub fine-grained token"),
    (r"\bsk-(?:proj-)?[A-Za-z0-9]{32,}", "an OpenAI-style API key"),
    (r"-----BEGIN (?:[A-Z]+ )?PRIVATE KEY-----", "a private key"),
    (r"\bxox[baprs]-[A-Za-z0-9-]{10,}", "a Slack token"),
)
SECRET_PATTERNS: tuple[tuple[re.Pattern[bytes], str], ...] = tuple(
    (re.compile(source.encode()), what) for source, what in _SOURCES)
_TEXT_RE = re.compile("|".join(f"(?:{source})" for source, _ in _SOURCES))
REDACTED = "[redacted]"


def redact(text: str) -> str:
    """`text` with every secret-like token replaced, for messages that quote a line of a memory file."""
    return _TEXT_RE.sub(REDACTED, text) if text else text
