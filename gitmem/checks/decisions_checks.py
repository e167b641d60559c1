"""GM2xx: DECISIONS is Pending then Resolved; resolved decisions are final and only humans resolve them."""
from __future__ import annotations

from collections.abc import Collection
from dataclasses import replace

from gitmem import codes
from gitmem.checks import written_times
from gitmem.checks.inputs import CheckInput, unreadable
from gitmem.checks.rule_inputs import authorship, duplicate_ids, texts
from gitmem.checks.violation import Violation, from_problem
from gitmem.gitio import Snapshot
from gitmem.memory import decisions
from gitmem.memory.clock_skew import beyond, spoken
from gitmem.memory.decisions import DecisionsDoc
from gitmem.memory.decoding import decode_text
from gitmem.memory.timestamps import Timestamp


def check(inp: CheckInput, earlier: Collection[Violation] = ()) -> list[Violation]:
    skip = unreadable(earlier)
    loaded = texts(inp, "decisions", skip)
    if loaded is None:
        return []
    path, old_text, new_text = loaded
    doc = decisions.parse(new_text)
    found = [from_problem(path, p) for p in doc.problems]
    found += _shape(path, doc)
    # A new DECISIONS (unborn HEAD, or the file added now) is compared with an empty one, so that
    # GM207 still catches the agent creating it with decisions already resolved.
    old = decisions.parse(old_text) if old_text is not None else _EMPTY
    # A merge brings in answers its other parents already hold; those are not the merge's own.
    by = authorship(inp)
    author = inp.config.agent.email if by.is_agent else inp.author_email
    brought = _resolved_elsewhere(inp.others, path)
    found += against_old(path, old, doc, agent_email=inp.config.agent.email, author_email=author, brought=brought,
                         variant=by.variant)
    found += _unsigned_answers(inp, path, old, doc, brought)
    found += _answered_ahead(inp, path, old, doc, brought)
    found += _answered_before_asked(path, old, doc, brought)
    found += _asked_ahead(inp, path, old, doc)
    found += _titles_too_long(inp, path, old, doc)
    return found


def _titles_too_long(inp: CheckInput, path: str, old: DecisionsDoc, new: DecisionsDoc) -> list[Violation]:
    """GM214: a decision new in this change (not in the old file, nor brought by a merge from another parent)
    whose title is over `codes.DECISION_TITLE_MAX` characters. Decisions already there are not judged again."""
    limit = codes.DECISION_TITLE_MAX
    known = {d.id for d in old.all}
    long = [d for d in new.all if d.id not in known and len(d.title) > limit]
    if long and inp.others:
        elsewhere = {d.id for other in inp.others for d in decisions.parse(decode_text(other.read(path) or b"")).all}
        long = [d for d in long if d.id not in elsewhere]
    return [Violation.of(codes.DECISION_TITLE_TOO_LONG, path, d.line, id=d.id, count=len(d.title), limit=limit)
            for d in long]


def _asked_ahead(inp: CheckInput, path: str, old: DecisionsDoc, new: DecisionsDoc) -> list[Violation]:
    """GM730: a decision new in this change asked at a time after the clock that judges it. A decision a merge
    brings from another parent was judged by the commit that asked it."""
    if not written_times.judges(inp):
        return []
    known = {d.id for d in old.all}
    elsewhere = {(d.id, d.content()) for other in inp.others
                 for d in decisions.parse(decode_text(other.read(path) or b"")).all}
    found = []
    for item in new.all:
        if item.id in known or item.asked is None or (item.id, item.content()) in elsewhere:
            continue
        ahead = written_times.ahead_violation(inp, path, item.line_of("Asked"), f"{item.id}'s Asked time",
                                              when=item.asked)
        if ahead is not None:
            found.append(ahead)
    return found


# The rules generation from which an answer written in place under Pending is an answer (and held as one).
IN_PLACE_SINCE = 4


