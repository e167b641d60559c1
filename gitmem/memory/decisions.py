"""DECISIONS.md: the only channel between agent and human. `## Pending`, then `## Resolved`.

Asking and answering never touch the same lines, so that an answer's pull request merges over the agent's new
questions on GitHub (merge commit or squash; no merge driver runs there). From rules 4 the agent asks at the
top of Pending (between the section's heading and its first decision) and the human answers in place, adding
`- Answer:` and `- Answered:` at the end of the decision's block: the heading of the top decision and the
lines of each block stay unchanged between the two edits, and git's 3-way merge conflicts only on changes that
overlap or touch. A decision answered in place is answered for every reader (`Decision.is_answered`), exactly
as one moved under Resolved is: moving it there later, byte for byte, changes nothing.
"""
from __future__ import annotations

import math
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from functools import cached_property
from itertools import compress, count, repeat

from gitmem import codes
from gitmem.memory.clock_skew import beyond
from gitmem.memory.decoding import decode_lines
from gitmem.memory.digits import parses_with_ascii_digits
from gitmem.memory.fields import Field, IdEntry, field_line_starts, first_field_value, parse_fields, render_field
from gitmem.memory.lines import strip_trailing_blank
from gitmem.memory.once import SameEntries, parsed_once
from gitmem.memory.problems import Problem
from gitmem.memory.sections import SEP, headed, split_id_heading, split_sections, title_problem
from gitmem.memory.timestamps import Timestamp, parse_timestamp
from gitmem.records import built_whole

TITLE = "# DECISIONS"
PENDING, RESOLVED = "Pending", "Resolved"
_ID_RE = re.compile(r"^D-([0-9]{4,18})$")
_ASKED_RE = re.compile(r"^(.*?)(?: \(cycle ([0-9]{1,18})\))?$")
# The timestamp is matched by shape, not `.*?`: a lazy prefix backtracks cubically on a long line of " by ".
_ANSWERED_RE = re.compile(r"^([0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2} \S+) by (.+?) <([^<>\s]+)>$")


@dataclass(frozen=True)
class Decision(IdEntry):
    id: str
    title: str
    section: str                      # Pending | Resolved
    body: tuple[str, ...] = ()
    line: int = 0
    end: int = 0

    @property
    def number(self) -> int:
        return int(self.id[2:])

    # Read from the body when first asked, once: the standing check reads a whole DECISIONS for its headings
    # only, the context reads the Pending decisions, and most of 4,000 decisions at 100x are never asked.
    @cached_property
    def fields(self) -> tuple[Field, ...]:
        return parse_fields(self.body, self.line + 1)

    # Read once per decision: the close asks every decision of DECISIONS (4,000 at 100x) whether it waited on
    # each day it catches up, and the fields of a frozen entry never change.
    @cached_property
    def asked(self) -> Timestamp | None:
        return _asked(self.get("Asked") or "")

    @property
    def asked_cycle(self) -> int | None:
        match = _ASKED_RE.match(self.get("Asked") or "")
        return int(match.group(2)) if match and match.group(2) else None

    @cached_property
    def answered(self) -> tuple[Timestamp, str, str] | None:
        """(when, name, email) from `- Answered: <ts> by Name <email>`. Read from that line alone: the close asks
        every decision when it was answered, and most are asked nothing else."""
        return _answered(first_field_value(self.body, "Answered") or "")

    def with_other_digits(self, key: str) -> bool:
        """Whether the Asked or Answered line, unreadable as written, reads with its digits folded to 0-9, as
        rules 2 read it (`2026-١٢-01 09:00 UTC`)."""
        return parses_with_ascii_digits(self.get(key) or "", _asked if key == "Asked" else _answered)

    def heading(self) -> str:
        return f"### {self.id}{SEP}{self.title}"

    @property
    def is_answered(self) -> bool:
        """Whether a human's answer stands in it: it is under Resolved, or (rules 4) it is under Pending with an
        `Answer` line and an `Answered` line that reads. Every reader asks this, never the section."""
        return self.section == RESOLVED or (self.section == PENDING and self.answer_in_place)

    @property
    def answer_in_place(self) -> bool:
        """A complete answer written inside the block (wherever the block is)."""
        return bool((self.get("Answer") or "").strip()) and self.answered is not None

    @property
    def answer_incomplete(self) -> bool:
        """A Pending decision with half an answer: `Answer` or `Answered` written, but not both readable.
        `check` refuses it (GM212) and `pending` marks it, so a typed answer is never silently ignored."""
        typed = self.get("Answer") is not None or self.get("Answered") is not None
        return self.section == PENDING and typed and not self.answer_in_place


