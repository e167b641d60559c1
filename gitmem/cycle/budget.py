"""The reading budget: exactly what one cycle reads, in a fixed order, with a token guard.

Parts, each under a heading naming its source file and line range:
  1. RULES, whole (cacheable);  2. the top NOW block;  3. DECISIONS Pending, plus every decision resolved
  since the previous cycle's LOG timestamp, marked newly resolved;  4. the last `cycle.log_entries` LOG
  entries;  5. the current ROADMAP section;  6. the `cycle.always_load` files.
Then `prompts/cycle.md`, filled in by `fill_instructions`.

Cost does not grow with history (see `gitmem.workspace.head_and_tail`): NOW and DECISIONS are read from the head
only, LOG from its tail only. Resolved decisions are newest first (`decisions.move_to_resolved` puts each answer on
top), so the scan stops after a few resolved decisions in a row that are older than the previous cycle.

Tokens: a counter function gives each part's size. The default is the offline estimate ceil(chars / 3.5),
which overestimates English prose slightly (about 4 chars per token) so the guard errs on the safe side;
pass an exact counter (`gitmem.agents.anthropic.api_token_counter`) when an API key is present.
Soft limit, 70% of `cycle.max_context_tokens`: trim, in this order, and warn: (a) fewer LOG entries, down to
one; (b) the ROADMAP section. RULES, NOW, DECISIONS and the always-load files are never trimmed.
Hard limit, 86.5%: BudgetError naming the largest part.
"""
from __future__ import annotations

import math
import re
import time
from collections.abc import Callable, Container
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path, PurePosixPath

from gitmem import codes
from gitmem.agents.base import ContextPart, CycleRequest
from gitmem.agents.tools import memory_tools_text
from gitmem.checks.sizes import CHARS_PER_TOKEN, HARD_SHARE, size_limits
from gitmem.config import Config
from gitmem.confined import files
from gitmem.cycle.baseline import resolved_before
from gitmem.errors import ExitCode, RunFailure
from gitmem.memory import decisions, fences, log, roadmap
from gitmem.memory.decoding import decode_text
from gitmem.memory.now import NowBlock
from gitmem.memory.timestamps import Timestamp
from gitmem.secrets import scrub
from gitmem.workspace import WORKSPACE_ENV, Workspace
from gitmem.workspace.head_and_tail import read_head, second_heading

SOFT_SHARE = 0.70
# What the runner tells the agent about its cycle, in its environment (agent CLIs pass these on to MCP servers).
CYCLE_ENV = ("GITMEM_CYCLE", "GITMEM_ROOT", "GITMEM_TIMESTAMP", WORKSPACE_ENV)
RESOLVED_IDS_SHOWN = 20       # newly resolved decisions past the budget's room are named, up to this many
NEWLY_RESOLVED = "newly resolved — act on these, do not redo them"
OLD_RESOLVED_STOP = 3        # resolved decisions in a row older than the last cycle end the scan
TokenCounter = Callable[[str], int]
_RESOLVED_RE = re.compile(r"## Resolved[ \t]*$", re.M)
_DECISION_RE = re.compile(r"### +(D-[0-9]{4,})")


class BudgetError(RunFailure):
    """The reading budget is over the hard limit; the message names the largest part."""

    exit_code = ExitCode.VIOLATIONS     # the memory itself is too big to load

    def __init__(self, message: str, where: str) -> None:
        super().__init__(message, code=codes.CYCLE_OVER_BUDGET, where=where)


def estimate_tokens(text: str) -> int:
    return math.ceil(len(text) / CHARS_PER_TOKEN)


def build_request(ws: Workspace, *, cycle: int | None = None, now: datetime | None = None,
                  clock: Callable[[], datetime] | None = None, deadline: float | None = None,
                  count_tokens: TokenCounter | None = None, backend: str | None = None) -> CycleRequest:
    """The whole cycle prompt and its limits.

    `now` (or `clock()`, or the real clock in the configured zone) gives the date and time; `clock` is also
    handed to the backend's memory writes. `cycle` defaults to one past the last logged cycle (GITMEM_CYCLE
    wins). `deadline` defaults to now + cycle.timeout on time.monotonic(). `backend` (default agent.backend,
    else anthropic) decides how memory writing is taught: tools, or `gitmem` commands.
    """
    root, config = ws.root, ws.config
    backend = backend or config.agent.backend or "anthropic"
    counter = _memo(count_tokens or estimate_tokens)
    if cycle is None:
        cycle = ws.cycle_for("log")
    moment = (now or (clock() if clock else datetime.now(config.tzinfo()))).astimezone(config.tzinfo())
    stamp = Timestamp.from_datetime(moment)
    parts, entries = reading(ws)
    instructions = scrub(fill_instructions(root, config, cycle=cycle, moment=moment, stamp=stamp, backend=backend))
    warnings: list[str] = []
    parts, total = _fit(config, parts, entries, counter, counter(instructions), warnings)
    env = dict(zip(CYCLE_ENV, (str(cycle), str(root), str(stamp), ws.name), strict=True))
    return CycleRequest(
        cycle=cycle, timestamp=str(stamp), workspace=ws, parts=tuple(parts.values()),
        instructions=instructions,
        deadline=deadline if deadline is not None else time.monotonic() + config.cycle.timeout,
        max_turns=config.cycle.max_turns, max_tokens=config.cycle.max_tokens, env=env,
        warnings=tuple(warnings), instruction_tokens=counter(instructions), total_tokens=total, clock=clock)


