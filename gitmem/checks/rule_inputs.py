"""What the rule families read from a CheckInput: decoded views of one file in the old and new snapshots, the
span that changed, and whether the change is the agent's."""
from __future__ import annotations

from collections.abc import Iterable
from enum import Enum
from typing import Any

from gitmem.checks.inputs import CheckInput
from gitmem.checks.violation import Violation
from gitmem.codes import Code
from gitmem.gitio import Snapshot
from gitmem.memory import now
from gitmem.memory.common_ends import common_prefix, common_suffix
from gitmem.memory.decoding import decode_text


def texts(inp: CheckInput, role: str, skip: set[str]) -> tuple[str, str | None, str] | None:
    """(path, old text, new text) for a changed, decodable file; None when there is nothing to check."""
    path = inp.config.path(role)
    if path in skip:
        return None
    new_text = decoded(inp.new, path)
    if new_text is None:
        return None
    return path, decoded(inp.old, path) if inp.old is not None else None, new_text


def decoded(snapshot: Snapshot, path: str) -> str | None:
    """The text of a file in `snapshot`, decoded once per snapshot (`decode_text`): the rules of two families read
    LESSONS (1.4 MB at 100x), and a snapshot lives as long as the check that reads it."""
    key = ("text", path)
    if key not in snapshot.facts:
        data = snapshot.read(path)
        snapshot.facts[key] = decode_text(data) if data is not None else None
    return snapshot.facts[key]  # type: ignore[return-value]


def changed_span(old: bytes | None, new: bytes) -> tuple[int, int]:
    """The byte range [start, end) of NEW that still needs checking, given that OLD was valid.

    LOG grows at the end and NOW at the top, so an append leaves only its tail (from the start of OLD's last
    line) and a prepend only its head (through NEW's preamble and new blocks). Anything else: all of NEW.
    Cost is a memcmp over OLD, never a decode or a parse of the history.
    """
    if old is None:
        return 0, len(new)
    if new.startswith(old):
        return old.rfind(b"\n") + 1, len(new)
    # NOW's old blocks below what grew on top: all of them, or its newest as the runner keeps them (rules 6).
    kept_at = now.old_blocks_at(old, new)
    return (0, kept_at) if kept_at is not None else (0, len(new))


def edited_span(old: bytes | None, new: bytes) -> tuple[int, int]:
    """The lines of NEW that differ from OLD, as a byte range [start, end): from the start of the first line that
    differs to the end of the last one, every byte before and after it as OLD holds it. Given that OLD was
    valid, a file edited in place is judged on those lines: a close that marks a few of 3,000 lessons promoted
    (100x) scans a few lines of a 1.4 MB LESSONS for secrets, not all of it. A NEW equal to OLD is all of NEW:
    a file judged though unchanged is judged whole. Cost: memcmp over both."""
    if old is None or old == new:
        return 0, len(new)
    head = common_prefix(old, new)
    tail = common_suffix(old, new, min(len(old), len(new)) - head)
    start = new.rfind(b"\n", 0, head) + 1
    kept, kept_in_old = len(new) - tail, len(old) - tail        # new[kept:] == old[kept_in_old:]
    # The kept bytes' first line is unchanged only if it began a line in OLD too: a change that ends by writing a
    # line break (`x<<<<<<< HEAD` -> `x` + newline + `<<<<<<< HEAD`) makes a new line of bytes OLD held mid-line.
    begun = kept_in_old == 0 or old[kept_in_old - 1:kept_in_old] == b"\n"
    newline = new.find(b"\n", max(kept - 1 if begun else kept, start))
    return start, len(new) if newline < 0 else newline + 1


def with_neighbours(data: bytes, start: int, end: int, *, reach: int) -> tuple[int, int]:
    """[start, end) of `data` (whole lines) widened to the `reach` nearest lines holding text before it and after
    it, over the blank lines between: what a pattern that may cross line breaks (`\\s*` between a secret's name,
    its `=` and its value) needs around the lines a change wrote. Cost: what it skips, at C speed."""
    for _ in range(reach):
        before = _text_ends_before(data, start)
        if before > 0:
            start = data.rfind(b"\n", 0, before - 1) + 1
        after = _text_starts_after(data, end)
        if after < len(data):
            newline = data.find(b"\n", after)
            end = len(data) if newline < 0 else newline + 1
    return start, end