def _asked(value: str) -> Timestamp | None:
    match = _ASKED_RE.match(value)
    return parse_timestamp(match.group(1)) if value and match else None


# What an `Answered:` time means, for every reader. The answer is in the file, so it was given no later than the
# moment the file is read (or committed): a time after that is a wrong clock or a wrong zone label, never an
# answer still to come. Readers take the earlier of the two (`answered_at`); `check` refuses a new answer dated
# more than CLOCK_SKEW after the clock, `verify` after its commit's committer date (GM211, rules 3). The
# allowance is the one every rule about written times uses (gitmem.memory.clock_skew).


def answered_at(item: Decision, now: datetime) -> datetime | None:
    """When `item` counts as answered, read at `now`: its Answered time, but never later than `now`. None while
    it is Pending, or when its Answered line does not read."""
    answered = item.answered if item.is_answered else None
    return min(answered[0].moment, now) if answered is not None else None


# The lines that may start an Answered field (`first_field_value`), and the day that opens its value.
_ANSWERED_LINE = field_line_starts("Answered")
_ISO_DAY = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")
# Two days: the time read from an Answered line is its day's, in a zone at most 23:59 from UTC (`parse_timestamp`),
# so an answer dated two days before a moment's UTC day counts from before that moment.
_SETTLED_MARGIN = timedelta(days=2)


def not_settled_before(items: Iterable[Decision], moment: datetime) -> list[Decision]:
    """`items` but those answered with an answer that counts from before `moment`, as far as the day their
    Answered line opens with tells (`_settled_before`); the rest are read whole by the caller. Found at C speed
    per decision: a close asks this of 4,000 decisions at 100x, nearly all answered long before."""
    cutoff = (moment.astimezone(UTC) - _SETTLED_MARGIN).date().isoformat()
    return [item for item in items if not _settled_before(item, cutoff)]


def _settled_before(item: Decision, cutoff: str) -> bool:
    """Whether `item` is under Resolved (answered, whatever its lines say) and the day its Answered line opens
    with, in ASCII digits, is `cutoff` (`YYYY-MM-DD`, two days before a moment's UTC day) or earlier: then
    `answered_at` is either None (the line does not read) or before that moment, and the decision waited at no
    moment from then on. False when the day alone cannot tell (under Pending, no such line, other digits)."""
    if item.section != RESOLVED:
        return False
    body = item.body
    at = next(compress(count(), map(str.startswith, body, repeat(_ANSWERED_LINE))), None)
    if at is None:
        return False
    rest = body[at][len(_ANSWERED_LINE[0]):]
    if rest[:1] not in ("", " "):       # not the field's line (`_FIELD_RE`): a later line may be it
        return False
    day = rest.strip()[:10]
    return day <= cutoff and _ISO_DAY.fullmatch(day) is not None


def answered_ahead(item: Decision, moment: datetime) -> bool:
    """Whether `item`'s Answered time is more than CLOCK_SKEW after `moment` (when it was written down)."""
    answered = item.answered
    return answered is not None and beyond(answered[0].moment, moment) is not None


def _answered(value: str) -> tuple[Timestamp, str, str] | None:
    match = _ANSWERED_RE.match(value)
    if not match:
        return None
    when = parse_timestamp(match.group(1))
    return (when, match.group(2), match.group(3)) if when else None


@dataclass(frozen=True)
class DecisionsDoc:
    preamble: tuple[str, ...]
    pending: tuple[Decision, ...]
    resolved: tuple[Decision, ...]
    section_lines: dict[str, int]
    problems: tuple[Problem, ...] = ()
    section_preambles: dict[str, tuple[str, ...]] = field(default_factory=dict)

    @property
    def all(self) -> tuple[Decision, ...]:
        return self.pending + self.resolved

    @property
    def awaiting(self) -> tuple[Decision, ...]:
        """The decisions waiting on the human: under Pending and not answered in place."""
        return tuple(d for d in self.pending if not d.is_answered)

    @property
    def settled(self) -> tuple[Decision, ...]:
        """The answered decisions, newest answer first: those answered in place under Pending, then Resolved
        (newest first already)."""
        in_place = sorted((d for d in self.pending if d.is_answered),
                          key=lambda d: d.answered[0].moment if d.answered else datetime.min, reverse=True)
        return (*in_place, *self.resolved)

    def find(self, decision_id: str) -> Decision | None:
        return next((d for d in self.all if d.id == decision_id), None)

    def next_id(self) -> str:
        return format_id(max((d.number for d in self.all), default=0) + 1)


