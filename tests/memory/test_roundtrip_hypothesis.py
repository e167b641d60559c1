"""Property: for random valid documents of each file, render -> parse -> render is the identity,
and parsing gives back exactly the entries that were generated."""
from __future__ import annotations

from datetime import UTC, date, datetime, timedelta, timezone

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gitmem.memory import decisions, lessons, log, now, rules
from gitmem.memory.lines import strip_trailing_blank
from gitmem.memory.timestamps import Timestamp

PROPERTY = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# Printable text without line breaks or control characters; the model trims values and titles.
_ALPHABET = st.characters(whitelist_categories=("L", "N", "P", "S", "Zs"), whitelist_characters=" ·|-—()#*:`<>")
_WORDS = st.text(_ALPHABET, min_size=1, max_size=24).map(str.strip).filter(bool)


@st.composite
def timestamps(draw: st.DrawFn) -> Timestamp:
    moment = draw(st.datetimes(min_value=datetime(2000, 1, 1), max_value=datetime(2099, 12, 31)))
    moment = moment.replace(second=0, microsecond=0)
    if draw(st.booleans()):
        return Timestamp(moment.replace(tzinfo=UTC), "UTC")
    minutes = draw(st.integers(min_value=-(23 * 60 + 59), max_value=23 * 60 + 59))
    sign = "-" if minutes < 0 else "+"
    label = f"{sign}{abs(minutes) // 60:02d}:{abs(minutes) % 60:02d}"
    return Timestamp(moment.replace(tzinfo=timezone(timedelta(minutes=minutes))), label)


# A field value: a first line (possibly empty when continuation lines follow) and continuation lines.
@st.composite
def values(draw: st.DrawFn) -> str:
    rest = draw(st.lists(_WORDS, max_size=3))
    first = draw(_WORDS) if not rest or draw(st.booleans()) else ""
    return "\n".join([first, *rest])


def ids(prefix: str, digits: int) -> st.SearchStrategy[str]:
    return st.integers(min_value=1, max_value=10 ** (digits + 1) - 1).map(lambda n: f"{prefix}{n:0{digits}d}")


def unique_ids(prefix: str, digits: int, max_size: int) -> st.SearchStrategy[list[str]]:
    return st.lists(ids(prefix, digits), max_size=max_size, unique=True)


def body(parsed: object) -> tuple[str, ...]:
    """A parsed entry's body without the blank lines that separate it from the next entry."""
    return tuple(strip_trailing_blank(parsed.body))  # type: ignore[attr-defined]


def fields_of(parsed: object) -> list[tuple[str, str]]:
    return [(f.key, f.value) for f in parsed.fields]  # type: ignore[attr-defined]


# -- NOW ----------------------------------------------------------------------------------------

@st.composite
def now_docs(draw: st.DrawFn) -> tuple[now.NowDoc, list[tuple[now.NowBlock, list[tuple[str, str]]]]]:
    made = []
    for _ in range(draw(st.integers(0, 5))):
        did, human, next_ = draw(values()), draw(values()), draw(values())
        plan = draw(st.booleans())
        block = now.make_block(draw(timestamps()), did=did, human=human, next=next_,
                               cycle=None if plan else draw(st.integers(0, 10 ** 6)),
                               plan_for=draw(st.dates(date(2000, 1, 1), date(2099, 12, 31))) if plan else None)
        made.append((block, [("Did", did), ("Human", human), ("Next", next_)]))
    preamble = ("# NOW", "<!-- guidance -->") if draw(st.booleans()) else ("# NOW",)
    return now.NowDoc(preamble, tuple(block for block, _ in made)), made


@PROPERTY
@given(now_docs())
def test_now_round_trip(generated: tuple[now.NowDoc, list]) -> None:
    doc, made = generated
    text = now.render(doc)
    parsed = now.parse(text)
    assert parsed.problems == ()
    assert now.render(parsed) == text
    assert tuple(strip_trailing_blank(parsed.preamble)) == doc.preamble
    assert len(parsed.blocks) == len(made)
    for got, (block, pairs) in zip(parsed.blocks, made, strict=True):
        assert (got.when, got.cycle, got.plan_for, body(got)) == (block.when, block.cycle, block.plan_for, block.body)
        assert fields_of(got) == pairs
        assert text.split("\n")[got.line - 1] == block.heading()


# -- LOG ----------------------------------------------------------------------------------------

