"""The fast parsers of issue 31 find what the old ones found: the same sections, fields, line numbers and
problems, on generated texts (headings of every level, fences opened and left open, CRLF, a BOM, tabs, `#x`
lines that are no headings, indented continuation lines, blank lines of every kind) and on the synthetic
repositories' DECISIONS and LESSONS. The old parsers are kept in tests/memory/reference_parsers.py."""
from __future__ import annotations

from datetime import timedelta
from functools import cache

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from gitmem.memory import decisions, lessons
from gitmem.memory.decoding import decode, decode_file, decode_lines, decoding_problems
from gitmem.memory.fields import field_value, fields_keyed, fields_named, first_field_value, parse_fields
from gitmem.memory.sections import split_sections
from gitmem.memory.timestamps import Timestamp, parse_timestamp
from tests.memory import reference_parsers as old

PROPERTY = settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# Every kind of line the parsers tell apart, and the near misses of each.
HEADINGS = ["#", "##", "###", "####", "#######", "# DECISIONS", "# LESSONS", "## Pending", "## Resolved",
            "## Pending ", "##  Resolved", "### D-0001 · first", "### D-0002 - second", "### D-12 · short id",
            "### D-0003 ·", "## L-0001 · a lesson", "## L-0002 | another", "## L-x · bad id", "#### deeper",
            "###### six", "####### seven", "#x", "##x", "#\tx", "##\t", " ## indented", "\t## tab", "## ", "### "]
FENCES = ["```", "~~~", "```python", "````", "~~~~", " ```", "~~", "``", "```` ## x", "~~~ ### D-0009 · in"]
FIELDS = ["- Asked: 2026-11-01 10:00 UTC (cycle 3)", "- Answer: yes", "- Answered: 2026-11-02 10:00 UTC by A <a@b.c>",
          "- Happened: 2026-11-10 (cycle 1) — it broke", "- Confirmed: 2026-11-11 (cycle 2) — held",
          "- Confirmed: 2026-11-11 (cycle x) — bad", "- Status: open", "- Status: promoted R-07", "- Why: w",
          "- Change: c", "* Key: star", "- key: lower", "- Key:", "- Key:  ", "-  Key: v", "- K: v: w", "- Key:v",
          "- A Very Long Key Name That Goes On: v", "- Key: v\r", "- Key:\r", "- Recommendation: r"]
CONTINUATIONS = ["  more", "   deeper", "  ", "  \t", "\t tab", "  \x0b", "  \u00a0", "  \u2028", "  x\r", "  \r",
                 "    - Key: nested", " one space"]
OTHER = ["", " ", "\t", "\u3000", "\x0c", "text", "- [ ] item", "<!-- note -->", "·", "-", "*", "x\r", "\r",
         "\ufeffnot first"]
LINES = HEADINGS + FENCES + FIELDS + CONTINUATIONS + OTHER

lines_st = st.lists(st.sampled_from(LINES) | st.text(max_size=10).map(lambda t: t.replace("\n", "")), max_size=40)


@st.composite
def memory_texts(draw: st.DrawFn) -> str:
    """Lines joined into a file, with or without a final newline, CRLF line ends or a BOM."""
    text = "\n".join(draw(lines_st)) + draw(st.sampled_from(["", "\n", "\n\n"]))
    if draw(st.booleans()):
        text = text.replace("\n", "\r\n")
    if draw(st.booleans()):
        text = "\ufeff" + text
    return text


@PROPERTY
@given(lines_st, st.integers(1, 7), st.integers(1, 50), st.booleans())
@example(lines=["## a", "# top", "x", "## b", "```", "## c", "y"], level=2, first_line=1, in_fence=False)
@example(lines=["~~~", "# in", "```", "## also in", "~~~", "##", "  ", ""], level=2, first_line=3, in_fence=True)
def test_sections_are_the_old_parsers(lines: list[str], level: int, first_line: int, in_fence: bool) -> None:
    expected = old.split_sections(lines, level, first_line, in_fence=in_fence)
    assert split_sections(lines, level, first_line, in_fence=in_fence) == expected
    assert split_sections(tuple(lines), level, first_line, in_fence=in_fence) == expected


