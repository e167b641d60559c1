"""Sizes: memory that passes `gitmem check` always fits in the next cycle's context.

The reading budget (`gitmem.cycle.budget`) refuses a context over its hard limit (86.5% of
`cycle.max_context_tokens`, counted offline at 3.5 characters a token). Each part of the context gets a share
of that hard limit, in characters, and these rules hold every part to its share:

  GM509  RULES, read whole every cycle                      25%
  GM104  a NOW block (the cycle reads the top one)           5%
  GM209  DECISIONS Pending, and its number of decisions     15%  and `limits.pending_max`
  GM307  one LOG entry (the budget trims to the last one)   10%
  GM601  one ROADMAP section (the cycle reads one)          10%
  GM602  the `cycle.always_load` files together             10%

Decisions resolved since the last cycle get 10% and are trimmed by the budget, never refused; the last 15%
is for the prompt and the parts' headings. So the sum can never reach the hard limit.

The limits judge new bytes: a new LOG entry or NOW block is judged whole; RULES, Pending, the always_load files
and a changed ROADMAP section only when the change makes them bigger than they were. A commit that changes the
budget itself (`cycle.max_context_tokens`, `limits.pending_max`, `cycle.always_load`) is judged on everything
the next context will load: a smaller budget must still hold the memory it is given.
"""
from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import TYPE_CHECKING

from gitmem import codes
from gitmem.checks.inputs import CheckInput, unreadable
from gitmem.checks.rule_inputs import line_number_at, span_against
from gitmem.checks.violation import Violation
from gitmem.config import CONFIG_NAME, Config, ConfigError, parse_config
from gitmem.gitio import Snapshot, same_blob
from gitmem.memory.decoding import decode_lines, decode_text
from gitmem.memory.sections import Section, split_sections
from gitmem.records import record

if TYPE_CHECKING:
    from gitmem.memory.decisions import Decision

CHARS_PER_TOKEN = 3.5          # the offline estimate: ceil(chars / 3.5) tokens
HARD_SHARE = 0.865             # the hard limit's share of cycle.max_context_tokens
SHARES = {"rules": 0.25, "now_block": 0.05, "pending": 0.15, "resolved": 0.10, "log_entry": 0.10,
          "roadmap_section": 0.10, "always_load": 0.10}       # the rest, 15%, is the prompt's


@record(frozen=True)
class SizeLimits:
    """The most characters each part of a cycle's context may have, and the most Pending decisions."""

    rules: int
    now_block: int
    pending: int
    resolved: int
    log_entry: int
    roadmap_section: int
    always_load: int
    pending_count: int


def hard_chars(config: Config) -> int:
    return int(config.cycle.max_context_tokens * HARD_SHARE * CHARS_PER_TOKEN)


def size_limits(config: Config) -> SizeLimits:
    total = hard_chars(config)
    shares = {name: int(total * share) for name, share in SHARES.items()}
    return SizeLimits(**shares, pending_count=config.limits.pending_max)


def share_percent(name: str) -> str:
    return f"{round(SHARES[name] * 100)}%"


def check(inp: CheckInput, earlier: Collection[Violation] = ()) -> list[Violation]:
    skip = unreadable(earlier)
    limits = size_limits(inp.config)
    whole = _budget_changed(inp)
    found: list[Violation] = []
    for rule in (_rules, _now, _pending, _log, _roadmap, _always_load):
        found += rule(inp, limits, whole, skip)
    return found


def _budget_changed(inp: CheckInput) -> bool:
    """Whether the change sets a different budget than the old side had (so all of memory is judged)."""
    if inp.old is None:
        return False          # everything is new anyway
    old, new = inp.old.read(CONFIG_NAME), inp.new.read(CONFIG_NAME)
    if old == new:
        return False
    try:
        before = parse_config(old, strict=False) if old is not None else Config()   # read as history is
    except ConfigError:
        return True
    return (size_limits(before), before.cycle.always_load) != (size_limits(inp.config), inp.config.cycle.always_load)


def _text(snapshot: Snapshot | None, path: str) -> str | None:
    data = snapshot.read(path) if snapshot is not None else None
    return decode_text(data) if data is not None else None


def _unchanged(inp: CheckInput, path: str, whole: bool, skip: set[str]) -> bool:
    return path in skip or (not whole and same_blob(inp.old, inp.new, path))


def _rules(inp: CheckInput, limits: SizeLimits, whole: bool, skip: set[str]) -> list[Violation]:
    path = inp.config.path("rules")
    new = None if _unchanged(inp, path, whole, skip) else _text(inp.new, path)
    if new is None:
        return []
    size = len(new.rstrip())
    old = _text(inp.old, path)
    if size <= limits.rules or (not whole and old is not None and size <= len(old.rstrip())):
        return []
    longest = max(new.split("\n"), key=len)
    return [Violation.of(codes.RULES_TOO_BIG, path, new.split("\n").index(longest) + 1, count=size,
                         limit=limits.rules, share=share_percent("rules"), longest=len(longest))]