@st.composite
def log_docs(draw: st.DrawFn) -> tuple[log.LogDoc, list[tuple[log.LogEntry, list[tuple[str, str]]]]]:
    made = []
    for _ in range(draw(st.integers(0, 5))):
        close = draw(st.booleans())
        keys = draw(st.lists(st.sampled_from(["Cycles", "Done", "Waiting", "Problems"] if close else log.FIELD_ORDER),
                             unique=True, max_size=5))
        if not close:
            keys = [k for k in log.FIELD_ORDER if k in keys]        # make_entry orders canonical keys
        pairs = [(k, draw(values())) for k in keys]
        entry = log.make_entry(draw(timestamps()), cycle=None if close else draw(st.integers(0, 10 ** 6)),
                               outcome=None if close else draw(st.sampled_from(log.OUTCOMES)), fields=dict(pairs))
        made.append((entry, pairs))
    return log.LogDoc(("# LOG",), tuple(entry for entry, _ in made)), made


@PROPERTY
@given(log_docs())
def test_log_round_trip(generated: tuple[log.LogDoc, list]) -> None:
    doc, made = generated
    text = log.render(doc)
    parsed = log.parse(text)
    assert parsed.problems == ()
    assert log.render(parsed) == text
    assert len(parsed.entries) == len(made)
    for got, (entry, pairs) in zip(parsed.entries, made, strict=True):
        assert (got.when, got.cycle, got.outcome, body(got)) == (entry.when, entry.cycle, entry.outcome, entry.body)
        assert fields_of(got) == pairs
    # The tail reader sees the same entries as the full parse.
    if made:
        assert log.tail(text, 2).entries == parsed.entries[-2:]


@PROPERTY
@given(log_docs(), log_docs())
def test_log_append_keeps_prefix(first: tuple[log.LogDoc, list], second: tuple[log.LogDoc, list]) -> None:
    text = log.render(first[0])
    for entry, _ in second[1]:
        grown = log.append_entry(text, entry)
        assert grown.startswith(text)
        text = grown
    assert log.render(log.parse(text)) == text
    assert [e.when for e in log.parse(text).entries] == [e.when for e, _ in first[1] + second[1]]


# -- DECISIONS ----------------------------------------------------------------------------------

@st.composite
def decision_docs(draw: st.DrawFn) -> tuple[decisions.DecisionsDoc, list[tuple[decisions.Decision, list]]]:
    made = []
    for number in draw(unique_ids("D-", 4, 6)):
        resolved = draw(st.booleans())
        context, options, recommendation = (draw(st.none() | values()), draw(st.none() | values()), draw(values()))
        item = decisions.make_decision(number, draw(_WORDS), asked=draw(timestamps()),
                                       cycle=draw(st.none() | st.integers(0, 10 ** 6)), context=context,
                                       options=options, recommendation=recommendation)
        asked = f"{item.asked}" + (f" (cycle {item.asked_cycle})" if item.asked_cycle is not None else "")
        pairs = [("Asked", asked), *[(k, v) for k, v in (("Context", context), ("Options", options)) if v is not None],
                 ("Recommendation", recommendation)]
        if resolved:
            answer, when = draw(values()), draw(timestamps())
            doc = decisions.move_to_resolved(decisions.DecisionsDoc((), (item,), (), {}), item.id, answer=answer,
                                    answered=when, name="Ada Lovelace", email="ada@example.org")
            item = doc.resolved[0]
            pairs += [("Answer", answer), ("Answered", f"{when} by Ada Lovelace <ada@example.org>")]
        made.append((item, pairs))
    doc = decisions.DecisionsDoc(("# DECISIONS",), tuple(i for i, _ in made if i.section == decisions.PENDING),
                                 tuple(i for i, _ in made if i.section == decisions.RESOLVED), {})
    return doc, [m for m in made if m[0].section == decisions.PENDING] + [m for m in made if m[0].section != "Pending"]


@PROPERTY
@given(decision_docs())
def test_decisions_round_trip(generated: tuple[decisions.DecisionsDoc, list]) -> None:
    doc, made = generated
    text = decisions.render(doc)
    parsed = decisions.parse(text)
    assert parsed.problems == ()
    assert decisions.render(parsed) == text
    assert len(parsed.all) == len(made)
    for got, (item, pairs) in zip(parsed.all, made, strict=True):
        assert (got.id, got.title, got.section, body(got)) == (item.id, item.title, item.section, item.body)
        assert fields_of(got) == pairs
        assert got.asked == item.asked and got.answered == item.answered


# -- LESSONS ------------------------------------------------------------------------------------