@PROPERTY
@given(lines_st, st.integers(0, 50))
@example(body=["- Key: a", "  b", "  ", "  c", "- Other:", "   d", "text", "  e", "* Star: s"], first_line=1)
@example(body=["- Key: a", "  \t", "  b", "- Next: n", "  \u00a0", "  c"], first_line=7)
def test_fields_are_the_old_parsers(body: list[str], first_line: int) -> None:
    assert parse_fields(body, first_line) == old.parse_fields(body, first_line)
    assert parse_fields(tuple(body), first_line) == old.parse_fields(body, first_line)


@PROPERTY
@given(lines_st, st.sampled_from(["Answered", "Key", "Confirmed", "Status", "K", "Other", "Star"]))
@example(body=["- Answered:x", "- Answered later: no", "* Answered: 1", "  more", "- Answered: 2"], key="Answered")
@example(body=["- Key: a", "  - Key: nested", "- Key:", "  b"], key="Key")
def test_one_field_read_alone_is_the_first_field_parse_fields_finds(body: list[str], key: str) -> None:
    """`first_field_value`, which the close asks of 4,000 decisions for their Answered line, is the value of the
    first field of that key as every reader parses it."""
    assert first_field_value(body, key) == field_value(parse_fields(body, 1), key)
    assert first_field_value(tuple(body), key) == field_value(old.parse_fields(body, 1), key)


@PROPERTY
@given(lines_st, st.sampled_from(["Happened", "Key", "Confirmed", "Status", "K", "Other", "Star"]), st.integers(1, 50))
@example(body=["- Confirmed:x", "- Confirmed later: no", "* Confirmed: 1", "  more", "- Confirmed: 2", "  ", "x"],
         key="Confirmed", first_line=7)
def test_the_fields_of_one_key_read_alone_are_those_parse_fields_finds(body: list[str], key: str,
                                                                       first_line: int) -> None:
    """`fields_keyed`, which the close's gates ask of 1,300 lessons for their Happened and Confirmed lines, finds
    the fields of that key, with their values and lines, as every reader parses them."""
    assert fields_keyed(body, first_line, key) == tuple(fields_named(parse_fields(body, first_line), key))
    assert fields_keyed(tuple(body), first_line, key) == tuple(fields_named(old.parse_fields(body, first_line), key))


@PROPERTY
@given(memory_texts())
def test_decisions_and_lessons_parse_as_the_old_parsers(text: str) -> None:
    assert old.decisions_doc(decisions.parse(text)) == old.decisions_parse(text)
    assert old.lessons_doc(lessons.parse(text)) == old.lessons_parse(text)


def test_every_whitespace_character_ends_a_value_as_strip_does() -> None:
    """A continuation line is one that `str.strip` leaves something of: every code point, one at a time."""
    for point in range(0x3100):
        line = "  " + chr(point)
        if chr(point) == "\n":
            continue
        body = ["- Key: v", line, "- Next: n"]
        assert parse_fields(body, 1) == old.parse_fields(body, 1), hex(point)


@PROPERTY
@given(st.binary(max_size=60) | memory_texts().map(lambda t: t.encode()), st.booleans())
def test_a_file_decoded_once_finds_what_decode_finds(data: bytes, bom: bool) -> None:
    data = b"\xef\xbb\xbf" + data if bom else data
    whole = decode(data)
    assert decode_file(data) == (whole.text, whole.problems)
    assert decoding_problems(data) == whole.problems


@PROPERTY
@given(st.lists(memory_texts(), min_size=2, max_size=4))
def test_parses_in_turn_find_what_each_parse_alone_finds(texts: list[str]) -> None:
    """An entry the previous parse found unchanged is handed over as the same object: each text still
    parses as it does alone, whatever was parsed before it."""
    for text in texts:
        assert old.decisions_doc(decisions.parse(text)) == old.decisions_parse(text)
        assert old.lessons_doc(lessons.parse(text)) == old.lessons_parse(text)


def _grown(text: str, step: int) -> str:
    """`text` with a confirmation added to every `step`th lesson: the lessons after it move down."""
    lines = decode_lines(text)
    out: list[str] = []
    seen = 0
    for line in lines:
        if line.startswith("- Status:"):
            seen += 1
            if seen % step == 0:
                out.append("- Confirmed: 2099-01-01 (cycle 999999) — again")
        out.append(line)
    return "\n".join(out)