def format_id(number: int) -> str:
    return f"D-{number:04d}"


def parse_heading(title: str) -> tuple[str, str] | None:
    return split_id_heading(title, _ID_RE)


_PARSED = SameEntries[Decision]()


@parsed_once
def parse(text: str) -> DecisionsDoc:
    lines = decode_lines(text)
    preamble, sections = split_sections(lines, 2)
    problems: list[Problem] = []
    problems += title_problem(preamble, TITLE)
    names = [s.title for s in sections]
    if names != [PENDING, RESOLVED]:
        problems.append(Problem.of(codes.DECISIONS_SECTIONS, sections[0].line if sections else 1,
                                   pending=PENDING, resolved=RESOLVED, found=", ".join(names) or "none"))
    found: dict[str, list[Decision]] = {PENDING: [], RESOLVED: []}
    section_lines: dict[str, int] = {}
    section_preambles: dict[str, tuple[str, ...]] = {}
    for section in sections:
        if section.title not in found or section.title in section_lines:
            continue
        section_lines[section.title] = section.line
        inner_preamble, items = split_sections(section.body, 3, section.body_start)
        section_preambles[section.title] = tuple(inner_preamble)
        for item, parsed in headed(items, parse_heading, problems, code=codes.DECISION_HEADING_MALFORMED,
                                   marker="###", what="decision"):
            found[section.title].append(built_whole(Decision, {
                "id": parsed[0], "title": parsed[1], "section": section.title, "body": item.body, "line": item.line,
                "end": item.end}))
    every = _PARSED.shared([*found[PENDING], *found[RESOLVED]])
    pending = len(found[PENDING])
    return DecisionsDoc(tuple(preamble), every[:pending], every[pending:], section_lines, tuple(problems),
                        section_preambles)


def render(doc: DecisionsDoc) -> str:
    parts = ["\n".join(strip_trailing_blank(doc.preamble)) or TITLE]
    for name, items in ((PENDING, doc.pending), (RESOLVED, doc.resolved)):
        head = "\n".join(strip_trailing_blank([f"## {name}", *doc.section_preambles.get(name, ())]))
        parts.append(head)
        parts.extend(item.render() for item in items)
    return "\n\n".join(parts) + "\n"


def make_decision(decision_id: str, title: str, *, asked: Timestamp, cycle: int | None, context: str | None,
                  options: str | None, recommendation: str) -> Decision:
    asked_text = f"{asked} (cycle {cycle})" if cycle is not None else str(asked)
    body: list[str] = [*render_field("Asked", asked_text)]
    for key, value in (("Context", context), ("Options", options), ("Recommendation", recommendation)):
        if value is not None:
            body += render_field(key, value)
    # Its fields' lines count from 1 until it is written.
    return Decision(decision_id, title, PENDING, tuple(body))


def with_decision(doc: DecisionsDoc, decision: Decision) -> DecisionsDoc:
    """`doc` with `decision` asked: on top of Pending (rules 4), never next to the end of a block a human
    may be answering at the same time (see the module's docstring)."""
    return DecisionsDoc(doc.preamble, (decision, *doc.pending), doc.resolved, doc.section_lines,
                        doc.problems, doc.section_preambles)