@st.composite
def lesson_docs(draw: st.DrawFn) -> tuple[lessons.LessonsDoc, list[tuple[lessons.Lesson, list]]]:
    made = []
    for number in draw(unique_ids("L-", 4, 5)):
        day, cycle = draw(st.dates(date(2000, 1, 1), date(2099, 12, 31))), draw(st.integers(0, 10 ** 5))
        happened, why, change = draw(values()), draw(values()), draw(values())
        rule, supersedes = draw(st.none() | _WORDS), draw(st.none() | ids("R-", 2))
        item = lessons.make_lesson(number, draw(_WORDS), day=day, cycle=cycle, happened=happened, why=why,
                                   change=change, rule=rule, supersedes=supersedes)
        doc = lessons.LessonsDoc((), (item,))
        confirmed = []
        for later in draw(st.lists(st.integers(cycle + 1, cycle + 1000), max_size=3, unique=True)):
            evidence = draw(values())
            doc = lessons.confirm(doc, number, day=day, cycle=later, evidence=evidence)
            confirmed.append(("Confirmed", lessons.event_text(day, later, evidence)))
        status = draw(st.sampled_from(["open", None]) | ids("R-", 2).map(lambda r: f"promoted {r}")
                      | _WORDS.map(lambda why: f"retired — {why}"))
        if status is not None:
            doc = lessons.set_status(doc, number, status)
        pairs = [("Happened", lessons.event_text(day, cycle, happened)), ("Why", why), ("Change", change),
                 *([("Rule", rule)] if rule else []), *([("Supersedes", supersedes)] if supersedes else []),
                 *confirmed, ("Status", status or "open")]
        made.append((doc.lessons[0], pairs))
    return lessons.LessonsDoc(("# LESSONS",), tuple(item for item, _ in made)), made


@PROPERTY
@given(lesson_docs())
def test_lessons_round_trip(generated: tuple[lessons.LessonsDoc, list]) -> None:
    doc, made = generated
    text = lessons.render(doc)
    parsed = lessons.parse(text)
    assert parsed.problems == ()
    assert lessons.render(parsed) == text
    assert len(parsed.lessons) == len(made)
    for got, (item, pairs) in zip(parsed.lessons, made, strict=True):
        assert (got.id, got.title, body(got)) == (item.id, item.title, item.body)
        assert fields_of(got) == pairs
        assert got.happened is not None
        assert got.status == dict(pairs)["Status"] and lessons.valid_status(got.status)
        assert [e.cycle for _, e in got.confirmations if e] == [e.cycle for _, e in item.confirmations if e]


# -- RULES --------------------------------------------------------------------------------------

_RULE_TEXT = _WORDS.filter(lambda t: not t.startswith("<!--"))


@st.composite
def provenances(draw: st.DrawFn, section: str) -> str:
    if section == rules.PROVEN:
        if draw(st.booleans()):
            return "human"
        cycles = draw(st.lists(st.integers(0, 10 ** 5), min_size=1, max_size=4))
        word = "cycles" if len(cycles) > 1 or draw(st.booleans()) else "cycle"
        return f"from {draw(ids('L-', 4))}; {word} {', '.join(map(str, cycles))}"
    day = draw(st.dates(date(2000, 1, 1), date(2099, 12, 31))).isoformat()
    if draw(st.booleans()):
        return f"superseded by {draw(ids('R-', 2))} on {day}"
    return f"retired on {day}: {draw(_WORDS.filter(lambda w: '(' not in w and ')' not in w))}"


@st.composite
def rule_docs(draw: st.DrawFn) -> rules.RulesDoc:
    numbers = draw(unique_ids("R-", 2, 8))
    split = draw(st.integers(0, len(numbers)))
    made = {}
    for section, chunk in ((rules.PROVEN, numbers[:split]), (rules.RETIRED, numbers[split:])):
        made[section] = tuple(rules.Rule(n, draw(_RULE_TEXT).replace("(", "[").replace(")", "]")
                                         if draw(st.booleans()) else draw(_RULE_TEXT) + ".",
                                         draw(provenances(section)), section) for n in chunk)
    preamble = ["# RULES", "", "## Who I am", f"- Name: {draw(_WORDS)}"]
    comments = {rules.PROVEN: ("<!-- one line each -->",) if draw(st.booleans()) else (), rules.RETIRED: ()}
    return rules.RulesDoc(tuple(preamble), made[rules.PROVEN], made[rules.RETIRED], {}, 0, (), comments)


@PROPERTY
@given(rule_docs())
def test_rules_round_trip(doc: rules.RulesDoc) -> None:
    text = rules.render(doc)
    parsed = rules.parse(text)
    assert parsed.problems == ()
    assert rules.render(parsed) == text
    key = [(r.id, r.text, r.provenance, r.section) for r in doc.all]
    assert [(r.id, r.text, r.provenance, r.section) for r in parsed.all] == key
    lines = text.split("\n")
    for item in parsed.all:
        assert lines[item.line - 1] == item.render()
    assert parsed.line_count == len(lines) - 1