@cache
def synthetic_texts(scale: float) -> tuple[str, str]:
    """The DECISIONS and LESSONS the synthetic repository of `scale` holds at its last commit."""
    from tests.support.synth import HUMAN, _templates
    from tests.support.synth.plan import make_plan
    from tests.support.synth.state import decisions_text, lessons_text, make_state

    plan = make_plan(scale, 0)
    state = make_state(plan, _templates(), HUMAN)
    return (decisions_text(state, len(plan.entries), len(plan.chunks)).decode(),
            lessons_text(state, len(plan.entries)).decode())


@pytest.mark.parametrize("scale", [1.0, 10.0])
def test_the_synthetic_repositories_parse_as_with_the_old_parsers(scale: float) -> None:
    decisions_text, lessons_text = synthetic_texts(scale)
    assert old.decisions_doc(decisions.parse(decisions_text)) == old.decisions_parse(decisions_text)
    expected = old.lessons_parse(lessons_text)
    assert old.lessons_doc(lessons.parse(lessons_text)) == expected
    # Parsed again after a change that moves most lessons down: the moved ones are read again, not handed over.
    grown = _grown(lessons_text, 7)
    assert old.lessons_doc(lessons.parse(grown)) == old.lessons_parse(grown)
    assert old.lessons_doc(lessons.parse(lessons_text)) == expected
    for text in (decisions_text, lessons_text):
        crlf = "\ufeff" + text.replace("\n", "\r\n")
        assert old.decisions_doc(decisions.parse(crlf)) == old.decisions_parse(crlf)
        assert old.lessons_doc(lessons.parse(crlf)) == old.lessons_parse(crlf)


def test_a_field_a_section_and_a_timestamp_built_whole_are_the_dataclasses_own() -> None:
    """The parsers set a Field's, a Section's and a Timestamp's attributes whole (`records.built_whole`): what they
    build is what the dataclass's `__init__` builds, for equality, hashing, ordering, printing and frozenness."""
    import dataclasses

    from gitmem.memory.fields import Field
    from gitmem.memory.sections import Section

    field, = parse_fields(["- Key: a", "  b"], 3)
    assert (field, hash(field), repr(field)) == (Field("Key", "a\nb", 3, 4), hash(Field("Key", "a\nb", 3, 4)),
                                                 "Field(key='Key', value='a\\nb', line=3, end=4)")
    _, (section,) = split_sections(["## t", "x", ""], 2)
    expected = Section("t", 1, 2, ("x", ""))
    assert (section, hash(section), repr(section)) == (expected, hash(expected),
                                                       "Section(title='t', line=1, end=2, body=('x', ''))")
    with pytest.raises(dataclasses.FrozenInstanceError):
        field.value = "changed"  # type: ignore[misc]
    assert dataclasses.replace(field, value="c") == Field("Key", "c", 3, 4)
    read = parse_timestamp("2026-11-02 10:00 +01:00")
    assert read is not None
    made = Timestamp(read.moment, "+01:00")
    assert (read, hash(read), repr(read), str(read)) == (made, hash(made), repr(made), "2026-11-02 10:00 +01:00")
    assert read < Timestamp(read.moment + timedelta(minutes=1), "+01:00") and not read < made
    with pytest.raises(dataclasses.FrozenInstanceError):
        read.label = "UTC"  # type: ignore[misc]


def test_every_entry_built_whole_holds_every_field_of_its_class() -> None:
    """Decisions, lessons, their fields and events are built with `built_whole`: each holds every field its
    dataclass declares, and equals, hashes and prints as the same values given to the class itself."""
    import dataclasses

    decisions_text, lessons_text = synthetic_texts(1.0)
    found: list[object] = [*decisions.parse(decisions_text).all]
    for lesson in lessons.parse(lessons_text).lessons:
        found += [lesson, *lesson.fields, *(event for _, event in lesson.confirmations if event is not None)]
        found += [lesson.happened] if lesson.happened is not None else []
    assert {type(item).__name__ for item in found} == {"Decision", "Lesson", "Field", "Event"}
    for item in found:
        again = dataclasses.replace(item)  # type: ignore[type-var]
        assert (again, hash(again), repr(again)) == (item, hash(item), repr(item))