def _new_answers(old: DecisionsDoc, new: DecisionsDoc, brought: dict[str, str]) -> list[decisions.Decision]:
    """The decisions this change answers: answered now (under Resolved or in place), not before, and not brought
    in by a merge's other side."""
    before = {d.id for d in old.settled}
    return [d for d in new.settled if d.id not in before and brought.get(d.id) != d.content()]


def _of_answer(item: decisions.Decision, violation: Violation) -> Violation:
    """`violation`, about the answer in `item`, of the generation that reads that answer: an answer in place is
    one from rules 4 on (before, it was text in a Pending decision)."""
    if item.section == decisions.RESOLVED:
        return violation
    return replace(violation, since=max(violation.since, IN_PLACE_SINCE))


def _answered_ahead(inp: CheckInput, path: str, old: DecisionsDoc, new: DecisionsDoc,
                    brought: dict[str, str]) -> list[Violation]:
    """GM211: an answer new in this change dated after the moment it is written down (`decisions.answered_at`
    says what such a time means to the readers; this keeps it from being written)."""
    if inp.moment is None:
        return []
    moment = inp.moment
    found = []
    for item in _new_answers(old, new, brought):
        answered = item.answered
        if answered is not None and decisions.answered_ahead(item, moment):
            ahead = spoken(answered[0].moment - moment)
            found.append(_of_answer(item, Violation.of(
                codes.DECISION_ANSWERED_AHEAD, path, item.line_of("Answered"), "commit" if inp.moment_is_commit
                else "", id=item.id, answered=answered[0], ahead=ahead, moment=Timestamp.from_datetime(moment))))
    return found


def _answered_before_asked(path: str, old: DecisionsDoc, new: DecisionsDoc,
                           brought: dict[str, str]) -> list[Violation]:
    """GM213 (a warning): an answer new in this change dated more than CLOCK_SKEW before its ask. Two clocks
    wrote the two times, the agent's and the human's, and nothing here tells which one was off: as with LOG's
    order (GM310), the writer that comes second cannot correct the first one's clock, so the answer stands."""
    found = []
    for item in _new_answers(old, new, brought):
        answered, asked = item.answered, item.asked
        if answered is None or asked is None:
            continue
        gap = beyond(asked.moment, answered[0].moment)
        if gap is not None:
            found.append(_of_answer(item, Violation.of(
                codes.DECISION_ANSWERED_BEFORE_ASKED, path, item.line_of("Answered"), id=item.id,
                answered=answered[0], behind=spoken(gap), asked=asked)))
    return found


def _unsigned_answers(inp: CheckInput, path: str, old: DecisionsDoc, new: DecisionsDoc,
                      brought: dict[str, str]) -> list[Violation]:
    """GM210: with trust.signed_answers (on either side: a commit cannot switch it off and answer), each answer
    new in this commit needs the commit signed by a key the old side trusts (`CheckInput.unsigned`)."""
    required = inp.config.trust.signed_answers or (inp.old_config is not None and inp.old_config.trust.signed_answers)
    if not required or inp.unsigned is None:
        return []
    answered = _new_answers(old, new, brought)
    why = inp.unsigned() if answered else ""
    if not why:
        return []
    return [_of_answer(d, Violation.of(codes.DECISION_ANSWER_UNSIGNED, path, d.line, id=d.id, why=why))
            for d in answered]


def _resolved_elsewhere(others: tuple[Snapshot, ...], path: str) -> dict[str, str]:
    """Decision id -> content of the decisions answered in a merge's other parents."""
    found: dict[str, str] = {}
    for other in others:
        data = other.read(path)
        if data is not None:
            found.update({d.id: d.content() for d in decisions.parse(decode_text(data)).settled})
    return found


_EMPTY = decisions.parse(f"{decisions.TITLE}\n\n## {decisions.PENDING}\n\n## {decisions.RESOLVED}\n")