def _now(inp: CheckInput, limits: SizeLimits, whole: bool, skip: set[str]) -> list[Violation]:
    path = inp.config.path("now")
    data = None if _unchanged(inp, path, whole, skip) else inp.new.read(path)
    if data is None:
        return []
    # Only when NOW changed, as in _pending: the hook path pays for nothing else.
    from gitmem.checks.rule_inputs import changed_span
    from gitmem.memory import now

    old = inp.old.read(path) if inp.old is not None and not whole else None
    _, end = changed_span(old, data)
    known: set[str] = set()
    if whole:           # the block the next cycle reads
        blocks = now.parse(decode_text(data), max_blocks=1).blocks
    elif end < len(data):  # blocks added on top (the usual change): only they are new
        blocks = now.parse(decode_text(data[:end])).blocks
    else:
        blocks = now.parse(decode_text(data)).blocks
        known = {block.render() for block in now.parse(decode_text(old)).blocks} if old is not None else set()
    found = []
    for block in blocks:
        rendered = block.render()
        if rendered in known:
            continue          # written before this change: judged when it was written
        if len(rendered) > limits.now_block:
            found.append(Violation.of(codes.NOW_BLOCK_TOO_BIG, path, block.line, count=len(rendered),
                                      limit=limits.now_block, share=share_percent("now_block"),
                                      longest=max((len(line) for line in block.body), default=0)))
    return found


def _pending(inp: CheckInput, limits: SizeLimits, whole: bool, skip: set[str]) -> list[Violation]:
    path = inp.config.path("decisions")
    new = None if _unchanged(inp, path, whole, skip) else _text(inp.new, path)
    if new is None:
        return []
    # Only when DECISIONS changed: the hook path pays for nothing else.
    from gitmem.memory import decisions

    pending = decisions.parse(new).awaiting          # answered in place: no longer waiting, nor in context
    count, size = len(pending), pending_chars(pending)
    old = _text(inp.old, path)
    before = decisions.parse(old).awaiting if old is not None and not whole else None
    old_count = len(before) if before is not None else 0
    old_size = pending_chars(before) if before is not None else 0
    found = []
    if count > limits.pending_count and (before is None or count > old_count):
        found.append(Violation.of(codes.PENDING_OVER_LIMIT, path, pending[limits.pending_count].line, "count",
                                  count=count, limit=limits.pending_count))
    if size > limits.pending and (before is None or size > old_size):
        found.append(Violation.of(codes.PENDING_OVER_LIMIT, path, pending[-1].line, "size", count=size,
                                  limit=limits.pending, share=share_percent("pending")))
    return found


def pending_chars(pending: Sequence[Decision]) -> int:
    """The characters Pending's waiting decisions take in a cycle's context (each rendered, a blank line apart)."""
    return sum(len(item.render()) + 2 for item in pending)


def _log(inp: CheckInput, limits: SizeLimits, whole: bool, skip: set[str]) -> list[Violation]:
    path = inp.config.path("log")
    data = None if _unchanged(inp, path, whole, skip) else inp.new.read(path)
    if data is None:
        return []
    from gitmem.memory import log  # only when LOG changed, as in _pending

    if whole:       # the entry the next cycle reads, found as its tail reader finds it: a fenced `## ` is text
        entries = log.tail_entries(log.BytesSource(data), bool, block=log.LAST_ENTRY_BLOCK).entries[-1:]
    else:
        start, end = span_against(inp, path, data)
        if end - start <= limits.log_entry:
            return []          # bytes >= characters: no entry in it can be over the limit
        entries = log.parse(decode_text(data[start:end]), first_line=line_number_at(data, start),
                            expect_title=start == 0).entries
    return [Violation.of(codes.LOG_ENTRY_TOO_BIG, path, entry.line, count=len(entry.render()),
                         limit=limits.log_entry, share=share_percent("log_entry"))
            for entry in entries if len(entry.render()) > limits.log_entry]


def _roadmap(inp: CheckInput, limits: SizeLimits, whole: bool, skip: set[str]) -> list[Violation]:
    path = inp.config.path("roadmap")
    new = None if _unchanged(inp, path, whole, skip) else _text(inp.new, path)
    if new is None or len(new) <= limits.roadmap_section:
        return []
    old = _text(inp.old, path)
    known = {_section_text(s) for s in split_sections(decode_lines(old), 2)[1]} if old and not whole else set()
    found = []
    for section in split_sections(decode_lines(new), 2)[1]:
        text = _section_text(section)
        if len(text) > limits.roadmap_section and text not in known:
            found.append(Violation.of(codes.ROADMAP_SECTION_TOO_BIG, path, section.line, title=section.title[:60],
                                      count=len(text), limit=limits.roadmap_section,
                                      share=share_percent("roadmap_section")))
    return found


def _section_text(section: Section) -> str:
    return "\n".join([f"## {section.title}", *section.body]).rstrip()


def _always_load(inp: CheckInput, limits: SizeLimits, whole: bool, skip: set[str]) -> list[Violation]:
    from gitmem.checks.owned_paths import trusted_paths

    paths = [p for p in trusted_paths(inp.config) if p in inp.config.cycle.always_load and p not in skip]
    if not paths or (not whole and all(same_blob(inp.old, inp.new, p) for p in paths)):
        return []
    sizes = {p: len((_text(inp.new, p) or "").rstrip()) for p in paths}
    total = sum(sizes.values())
    old_total = sum(len((_text(inp.old, p) or "").rstrip()) for p in paths) if inp.old is not None else 0
    if total <= limits.always_load or (not whole and inp.old is not None and total <= old_total):
        return []
    largest = max(sizes, key=lambda p: sizes[p])
    return [Violation.of(codes.ALWAYS_LOAD_TOO_BIG, largest, 1, count=total, limit=limits.always_load,
                         share=share_percent("always_load"), files=len(paths))]