def reading(ws: Workspace) -> tuple[dict[str, ContextPart], list[log.LogEntry]]:
    """The parts of the reading budget in order, uncounted, and the LOG entries behind the log part."""
    root, config = ws.root, ws.config
    tail = ws.log_tail(config.cycle.log_entries)
    top = top_now_block(ws)
    entries = list(tail.entries[-config.cycle.log_entries:])
    before = resolved_before(ws)
    sizes = size_limits(config)     # newly resolved decisions fill their share; the rest are named (GM209 note)
    parts: dict[str, ContextPart] = {"rules": _whole(root, config.path("rules"), "rules", cacheable=True),
                                     "now": _now_part(config.path("now"), top),
                                     "decisions": _decisions_part(root, config.path("decisions"), before,
                                                                  sizes.resolved),
                                     "log": _log_part(config.path("log"), entries)}
    road = _roadmap_part(root, config.path("roadmap"))
    if road is not None:
        parts["roadmap"] = road
    for index, rel in enumerate(config.cycle.always_load):
        parts[f"extra{index}"] = _whole(root, rel, "extra")
    return parts, entries


def estimate(ws: Workspace) -> int:
    """The offline estimate of the reading budget's parts, for when the whole prompt cannot be built."""
    return sum(estimate_tokens(_rendered(part)) for part in reading(ws)[0].values())


@dataclass(frozen=True)
class TokenLimits:
    total: int        # cycle.max_context_tokens
    soft: int         # trim above this
    hard: int         # refuse above this


def limits(config: Config) -> TokenLimits:
    total = config.cycle.max_context_tokens
    return TokenLimits(total, int(total * SOFT_SHARE), int(total * HARD_SHARE))


def _fit(config: Config, parts: dict[str, ContextPart], entries: list[log.LogEntry],
         counter: TokenCounter, fixed: int, warnings: list[str]) -> tuple[dict[str, ContextPart], int]:
    """Count every part, trim to the soft limit in the documented order, refuse over the hard limit."""
    bounds = limits(config)
    limit, soft, hard = bounds.total, bounds.soft, bounds.hard

    def counted(part: ContextPart) -> ContextPart:
        # Masked here, before counting: every reader of the context (the agent's prompt, `gitmem context`, the
        # MCP context tool) gets memory without the secret values history may still hold.
        masked = replace(part, text=scrub(part.text))
        return replace(masked, tokens=counter(_rendered(masked)))

    parts = {key: counted(part) for key, part in parts.items()}
    total = fixed + sum(p.tokens for p in parts.values())
    keep = len(entries)
    while total > soft and keep > 1:
        keep -= 1
        parts["log"] = counted(_log_part(config.path("log"), entries[-keep:]))
        total = fixed + sum(p.tokens for p in parts.values())
    if keep < len(entries):
        warnings.append(f"context over the soft limit ({soft} tokens): LOG trimmed to the last {keep} "
                        f"entr{'y' if keep == 1 else 'ies'}")
    if total > soft and "roadmap" in parts:
        source = parts["roadmap"].source
        parts["roadmap"] = counted(ContextPart("roadmap", source, f"(trimmed to fit the budget: search "
                                                                  f"{source.split(':')[0]} for the current section)"))
        total = fixed + sum(p.tokens for p in parts.values())
        warnings.append(f"context over the soft limit ({soft} tokens): ROADMAP section {source} left out")
    room = size_limits(config).log_entry
    if total > hard and entries and len(entries[-1].render()) > room:
        # `gitmem check` keeps every new entry within its share (GM307): only an entry written before that rule
        # can be longer, and it must not keep every later cycle from starting. So it is cut, and says where.
        parts["log"] = counted(_log_part(config.path("log"), entries[-1:], room))
        total = fixed + sum(p.tokens for p in parts.values())
        warnings.append(f"the last LOG entry is over its share of the context ({room} characters): it was cut")
    if total > soft:
        warnings.append(f"context is {total} tokens, over the soft limit of {soft} (70% of {limit})")
    if total > hard:
        largest = max(parts.values(), key=lambda p: p.tokens)
        raise BudgetError(f"the cycle context needs {total} tokens, over the hard limit of {hard} (86.5% of "
                          f"cycle.max_context_tokens={limit}); the largest part is {largest.source} with "
                          f"{largest.tokens} tokens: shorten it, or raise cycle.max_context_tokens",
                          largest.source.split(":")[0])
    return parts, total