def _shape(path: str, doc: DecisionsDoc) -> list[Violation]:
    found: list[Violation] = []
    found += duplicate_ids(path, doc.all, codes.DECISION_DUPLICATE_ID, doc.next_id())
    for item in doc.pending:
        found += _incomplete(path, item, codes.DECISION_PENDING_INCOMPLETE, ("Asked", "Recommendation"),
                             dated="Asked", invalid="a valid Asked timestamp", unreadable=item.asked is None)
    for item in doc.resolved:
        found += _incomplete(path, item, codes.DECISION_RESOLVED_INCOMPLETE, ("Answer", "Answered"),
                             dated="Answered", invalid="a valid Answered line", unreadable=item.answered is None)
    for item in doc.pending:
        if item.answer_incomplete:
            found += _incomplete(path, item, codes.DECISION_ANSWER_INCOMPLETE, ("Answer", "Answered"),
                                 dated="Answered", invalid="a valid Answered line", unreadable=item.answered is None)
    return found


def _incomplete(path: str, item: decisions.Decision, code: codes.Code, keys: tuple[str, str], *, dated: str,
                invalid: str, unreadable: bool) -> list[Violation]:
    """The fields `keys` an item lacks, and its `dated` line when it does not read: with digits other than 0-9
    only, the code's `digits` variant (rules 3; such a line read as a time under rules 2)."""
    found: list[Violation] = []
    missing = [k for k in keys if not (item.get(k) or "").strip()]
    line = item.line                    # a missing field has no line: the decision's heading
    if item.get(dated) and unreadable:
        line = item.line_of(dated)      # the line to fix
        if item.with_other_digits(dated):
            found.append(Violation.of(code, path, line, "digits", id=item.id, field=dated))
        else:
            missing.append(invalid)
    if missing:
        found.append(Violation.of(code, path, line, id=item.id, missing=" and ".join(missing)))
    return found


def against_old(path: str, old: DecisionsDoc, new: DecisionsDoc, *, agent_email: str,
                author_email: str | None, brought: dict[str, str] | None = None,
                variant: str = "") -> list[Violation]:
    found: list[Violation] = []
    new_by_id = {d.id: d for d in new.all}
    anchor = new.section_lines.get(decisions.RESOLVED, 1)
    for before in old.all:
        after = new_by_id.get(before.id)
        if after is None:
            if before.section == decisions.RESOLVED:
                found.append(Violation.of(codes.DECISION_RESOLVED_REWRITTEN, path, anchor, "removed", id=before.id))
            found.append(Violation.of(codes.DECISION_ID_VANISHED, path, anchor, id=before.id))
            continue
        if before.section == decisions.RESOLVED:
            if after.section != decisions.RESOLVED:
                found.append(Violation.of(codes.DECISION_RESOLVED_REWRITTEN, path, after.line, "reopened", id=after.id))
            elif after.content() != before.content():
                found.append(Violation.of(codes.DECISION_RESOLVED_REWRITTEN, path, after.line, "edited", id=after.id))
        elif before.is_answered and after.content() != before.content():
            found.append(Violation.of(codes.DECISION_RESOLVED_REWRITTEN, path, after.line,
                                      "answer_edited" if after.answer_in_place else "unanswered", id=after.id))
    found += [Violation.of(codes.DECISION_RESOLVED_REWRITTEN, path, anchor, "answer_removed", id=d.id)
              for d in old.pending if d.is_answered and d.id not in new_by_id]
    if author_email and author_email.lower() == agent_email.lower():
        # An answer is the agent's when it is new here: a verbatim move of a human's answer in place to
        # Resolved is not new, and neither is an answer a merge's other side brought.
        old_answered = {d.id: d.content() for d in old.settled}
        old_resolved = {d.id for d in old.resolved}
        for item in new.settled:
            known = item.id in old_resolved or old_answered.get(item.id) == item.content()
            if known or (brought or {}).get(item.id) == item.content():
                continue
            in_place = item.section == decisions.PENDING
            found.append(Violation.of(codes.DECISION_RESOLVED_BY_AGENT, path, item.line,
                                      "in_place" if in_place else variant, id=item.id, email=agent_email))
    return found