def answer_in_place(doc: DecisionsDoc, decision_id: str, *, answer: str, answered: Timestamp, name: str,
                    email: str) -> tuple[DecisionsDoc, Decision]:
    """`doc` with the Pending decision answered where it stands: `Answer` and `Answered` added at the end of
    its block (rules 4), and the answered decision. Nothing else moves, so the change merges over new asks."""
    target = next((d for d in doc.pending if d.id == decision_id), None)
    if target is None or target.is_answered:
        where = "already answered" if doc.find(decision_id) is not None else "not found"
        raise KeyError(f"decision {decision_id} is {where}")
    if target.answer_incomplete:
        raise KeyError(f"decision {decision_id} holds half an answer already (an `Answer` or `Answered` line): "
                       "finish or remove it by hand")
    body = [*strip_trailing_blank(target.body), *render_field("Answer", answer),
            *render_field("Answered", f"{answered} by {name} <{email}>")]
    done = Decision(target.id, target.title, PENDING, tuple(body))
    pending = tuple(done if d.id == decision_id else d for d in doc.pending)
    return DecisionsDoc(doc.preamble, pending, doc.resolved, doc.section_lines, doc.problems,
                        doc.section_preambles), done


def move_to_resolved(doc: DecisionsDoc, decision_id: str, *, answer: str, answered: Timestamp, name: str,
            email: str) -> DecisionsDoc:
    """Move a Pending decision to the top of Resolved with its Answer and Answered lines."""
    target = next((d for d in doc.pending if d.id == decision_id), None)
    if target is None:
        where = "already resolved" if any(d.id == decision_id for d in doc.resolved) else "not found"
        raise KeyError(f"decision {decision_id} is {where}")
    body = [*strip_trailing_blank(target.body), *render_field("Answer", answer),
            *render_field("Answered", f"{answered} by {name} <{email}>")]
    moved = Decision(target.id, target.title, RESOLVED, tuple(body))
    pending = tuple(d for d in doc.pending if d.id != decision_id)
    return DecisionsDoc(doc.preamble, pending, (moved, *doc.resolved), doc.section_lines, doc.problems,
                        doc.section_preambles)


@dataclass(frozen=True)
class Waiting:
    """A Pending decision and how long it has waited, up to a given moment."""

    id: str
    title: str
    recommendation: str
    asked: Timestamp | None
    line: int
    age_days: float | None          # days waited, with fractions; None when the decision has no Asked line
    answer_incomplete: bool = False  # half an answer typed in place (GM212): the human is not done, or erred

    @property
    def days(self) -> int:
        """Whole days waited (0 when unknown)."""
        return max(0, math.floor(self.age_days)) if self.age_days is not None else 0

    @property
    def age(self) -> str:
        """How long it has waited, as every view shows it: `5h` under a day, else `3d`."""
        return age_text(self.age_days)

    def describe(self) -> str:
        return f"{self.id} · {self.title} ({self.age})"

    def is_stale(self, stale_days: int) -> bool:
        """Whether it has waited too long: `waited_too_long`."""
        return waited_too_long(self.age_days, stale_days)


def waited_too_long(age_days: float | None, stale_days: int) -> bool:
    """Whether a decision that has waited `age_days` has waited more than `stale_days` whole days
    (`close.stale_decision_days`): the one rule `gitmem status`, `pending`, every close and the report flag it by."""
    return age_days is not None and math.floor(age_days) > stale_days


def age_text(days: float | None) -> str:
    if days is None:
        return "age unknown"
    if days < 1:
        return f"{max(int(days * 24), 0)}h"
    return f"{int(days)}d"


def waiting(doc: DecisionsDoc, moment: datetime, *, as_of: bool = False,
            now: datetime | None = None) -> tuple[Waiting, ...]:
    """The Pending decisions, oldest first (undated ones last), with their age at `moment`.

    With `as_of`, the decisions that were waiting at `moment`, from their timestamps: asked by then, and not
    answered by then (a decision answered later was still waiting). The close reports a past day this way.
    `now` is when the file is read (default `moment`): an answer is never later than that (`answered_at`).
    """
    found = []
    candidates = list(doc.all) if as_of else list(doc.awaiting)
    for item in candidates:
        if as_of and not _waiting_at(item, moment, now or moment):
            continue
        asked = item.asked
        age = (moment - asked.moment).total_seconds() / 86400 if asked is not None else None
        found.append(Waiting(item.id, item.title, (item.get("Recommendation") or "").strip(), asked, item.line, age,
                             item.answer_incomplete))
    return tuple(sorted(found, key=lambda w: (w.asked is None, w.asked.moment if w.asked else moment, w.id)))


def _waiting_at(item: Decision, moment: datetime, now: datetime) -> bool:
    asked = item.asked
    if asked is None or asked.moment > moment:
        return asked is None and not item.is_answered
    done = answered_at(item, now)
    return not item.is_answered or (done is not None and done > moment)