def _text_ends_before(data: bytes, at: int) -> int:
    """Where the last non-blank byte before `at` ends (0 when there is none), looking back in growing windows."""
    window = 4096
    while True:
        low = max(0, at - window)
        kept = len(data[low:at].rstrip())
        if kept or low == 0:
            return low + kept
        window *= 4


def _text_starts_after(data: bytes, at: int) -> int:
    """Where the first non-blank byte at or after `at` is (len(data) when there is none)."""
    window = 4096
    while True:
        high = min(len(data), at + window)
        chunk = data[at:high]
        skipped = len(chunk) - len(chunk.lstrip())
        if skipped < len(chunk) or high == len(data):
            return at + skipped
        window *= 4


def span_against(inp: CheckInput, path: str, new: bytes) -> tuple[int, int]:
    """`changed_span` against the old snapshot, using its prefix proof so the old LOG is never copied."""
    if inp.old is None or (inp.old.oid(path) is None and not inp.old.exists(path)):
        return 0, len(new)
    size = inp.old.prefix_length(path, new)
    if size is not None:
        return new.rfind(b"\n", 0, size) + 1, len(new)
    return changed_span(inp.old.read(path), new)


def line_number_at(data: bytes, offset: int) -> int:
    """1-based line number of byte `offset`. Counting is O(offset): call it only to report a problem."""
    return data.count(b"\n", 0, offset) + 1


def duplicate_ids(path: str, items: Iterable[Any], code: Code, next_id: str) -> list[Violation]:
    """Every entry whose ID was already used above it (the first use is the real one)."""
    seen: set[str] = set()
    found: list[Violation] = []
    for item in items:
        if item.id in seen:
            found.append(Violation.of(code, path, item.line, id=item.id, next_id=next_id))
        seen.add(item.id)
    return found


class Authorship(Enum):
    """Who makes a change, as the rules that only bind the agent (GM207, GM923) judge it."""

    HUMAN = ""
    AGENT = "agent.email as configured, in any case"
    AGENT_AS_GIT_RECORDS = "agent.email only once trimmed as git trims it"

    @property
    def is_agent(self) -> bool:
        return self is not Authorship.HUMAN

    @property
    def variant(self) -> str:
        """The message variant of a code that names how the agent was recognised ("normalised" when trimmed)."""
        return "normalised" if self is Authorship.AGENT_AS_GIT_RECORDS else ""


def authorship(inp: CheckInput) -> Authorship:
    """Whether `inp.author_email` is the agent: the address either side's config names (a commit that changes
    agent.email is still judged by the old one); see `authorship_of`."""
    return authorship_of(inp.author_email,
                         [inp.config.agent.email, *([inp.old_config.agent.email] if inp.old_config else [])])


def authorship_of(author: str | None, emails: Iterable[str]) -> Authorship:
    """Whether `author` is the agent whose configured addresses are `emails`: compared without case, or, failing
    that, the same address as git records it (` agent@x` commits as `agent@x`, so writing it so is no way around
    a rule). The one rule of "is this author the agent", for the checks and for finding the agent's commits."""
    if not author:
        return Authorship.HUMAN
    emails = list(emails)
    if author.lower() in {email.lower() for email in emails}:
        return Authorship.AGENT
    if git_email(author) in {git_email(email) for email in emails}:
        return Authorship.AGENT_AS_GIT_RECORDS
    return Authorship.HUMAN


_CRUD = "".join(map(chr, range(33))) + ".,:;<>\"\\'"


def git_email(email: str) -> str:
    """An address as git records it, for comparing: git strips whitespace, control characters and `.,:;<>"\\'`
    from both ends of an identity's email (ident.c, `crud`); case does not matter to a mail domain, and
    gitmem compares local parts without case too."""
    return email.strip(_CRUD).lower()
