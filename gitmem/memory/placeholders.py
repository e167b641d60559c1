"""The template's placeholders (`<agent name>`) left in a memory file, and the ROADMAP items that ask for them to
be filled in. One rule for `gitmem status` (which flags them), the cycle (which refuses to start on them: RULES
goes into every prompt, so the agent would start with no identity) and the close (whose plan reads such an
item as done once the file holds no placeholder, whether or not anyone ticked its box)."""
from __future__ import annotations

import re
from collections.abc import Callable

# `<agent name>`, `<one sentence: what this agent exists to do>`: an angle-bracketed phrase of words with a
# space in it. Not an HTML comment or tag, an autolink (`<https://…>`) or an address (`<a@b.org>`).
PLACEHOLDER = re.compile(r"<(?![!/])(?P<text>[A-Za-z][^<>@\n`]*\s[^<>@\n`]*?)>")
_COMMENT = re.compile(r"<!--.*?-->", re.S)
# The template's `- [ ] Fill in RULES.md: who the agent is and who its human is`.
_FILL_IN = re.compile(r"^(?P<head>\s*- )\[ \](?P<rest> Fill in (?P<name>[^\s:]+))")


def find_placeholders(text: str) -> list[tuple[int, str]]:
    """(line, placeholder) for each placeholder in `text`, in order; HTML comments are not read by anyone."""
    text = _COMMENT.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)
    return [(text.count("\n", 0, match.start()) + 1, match.group(0)) for match in PLACEHOLDER.finditer(text)]


def with_filled_ticked(roadmap_text: str, filled: Callable[[str], bool]) -> str:
    """ROADMAP as its real state reads it: an open `Fill in NAME` item is ticked when `filled(NAME)` says the
    file holds no placeholder any more. Only for reading: the file itself is not rewritten."""
    return "".join(_FILL_IN.sub(r"\g<head>[x]\g<rest>", line) if (match := _FILL_IN.match(line)) and
                   filled(match["name"]) else line for line in roadmap_text.splitlines(keepends=True))