def _rendered(part: ContextPart) -> str:
    return f"## {part.source}\n\n{part.text.rstrip()}"


def _memo(counter: TokenCounter) -> TokenCounter:
    seen: dict[str, int] = {}

    def count(text: str) -> int:
        if text not in seen:
            seen[text] = counter(text)
        return seen[text]
    return count


def _whole(root: Path, rel: str, name: str, *, cacheable: bool = False) -> ContextPart:
    if rel.startswith("/") or ".." in Path(rel).parts:
        return ContextPart(name, rel, f"(not loaded: {rel} is outside the repository)")
    text = files.read_text(root, rel).rstrip()
    if not text:
        return ContextPart(name, rel, f"({rel} is missing or empty)", cacheable=cacheable)
    return ContextPart(name, f"{rel}:1-{text.count(chr(10)) + 1}", text, cacheable=cacheable)


def _roadmap_part(root: Path, rel: str) -> ContextPart | None:
    """The current ROADMAP section (`roadmap.current_section`), parsed from the first `(current)` heading or
    open `- [ ]` item on: a long-lived roadmap grows a finished section a month, and those are skipped.
    Fenced code holds neither headings nor items (`gitmem.memory.fences`)."""
    text = files.read_text(root, rel)
    fenced = fences.Fenced(text)
    # Line starts of the first `## … (current)` heading and of the first open item (str.find: a
    # multi-line regex would cost more than the parse it saves).
    marks = [mark for mark in (_line_with(text, "(current)", lambda head: head.startswith("## "), fenced),
                               _line_with(text, "- [ ]", lambda head: not head.strip(), fenced)) if mark is not None]
    heads = [at for at in fences.headings(text, "## ", 0, min(marks) + 1)] if marks else []
    heading = heads[-1] if heads else 0          # a mark outside any section: parse the whole file
    section = roadmap.current_section(text[heading:])
    if section is None:
        return None
    offset = text.count("\n", 0, heading)
    body = "\n".join([f"## {section.title}", *section.body]).rstrip()
    first = section.line + offset
    return ContextPart("roadmap", f"{rel}:{first}-{first + body.count(chr(10))}", body)


def roadmap_title(root: Path, rel: str) -> str | None:
    """The title of the current ROADMAP section, for a session's compact context."""
    part = _roadmap_part(root, rel)
    return part.text.split("\n", 1)[0].removeprefix("## ") if part is not None else None


def _line_with(text: str, needle: str, accept: Callable[[str], bool], fenced: fences.Fenced) -> int | None:
    """Start of the first line outside fenced code holding `needle` where `accept(the line's text before it)`."""
    at = text.find(needle)
    while at >= 0:
        start = text.rfind("\n", 0, at) + 1
        if accept(text[start:at]) and not fenced.inside(start):
            return start
        at = text.find(needle, at + 1)
    return None


def top_now_block(ws: Workspace) -> NowBlock | None:
    """The top NOW block, read from the file's head only; a session's context shows the same one as a cycle's."""
    from gitmem.memory import now  # here: in build_request `now` is the moment, not the module

    return now.parse(read_head(ws.root, ws.config.path("now"), second_heading), max_blocks=1).top


def _now_part(rel: str, top: NowBlock | None) -> ContextPart:
    if top is None:
        return ContextPart("now", rel, "(no NOW block yet: this is the first cycle)")
    return ContextPart("now", f"{rel}:{top.line}-{top.line + len(top.render().splitlines()) - 1}", top.render())


def _log_part(rel: str, entries: list[log.LogEntry], room: int | None = None) -> ContextPart:
    """The entries; with `room`, each cut at that many characters (see `_fit`)."""
    if not entries:
        return ContextPart("log", rel, "(no LOG entries yet)")
    first, last = entries[0].line, entries[-1].line + len(entries[-1].render().splitlines()) - 1
    text = "\n\n".join(entry.render() if room is None else _cut(entry.render(), room, f"{rel}:{entry.line}")
                         for entry in entries)
    return ContextPart("log", f"{rel}:{first}-{last} (last {len(entries)} of the LOG)", text)


def _cut(text: str, room: int, where: str) -> str:
    if len(text) <= room:
        return text
    note = f"\n(cut here: {len(text) - room} more characters; read {where} for the rest)"
    return text[:max(0, room - len(note))] + note


def shown_decisions(root: Path, rel: str, before: Container[str] | None) -> tuple[decisions.DecisionsDoc,
                                                                                  list[decisions.Decision]]:
    """DECISIONS read from its head as far as a cycle needs, and the decisions newly resolved since `before`
    (gitmem.cycle.baseline; None: every resolved one is new). Interactive sessions read the same."""
    doc = decisions.parse(read_head(root, rel, lambda text: _resolved_cut(text, before)))
    return doc, [d for d in doc.settled if before is None or d.id not in before]


def _decisions_part(root: Path, rel: str, before: Container[str] | None, room: int) -> ContextPart:
    """Pending, and the decisions resolved since the previous cycle started (gitmem.cycle.baseline).

    Pending is whole (`gitmem check` bounds it: GM209). Newly resolved decisions fill `room` characters, newest
    first; the rest are named by ID (up to RESOLVED_IDS_SHOWN) for the agent to read in the file.
    """
    doc, fresh = shown_decisions(root, rel, before)
    since = " since the previous cycle started" if before is not None else ""
    shown_fresh, used = [], 0
    for item in fresh:
        used += len(item.render()) + 2
        if used > room:
            break
        shown_fresh.append(item)
    rest = [d.id for d in fresh[len(shown_fresh):]]
    more = ([f"(and {len(rest)} more answered: {', '.join(rest[:RESOLVED_IDS_SHOWN])}"
             f"{', …' if len(rest) > RESOLVED_IDS_SHOWN else ''}; read them in {rel})"] if rest else [])
    body = ["## Pending", *([d.render() for d in doc.awaiting] or ["(none)"]),
            f"## Resolved{since}: {NEWLY_RESOLVED}", *([d.render() for d in shown_fresh] or more or ["(none)"]),
            *(more if shown_fresh else [])]
    shown = [*doc.awaiting, *shown_fresh]
    span = (f":{min(d.line for d in shown)}-{max(d.end for d in shown)}" if shown else "")
    return ContextPart("decisions", f"{rel}{span}", "\n\n".join(body))


def _resolved_cut(text: str, before: Container[str] | None) -> int | None:
    """Where DECISIONS can be cut: before the first of OLD_RESOLVED_STOP resolved decisions in a row that were
    already resolved at the baseline (answers go on top of Resolved). None: read on. Headings inside fenced
    code are text (`gitmem.memory.fences`): a fenced example of `## Resolved` cuts nothing."""
    if before is None:
        return None
    resolved = next((at for at in fences.headings(text, "## ") if _RESOLVED_RE.match(text, at)), None)
    if resolved is None:
        return None
    heads = [(at, match.group(1)) for at in fences.headings(text, "### ", text.find("\n", resolved) + 1 or len(text))
             if (match := _DECISION_RE.match(text, at))]
    run = 0
    for index, ((_head, decision_id), _) in enumerate(zip(heads, heads[1:], strict=False)):   # only complete decisions
        run = run + 1 if decision_id in before else 0
        if run == OLD_RESOLVED_STOP:
            return heads[index - run + 1][0]
    return None


def prompt_template(root: Path, config: Config) -> str:
    """prompts/cycle.md from the repo (the workspace's memory_dir first), else the packaged template."""
    from gitmem.packaged import template_dir

    for rel in dict.fromkeys([str(PurePosixPath(config.memory_dir) / "prompts" / "cycle.md"), "prompts/cycle.md"]):
        found = files.read_bytes(root, rel)     # the repository's own prompt: a regular file inside the tree only
        if found is not None:
            return decode_text(found)
    packaged = template_dir() / "prompts" / "cycle.md"
    if packaged.is_file():
        return decode_text(packaged.read_bytes())
    raise FileNotFoundError("prompts/cycle.md is missing from the repository and from the gitmem template")


def fill_instructions(root: Path, config: Config, *, cycle: int, moment: datetime, stamp: Timestamp,
                      backend: str) -> str:
    """Replace `{name}` placeholders; unknown braces (code, JSON) in a customised prompt are left alone."""
    tools = backend != "command"
    values = {
        "now": f"{stamp}, {moment:%A}", "date": moment.date().isoformat(), "timezone": config.timezone,
        "cycle": str(cycle), "grep_over_lines": str(config.limits.grep_over_lines),
        "priorities": "\n".join(f"{n}. {p}" for n, p in enumerate(config.cycle.priorities, 1)),
        "write_how": "the memory tools" if tools else "`gitmem` commands, run in the repository root",
        "memory_tools": memory_tools_text(backend),
        "log_entries": str(config.cycle.log_entries),
    }
    return re.sub(r"\{(\w+)\}", lambda m: values.get(m.group(1), m.group(0)), prompt_template(root, config))
